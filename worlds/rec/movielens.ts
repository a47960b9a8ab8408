/**
 * MovieLens-1M's own files, read from (and written to) a folder:
 *
 *   ratings.dat   UserID::MovieID::Rating::Timestamp   (Rating 1..5, Timestamp in seconds)
 *   movies.dat    MovieID::Title::Genres               (Genres pipe-separated, from its 18)
 *
 * The files are ISO-8859-1 (titles such as "Misérables"), so they are read as latin1. users.dat
 * (demographics) is not needed and not read. Every bad line is a DataError naming the file and
 * the line; a rating of a movie movies.dat does not list is one too.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { clip, DataError } from "../core/errors.js";
import { MOVIELENS_GENRES, type Movie, type Rating, type RecDataset } from "./dataset.js";

export const RATINGS_FILE = "ratings.dat";
export const MOVIES_FILE = "movies.dat";

const GENRES: ReadonlySet<string> = new Set(MOVIELENS_GENRES);
const RATING_LINE = /^(\d+)::(\d+)::(\d+)::(\d+)$/;
const MOVIE_LINE = /^(\d+)::(.+)::([^:]+)$/;

/** The folder's ratings.dat and movies.dat; a DataError for a missing file or a bad line. */
export function readMovieLens(dir: string): RecDataset {
  const moviesPath = join(dir, MOVIES_FILE);
  const ratingsPath = join(dir, RATINGS_FILE);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new DataError(dir, {}, "is not a folder (expected MovieLens-1M's folder, with ratings.dat and movies.dat)");
  const movies = parseMovies(readText(moviesPath), moviesPath);
  const ratings = parseRatings(readText(ratingsPath), ratingsPath, new Set(movies.map((m) => m.id)));
  return { source: dir, movies, ratings };
}

function readText(path: string): string {
  try {
    return readFileSync(path, "latin1");
  } catch (err) {
    throw new DataError(path, {}, (err as NodeJS.ErrnoException).code === "ENOENT" ? "is missing (a MovieLens-1M folder has ratings.dat and movies.dat)" : (err as Error).message);
  }
}

/** The lines of a file with their 1-based numbers; a last empty line (the final newline) is no line. */
function* linesOf(text: string): Generator<[string, number]> {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) yield [lines[i]!.replace(/\r$/, ""), i + 1];
}

export function parseMovies(text: string, file: string): Movie[] {
  const out: Movie[] = [];
  const seen = new Set<number>();
  for (const [line, n] of linesOf(text)) {
    const m = MOVIE_LINE.exec(line);
    if (!m) throw new DataError(file, { line: n }, `expected MovieID::Title::Genres, got "${clip(line)}"`);
    const id = Number(m[1]);
    if (seen.has(id)) throw new DataError(file, { line: n }, `MovieID ${id} is listed twice`);
    seen.add(id);
    const genres = m[3]!.split("|");
    const unknown = genres.find((g) => !GENRES.has(g));
    if (unknown !== undefined) throw new DataError(file, { line: n }, `unknown genre "${clip(unknown)}" (MovieLens-1M's genres: ${MOVIELENS_GENRES.join(", ")})`);
    out.push({ id, title: m[2]!, genres });
  }
  if (out.length === 0) throw new DataError(file, {}, "has no movies");
  return out;
}

export function parseRatings(text: string, file: string, movieIds: ReadonlySet<number>): Rating[] {
  const out: Rating[] = [];
  for (const [line, n] of linesOf(text)) {
    const m = RATING_LINE.exec(line);
    if (!m) throw new DataError(file, { line: n }, `expected UserID::MovieID::Rating::Timestamp, got "${clip(line)}"`);
    const [user, item, rating, timestamp] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    if (rating < 1 || rating > 5) throw new DataError(file, { line: n }, `Rating must be 1 to 5 stars, got ${rating}`);
    if (!Number.isSafeInteger(timestamp)) throw new DataError(file, { line: n }, `Timestamp ${m[4]} is out of range`);
    if (!movieIds.has(item)) throw new DataError(file, { line: n }, `MovieID ${item} is not in ${MOVIES_FILE}`);
    out.push({ user, item, rating, timestamp });
  }
  if (out.length === 0) throw new DataError(file, {}, "has no ratings");
  return out;
}

/** The dataset as MovieLens-1M's two files (the generator writes its users so; titles must be latin1). */
export function serializeMovieLens(ds: RecDataset): { readonly movies: string; readonly ratings: string } {
  return {
    movies: ds.movies.map((m) => `${m.id}::${m.title}::${m.genres.join("|")}\n`).join(""),
    ratings: ds.ratings.map((r) => `${r.user}::${r.item}::${r.rating}::${r.timestamp}\n`).join(""),
  };
}

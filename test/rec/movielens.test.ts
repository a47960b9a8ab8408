import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readMovieLens, serializeMovieLens } from "../../worlds/rec/index.js";
import { errorOf } from "../data-error.js";

const MOVIES = "1::Toy Story (1995)::Animation|Children's|Comedy\n2::Misérables, Les (1995)::Drama|Musical\n";
const RATINGS = "1::1::5::978300760\n1::2::3::978302109\n2::1::4::978298413\n";

function folder(movies: string | Buffer | null, ratings: string | Buffer | null): string {
  const dir = mkdtempSync(join(tmpdir(), "ml-"));
  if (movies !== null) writeFileSync(join(dir, "movies.dat"), typeof movies === "string" ? Buffer.from(movies, "latin1") : movies);
  if (ratings !== null) writeFileSync(join(dir, "ratings.dat"), ratings);
  return dir;
}

describe("MovieLens-1M's files", () => {
  it("reads ratings.dat and movies.dat, latin1 titles included, in file order", () => {
    const ds = readMovieLens(folder(MOVIES, RATINGS));
    expect(ds.movies).toEqual([
      { id: 1, title: "Toy Story (1995)", genres: ["Animation", "Children's", "Comedy"] },
      { id: 2, title: "Misérables, Les (1995)", genres: ["Drama", "Musical"] },
    ]);
    expect(ds.ratings).toEqual([
      { user: 1, item: 1, rating: 5, timestamp: 978300760 },
      { user: 1, item: 2, rating: 3, timestamp: 978302109 },
      { user: 2, item: 1, rating: 4, timestamp: 978298413 },
    ]);
    // What it writes reads back the same (the generator's path).
    const again = serializeMovieLens(ds);
    expect(again.ratings).toBe(RATINGS);
    expect(again.movies).toBe(MOVIES);
  });

  it("accepts CRLF line ends", () => {
    expect(readMovieLens(folder(MOVIES.replace(/\n/g, "\r\n"), RATINGS.replace(/\n/g, "\r\n"))).ratings).toHaveLength(3);
  });

  it("names the file and line of a bad rating", () => {
    const cases: [string, RegExp][] = [
      ["1::1::5::978300760\n1::2::3\n", /ratings\.dat:2: expected UserID::MovieID::Rating::Timestamp, got "1::2::3"/],
      ["1::1::6::978300760\n", /ratings\.dat:1: Rating must be 1 to 5 stars, got 6/],
      ["1::1::5::978300760\n\n", /ratings\.dat:2: expected/],
      ["1::1::5::978300760\n3::99::4::978300761\n", /ratings\.dat:2: MovieID 99 is not in movies\.dat/],
      ["", /ratings\.dat: has no ratings/],
    ];
    for (const [ratings, re] of cases) {
      const err = errorOf(() => readMovieLens(folder(MOVIES, ratings)));
      expect(err.message).toMatch(re);
    }
  });

  it("names the file and line of a bad movie", () => {
    const cases: [string, RegExp][] = [
      ["1::Toy Story (1995)\n", /movies\.dat:1: expected MovieID::Title::Genres/],
      ["1::Toy Story (1995)::Comedy\n1::Again (1996)::Drama\n", /movies\.dat:2: MovieID 1 is listed twice/],
      ["1::Toy Story (1995)::Comedy|Cartoon\n", /movies\.dat:1: unknown genre "Cartoon"/],
    ];
    for (const [movies, re] of cases) expect(errorOf(() => readMovieLens(folder(movies, RATINGS))).message).toMatch(re);
  });

  it("says which file is missing, and that a file is no folder", () => {
    expect(errorOf(() => readMovieLens(folder(MOVIES, null))).message).toMatch(/ratings\.dat: is missing/);
    expect(errorOf(() => readMovieLens(folder(null, RATINGS))).message).toMatch(/movies\.dat: is missing/);
    const dir = folder(MOVIES, RATINGS);
    expect(errorOf(() => readMovieLens(join(dir, "ratings.dat"))).message).toMatch(/is not a folder/);
  });
});

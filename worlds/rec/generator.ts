/**
 * Synthetic users with latent preferences (preferences.ts), seeded: the same options and seed
 * give the same files. Genres get random directions; an item's vector lies near the mean of its
 * genres' (1 to 3 of MovieLens's 18), a user's near one or two favourite genres'. Each user then
 * watches a sequence of distinct items, each drawn by the choice rule of preferences.ts, one to
 * sixty minutes apart; the rating follows the taste (3 + 2 tanh(beta/2 <user, item>), rounded).
 * Output: MovieLens-1M's own files and the latent truth, so every reader and split is the real one.
 */
import { z } from "zod";
import { Rng } from "../core/rng.js";
import { gaussian } from "./gaussian.js";
import { MOVIELENS_GENRES, type Movie, type Rating, type RecDataset } from "./dataset.js";
import { dot, type Preferences } from "./preferences.js";

export const RecGeneratorOptionsSchema = z
  .object({
    users: z.number().int().min(1).max(1_000_000),
    items: z.number().int().min(20).max(100_000).default(400),
    /** Latent dimensions. */
    dim: z.number().int().min(2).max(256).default(8),
    /** Mean interactions per user (uniform from 5 to 2 * mean - 5). */
    meanLength: z.number().int().min(5).max(10_000).default(30),
    /** How sharply users choose (the utility's scale). */
    beta: z.number().min(0).max(100).default(6),
    /** How far taste drifts toward the last item. */
    gamma: z.number().min(0).max(10).default(0.6),
    /** Spread of the items' popularity (standard deviation of their bias). */
    popularity: z.number().min(0).max(10).default(1),
  })
  .strict()
  .refine((o) => 2 * o.meanLength - 5 <= o.items, { message: "users would run out of items: need 2 * meanLength - 5 <= items" });

export type RecGeneratorOptions = z.input<typeof RecGeneratorOptionsSchema>;

export interface GeneratedRec {
  readonly dataset: RecDataset;
  readonly preferences: Preferences;
}

/** First timestamp: MovieLens-1M's first (2000-04-25). */
const EPOCH = 956_703_932;

function unit(v: number[]): number[] {
  const n = Math.sqrt(dot(v, v)) || 1;
  return v.map((x) => x / n);
}

function near(rng: Rng, centres: readonly (readonly number[])[], noise: number): number[] {
  const dim = centres[0]!.length;
  const v = new Array<number>(dim).fill(0);
  for (const c of centres) for (let d = 0; d < dim; d++) v[d]! += c[d]! / centres.length;
  for (let d = 0; d < dim; d++) v[d]! += noise * gaussian(rng);
  return unit(v);
}

export function generateRec(options: RecGeneratorOptions, seed: number, onProgress?: (users: number) => void): GeneratedRec {
  const o = RecGeneratorOptionsSchema.parse(options);
  const rng = Rng.seeded(`rec:${seed}`);
  const genreVectors = MOVIELENS_GENRES.map(() => unit(Array.from({ length: o.dim }, () => gaussian(rng))));
  const movies: Movie[] = [];
  const items: Preferences["items"] = [];
  for (let id = 1; id <= o.items; id++) {
    const genres = rng.sample(MOVIELENS_GENRES.map((_, g) => g), rng.range(1, 3)).sort((a, b) => a - b);
    movies.push({ id, title: `Film ${id} (${1930 + rng.int(71)})`, genres: genres.map((g) => MOVIELENS_GENRES[g]!) });
    items.push({ id, vector: near(rng, genres.map((g) => genreVectors[g]!), 0.35), bias: o.popularity * gaussian(rng) });
  }
  const users: Preferences["users"] = [];
  const ratings: Rating[] = [];
  // The utility split as beta * (<user, item> + gamma * <last, item>) + bias: the first term is
  // fixed per user, the second per step (the same utility, computed an item-vector pass cheaper).
  const V = Float64Array.from(items.flatMap((it) => it.vector)); // [items, dim]
  const dots = (v: readonly number[], out: Float64Array) => {
    for (let i = 0; i < o.items; i++) {
      let s = 0;
      for (let d = 0; d < o.dim; d++) s += v[d]! * V[i * o.dim + d]!;
      out[i] = s;
    }
  };
  const base = new Float64Array(o.items);
  const drift = new Float64Array(o.items);
  const weights = new Float64Array(o.items);
  for (let id = 1; id <= o.users; id++) {
    const favourites = rng.sample(MOVIELENS_GENRES.map((_, g) => g), rng.range(1, 2));
    const taste = near(rng, favourites.map((g) => genreVectors[g]!), 0.35);
    users.push({ id, vector: taste });
    dots(taste, base);
    drift.fill(0);
    const length = rng.range(5, 2 * o.meanLength - 5);
    const seen = new Uint8Array(o.items);
    let time = EPOCH + rng.int(3 * 365 * 86_400);
    for (let t = 0; t < length; t++) {
      let max = -Infinity;
      for (let i = 0; i < o.items; i++) {
        weights[i] = seen[i] ? -Infinity : o.beta * (base[i]! + o.gamma * drift[i]!) + items[i]!.bias;
        if (weights[i]! > max) max = weights[i]!;
      }
      let total = 0;
      for (let i = 0; i < o.items; i++) total += weights[i] = seen[i] ? 0 : Math.exp(weights[i]! - max);
      let r = rng.next() * total;
      let pick = -1;
      for (let i = 0; i < o.items; i++) {
        if (seen[i]) continue;
        pick = i;
        r -= weights[i]!;
        if (r < 0) break;
      }
      seen[pick] = 1;
      dots(items[pick]!.vector, drift);
      time += 60 + rng.int(3541);
      const stars = Math.min(5, Math.max(1, Math.round(3 + 2 * Math.tanh((o.beta / 2) * base[pick]!))));
      ratings.push({ user: id, item: pick + 1, rating: stars, timestamp: time });
    }
    if (id % 256 === 0 || id === o.users) onProgress?.(id);
  }
  return {
    dataset: { source: `generated:${seed}`, movies, ratings },
    preferences: { dim: o.dim, beta: o.beta, gamma: o.gamma, items, users },
  };
}

/**
 * A recommendation dataset as its files give it: movies (the item metadata) and ratings (who
 * interacted with what, when), with the files' own ids. MovieLens-1M's reader (movielens.ts) and
 * the generator (generator.ts) both produce one; the split (split.ts) turns it into dense indices.
 */
export interface Movie {
  /** The file's MovieID. */
  readonly id: number;
  /** "Toy Story (1995)": MovieLens puts the year in the title. */
  readonly title: string;
  readonly genres: readonly string[];
}

export interface Rating {
  /** The file's UserID. */
  readonly user: number;
  /** The file's MovieID. */
  readonly item: number;
  /** 1..5 stars; every rating counts as an interaction (implicit feedback, RecBole's default for ML-1M). */
  readonly rating: number;
  /** Seconds since the epoch. */
  readonly timestamp: number;
}

export interface RecDataset {
  /** Where it came from (a folder, or "generated:SEED"), for reports. */
  readonly source: string;
  readonly movies: readonly Movie[];
  /** In file order: the split's tie rule (equal timestamps keep it) depends on it. */
  readonly ratings: readonly Rating[];
}

/** MovieLens-1M's 18 genres, in its README's order. */
export const MOVIELENS_GENRES = [
  "Action",
  "Adventure",
  "Animation",
  "Children's",
  "Comedy",
  "Crime",
  "Documentary",
  "Drama",
  "Fantasy",
  "Film-Noir",
  "Horror",
  "Musical",
  "Mystery",
  "Romance",
  "Sci-Fi",
  "Thriller",
  "War",
  "Western",
] as const;

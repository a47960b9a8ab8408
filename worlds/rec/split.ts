/**
 * Leave-last-out splits as RecBole builds them (`eval_args: {order: TO, split: {LS:
 * valid_and_test}, group_by: user}`; recbole/data/dataset/dataset.py `build`, `leave_one_out`):
 *
 *   1. every interaction is sorted by timestamp with a stable sort (numpy's argsort,
 *      kind="stable"): equal timestamps keep the files' order;
 *   2. interactions are grouped by user, each user's in that order;
 *   3. a user's last interaction is the test item and the one before it the valid item; the rest
 *      is training. A user with two interactions has one for training and the test item (no valid
 *      item); a user with one has it for training only (RecBole: min(2, n - 1) are left out).
 *
 * Items get dense indices 0..I-1 in order of first appearance in the ratings file (the items ever
 * rated: the candidates of the full ranking, as RecBole ranks the items of its interaction file);
 * movies that nobody rated stay out. Users keep their order of first appearance after the sort.
 *
 * Evaluation as RecBole's full-sort evaluation: in the valid phase a user's training items are
 * the history (masked from the ranking) and the valid item the target; in the test phase the
 * history is training and valid items, the target the test item.
 */
import type { Movie, RecDataset } from "./dataset.js";

export interface UserSequence {
  /** The file's UserID. */
  readonly user: number;
  /** Training items (dense indices), oldest first. */
  readonly train: readonly number[];
  readonly valid?: number;
  readonly test?: number;
}

export interface RecSplit {
  readonly source: string;
  /** Dense index -> movie. */
  readonly items: readonly Movie[];
  /** The file's MovieID -> dense index. */
  readonly itemIndex: ReadonlyMap<number, number>;
  readonly users: readonly UserSequence[];
}

export type Phase = "valid" | "test";

/** One held-out next item: what a recommender sees (the history) and what it should rank first. */
export interface RecCase {
  /** Index into `split.users`. */
  readonly user: number;
  /** Items seen before the target, oldest first (masked from the ranking). */
  readonly history: readonly number[];
  readonly target: number;
}

export function leaveLastOut(ds: RecDataset): RecSplit {
  const movies = new Map(ds.movies.map((m) => [m.id, m]));
  const itemIndex = new Map<number, number>();
  const items: Movie[] = [];
  for (const r of ds.ratings) {
    if (itemIndex.has(r.item)) continue;
    const movie = movies.get(r.item);
    if (!movie) throw new Error(`${ds.source}: a rating names MovieID ${r.item}, which the movies do not list`);
    itemIndex.set(r.item, items.length);
    items.push(movie);
  }
  // Array.prototype.sort is stable (ES2019): ties keep file order, as numpy's stable argsort does.
  const sorted = ds.ratings.map((r, i) => i).sort((a, b) => ds.ratings[a]!.timestamp - ds.ratings[b]!.timestamp);
  const byUser = new Map<number, number[]>();
  for (const i of sorted) {
    const r = ds.ratings[i]!;
    let seq = byUser.get(r.user);
    if (!seq) byUser.set(r.user, (seq = []));
    seq.push(itemIndex.get(r.item)!);
  }
  const users: UserSequence[] = [];
  for (const [user, seq] of byUser) {
    const out = Math.min(2, seq.length - 1);
    const train = seq.slice(0, seq.length - out);
    if (out === 2) users.push({ user, train, valid: seq[seq.length - 2]!, test: seq[seq.length - 1]! });
    else if (out === 1) users.push({ user, train, test: seq[seq.length - 1]! });
    else users.push({ user, train });
  }
  return { source: ds.source, items, itemIndex, users };
}

/** The phase's cases, one per user who has a held-out item in it. */
export function casesOf(split: RecSplit, phase: Phase): RecCase[] {
  const out: RecCase[] = [];
  split.users.forEach((u, user) => {
    if (phase === "valid") {
      if (u.valid !== undefined) out.push({ user, history: u.train, target: u.valid });
    } else if (u.test !== undefined) {
      out.push({ user, history: u.valid !== undefined ? [...u.train, u.valid] : u.train, target: u.test });
    }
  });
  return out;
}

/** The interactions recallers are fitted on: every user's training items. */
export interface TrainSet {
  readonly users: number;
  readonly items: number;
  /** Per user (index into split.users), training items oldest first. */
  readonly rows: readonly (readonly number[])[];
}

export function trainSetOf(split: RecSplit): TrainSet {
  return { users: split.users.length, items: split.items.length, rows: split.users.map((u) => u.train) };
}

/** Counts for reports: users, items, interactions, and the cases of each phase. */
export function splitStats(split: RecSplit): { users: number; items: number; interactions: number; valid: number; test: number } {
  let interactions = 0;
  let valid = 0;
  let test = 0;
  for (const u of split.users) {
    interactions += u.train.length + (u.valid !== undefined ? 1 : 0) + (u.test !== undefined ? 1 : 0);
    if (u.valid !== undefined) valid++;
    if (u.test !== undefined) test++;
  }
  return { users: split.users.length, items: split.items.length, interactions, valid, test };
}

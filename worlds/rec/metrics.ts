/**
 * Top-k metrics exactly as RecBole defines them (recbole/evaluator/metrics.py `NDCG`, `Hit`),
 * for one user's ranked list with binary relevance:
 *
 *   DCG@k  = sum over ranks i = 1..k of [item at i is relevant] / log2(i + 1)
 *   IDCG@k = sum over i = 1..min(|R|, k) of 1 / log2(i + 1)
 *   NDCG@k = DCG@k / IDCG@k
 *   HR@k   = 1 when some item of the top k is relevant, else 0
 *
 * and the benchmark's figure is the mean over users. With one held-out item (leave-last-out),
 * NDCG@k is 1 / log2(rank + 1) when the item is at rank <= k, else 0. A list shorter than k counts
 * its missing places as misses; an item listed twice counts once (its first place).
 */
import { meanError as meanOf, type MeanError } from "../core/mean-error.js";

/** The ranked list's relevance at each place, an item's repeats counting as misses. */
function hitsOf(ranked: readonly number[], relevant: ReadonlySet<number>, k: number): boolean[] {
  const seen = new Set<number>();
  const out: boolean[] = [];
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    const item = ranked[i]!;
    out.push(relevant.has(item) && !seen.has(item));
    seen.add(item);
  }
  return out;
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
}

export function ndcgAt(ranked: readonly number[], relevant: ReadonlySet<number>, k: number): number {
  checkK(k);
  if (relevant.size === 0) throw new RangeError("NDCG needs at least one relevant item");
  let dcg = 0;
  hitsOf(ranked, relevant, k).forEach((hit, i) => {
    if (hit) dcg += 1 / Math.log2(i + 2);
  });
  let idcg = 0;
  for (let i = 0; i < Math.min(relevant.size, k); i++) idcg += 1 / Math.log2(i + 2);
  return dcg / idcg;
}

export function hitAt(ranked: readonly number[], relevant: ReadonlySet<number>, k: number): number {
  checkK(k);
  return hitsOf(ranked, relevant, k).some((h) => h) ? 1 : 0;
}

/** Means over users, as a report gives them. */
export interface TopKScore {
  readonly k: number;
  readonly ndcg: number;
  readonly hr: number;
  /** Users scored. */
  readonly n: number;
}

export type { MeanError };

/** A mean over users and its standard error (worlds/core/mean-error.ts). */
export function meanError(xs: ArrayLike<number>): MeanError {
  return meanOf(xs, "users");
}

/**
 * B minus A user by user (the same users, in the same order), with the standard error of that
 * mean: two agents' NDCG on the same users vary together, so the paired difference is far
 * tighter than the two means' errors would say.
 */
export function pairedDifference(a: ArrayLike<number>, b: ArrayLike<number>): MeanError {
  if (a.length !== b.length) throw new RangeError(`paired scores of ${a.length} and ${b.length} users: not the same users`);
  return meanError(Array.from(b, (x, i) => x - a[i]!));
}

/**
 * The best fixed mixture: the weights over recallers (mixture.ts) with the highest mean NDCG@k on
 * the validation cases, searched on the simplex grid of step 1/steps (steps 10: 66 mixtures of
 * three recallers, 286 of four), every single recaller included. The weights are chosen on the
 * valid phase only and reported on the test phase, so the mixture does not see the test items.
 * Large sets are searched on a seeded sample of the validation users.
 *
 * The search is exhaustive and exact, and cheap per mixture: each recaller scores a case once,
 * and a mixture's NDCG@k needs only the held-out item's rank, so it counts the items its merged
 * score puts above the item (stopping at k) among the few that can be there (gridNdcgs), instead
 * of merging the whole catalogue and sorting it per mixture (gridNdcgsByRanking, the reference it
 * is tested against, equal for every case and mixture).
 */
import { Rng } from "../core/rng.js";
import { ndcgAt } from "./metrics.js";
import { topK } from "./ranking.js";
import { standardise, type Weights } from "./recallers/mixture.js";
import type { Recaller } from "./recallers/recaller.js";
import type { RecCase } from "./split.js";

export interface MixtureSearch {
  readonly steps?: number;
  /** Validation cases searched at most (a seeded sample beyond). */
  readonly sample?: number;
  readonly seed?: number;
  /** Each mixture's NDCG@k for one case (default gridNdcgs; gridNdcgsByRanking gives the same, slower). */
  readonly scorer?: GridScorer;
}

export type GridScorer = (recallers: readonly Recaller[], c: RecCase, items: number, k: number, grid: readonly (readonly number[])[], buffers?: GridBuffers) => number[];

/** Scratch space of a search, reused case after case. */
export interface GridBuffers {
  /** Each recaller's standardised scores of the case. */
  readonly z: Float64Array[];
  readonly merged: Float64Array;
}

export function gridBuffers(recallers: number, items: number): GridBuffers {
  return { z: Array.from({ length: recallers }, () => new Float64Array(items)), merged: new Float64Array(items) };
}

export interface BestMixture {
  readonly weights: Weights;
  /** Its mean NDCG@k on the searched validation cases. */
  readonly validNdcg: number;
  readonly searched: number;
  readonly mixtures: number;
}

/** Every weight vector of `r` non-negative multiples of 1/steps summing to 1. */
export function simplexGrid(r: number, steps: number): number[][] {
  const out: number[][] = [];
  const walk = (prefix: number[], left: number) => {
    if (prefix.length === r - 1) return void out.push([...prefix, left].map((x) => x / steps));
    for (let x = left; x >= 0; x--) walk([...prefix, x], left - x);
  };
  walk([], steps);
  return out;
}

export function bestMixture(recallers: readonly Recaller[], valid: readonly RecCase[], items: number, k: number, opts: MixtureSearch = {}, onProgress?: (done: number, total: number) => void): BestMixture {
  const steps = opts.steps ?? 10;
  const cases = valid.length > (opts.sample ?? 2000) ? Rng.seeded(`mixture:${opts.seed ?? 0}`).sample(valid, opts.sample ?? 2000) : valid;
  const grid = simplexGrid(recallers.length, steps);
  const sums = new Float64Array(grid.length);
  const buffers = gridBuffers(recallers.length, items);
  const scorer = opts.scorer ?? gridNdcgs;
  cases.forEach((c, n) => {
    scorer(recallers, c, items, k, grid, buffers).forEach((x, g) => (sums[g]! += x));
    if (n % 64 === 63) onProgress?.(n + 1, cases.length);
  });
  onProgress?.(cases.length, cases.length);
  let best = 0;
  for (let g = 1; g < grid.length; g++) if (sums[g]! > sums[best]!) best = g;
  return {
    weights: Object.fromEntries(recallers.map((r, t) => [r.name, grid[best]![t]!])),
    validNdcg: sums[best]! / Math.max(1, cases.length),
    searched: cases.length,
    mixtures: grid.length,
  };
}

/** Every recaller's scores of case `c`, standardised over the items not in its history, into `z`. */
export function standardisedScores(recallers: readonly Recaller[], c: RecCase, z: Float64Array[]): void {
  recallers.forEach((r, t) => {
    r.score(c.user, c.history, z[t]!);
    standardise(z[t]!, c.history);
  });
}

/** A grid point's weights normalised as mixtureRecaller normalises them: the same arithmetic, so the same ranking. */
function normalised(w: readonly number[]): number[] {
  const total = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / total);
}

/**
 * NDCG@k of each mixture of `grid` for one case, from the held-out item's rank alone: with one
 * relevant item NDCG@k is 1 / log2(rank + 1) inside the top k (metrics.ts), and the rank is one
 * more than the items the merged scores put above it (a higher score, or an equal one and a lower
 * index, as topK breaks ties). Every recaller scores once; then per mixture only the candidates
 * are merged, with the very operations mixtureRecaller does (so the scores are equal to the bit),
 * best-looking first, stopping at the k-th item found above.
 *
 * The candidates: the items some recaller puts within `tol` of the held-out item or above it. An
 * item below it by more than `tol` in every recaller is below it in every convex mixture by more
 * than `tol` exactly (the weights sum to 1), and the rounding of the two merged sums (a product
 * and a sum per recaller, of numbers at most `scale` in size: under 1e-14 * scale) cannot close
 * that gap, so it never outranks the item nor ties with it; one above it by more than `tol` in
 * every recaller outranks it in every mixture, and is counted once for all (k of them: NDCG 0
 * throughout). A non-finite score (which topK ranks last) goes the reference's way.
 */
export function gridNdcgs(recallers: readonly Recaller[], c: RecCase, items: number, k: number, grid: readonly (readonly number[])[], buffers = gridBuffers(recallers.length, items)): number[] {
  const { z } = buffers;
  standardisedScores(recallers, c, z);
  const R = recallers.length;
  const target = c.target;
  const masked = new Uint8Array(items);
  for (const h of c.history) masked[h] = 1;
  // topK leaves the history out: an item seen before is ranked nowhere.
  if (target < 0 || target >= items || masked[target]) return grid.map(() => 0);
  let scale = 0;
  for (const zt of z)
    for (let i = 0; i < items; i++) {
      if (!Number.isFinite(zt[i]!)) return mergedNdcgs(c, items, k, grid, buffers);
      scale = Math.max(scale, Math.abs(zt[i]!));
    }
  const tol = 1e-9 * (1 + scale);
  // Above the item in every mixture (by more than tol in each recaller), or possibly above it.
  let sure = 0;
  const candidates: number[] = [];
  for (let i = 0; i < items; i++) {
    if (masked[i] || i === target) continue;
    let lowest = Infinity;
    let highest = -Infinity;
    for (let t = 0; t < R; t++) {
      const d = z[t]![i]! - z[t]![target]!;
      lowest = Math.min(lowest, d);
      highest = Math.max(highest, d);
    }
    if (lowest > tol) sure++;
    else if (highest > -tol) candidates.push(i);
  }
  if (sure >= k) return grid.map(() => 0);
  // Likely outrankers first (the equal mixture's order), so a mixture that ranks the item below k stops early.
  const sum = new Float64Array(items);
  for (const i of candidates) for (const zt of z) sum[i]! += zt[i]!;
  candidates.sort((a, b) => sum[b]! - sum[a]! || a - b);
  const n = candidates.length;
  const cz = new Float64Array(n * R);
  candidates.forEach((i, j) => z.forEach((zt, t) => (cz[j * R + t] = zt[i]!)));
  return grid.map((w) => {
    const wt = normalised(w);
    let own = 0;
    for (let t = 0; t < R; t++) if (w[t] !== 0) own += wt[t]! * z[t]![target]!;
    let above = sure;
    for (let j = 0; j < n; j++) {
      let m = 0;
      for (let t = 0; t < R; t++) if (w[t] !== 0) m += wt[t]! * cz[j * R + t]!;
      if (m > own || (m === own && candidates[j]! < target)) if (++above >= k) return 0;
    }
    return 1 / Math.log2(above + 2);
  });
}

/**
 * The reference: NDCG@k of each mixture of `grid` for one case by merging every item's scores
 * and ranking the catalogue (topK, ndcgAt), as mixtureRecaller and evaluate do; every recaller
 * scores once and the mixtures combine its scores.
 */
export function gridNdcgsByRanking(recallers: readonly Recaller[], c: RecCase, items: number, k: number, grid: readonly (readonly number[])[], buffers = gridBuffers(recallers.length, items)): number[] {
  standardisedScores(recallers, c, buffers.z);
  return mergedNdcgs(c, items, k, grid, buffers);
}

function mergedNdcgs(c: RecCase, items: number, k: number, grid: readonly (readonly number[])[], { z, merged }: GridBuffers): number[] {
  const relevant = new Set([c.target]);
  return grid.map((w) => {
    merged.fill(0);
    normalised(w).forEach((wt, t) => {
      if (w[t] === 0) return;
      const zt = z[t]!;
      for (let i = 0; i < items; i++) merged[i]! += wt * zt[i]!;
    });
    return ndcgAt(topK(merged, k, c.history), relevant, k);
  });
}

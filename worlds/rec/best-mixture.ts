/**
 * The best fixed mixture: the weights over recallers (mixture.ts) with the highest mean NDCG@k on
 * the validation cases, searched on the simplex grid of step 1/steps (steps 10 and three
 * recallers: 66 mixtures), every single recaller included. The weights are chosen on the valid
 * phase only and reported on the test phase, so the mixture does not see the test items. Large
 * sets are searched on a seeded sample of the validation users.
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
  const buffers = { z: recallers.map(() => new Float64Array(items)), merged: new Float64Array(items) };
  cases.forEach((c, n) => {
    gridNdcgs(recallers, c, items, k, grid, buffers).forEach((x, g) => (sums[g]! += x));
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

/**
 * NDCG@k of each mixture of `grid` for one case: every recaller scores once, standardised, and
 * the mixtures combine those scores (a recaller is not asked again per mixture), ranking exactly
 * as mixtureRecaller does.
 */
export function gridNdcgs(
  recallers: readonly Recaller[],
  c: RecCase,
  items: number,
  k: number,
  grid: readonly (readonly number[])[],
  buffers = { z: recallers.map(() => new Float64Array(items)), merged: new Float64Array(items) },
): number[] {
  const { z, merged } = buffers;
  recallers.forEach((r, t) => {
    r.score(c.user, c.history, z[t]!);
    standardise(z[t]!, c.history);
  });
  const relevant = new Set([c.target]);
  return grid.map((w) => {
    merged.fill(0);
    // Normalised as mixtureRecaller normalises: the same arithmetic, so the same ranking.
    const total = w.reduce((a, b) => a + b, 0);
    w.forEach((x, t) => {
      if (x === 0) return;
      const wt = x / total;
      const zt = z[t]!;
      for (let i = 0; i < items; i++) merged[i]! += wt * zt[i]!;
    });
    return ndcgAt(topK(merged, k, c.history), relevant, k);
  });
}

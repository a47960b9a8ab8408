/**
 * A 95% interval of an accuracy over questions that come in clusters (every question about one
 * story shares its story: a story with many moves makes all of them hard), by the percentile
 * bootstrap over the clusters: resample the stories with replacement, keep all of each one's
 * questions, and take the 2.5th and 97.5th percentiles of the resampled accuracies. Where the
 * stories differ much, it is wider than the Wilson interval of the same questions, which treats
 * them as independent.
 */
import { Rng } from "../worlds/core/rng.js";
import type { Interval } from "./wilson-interval.js";

export interface Cluster {
  readonly correct: number;
  readonly total: number;
}

export function bootstrapInterval(clusters: readonly Cluster[], o: { resamples?: number; seed?: number | string } = {}): Interval {
  const n = clusters.length;
  if (n === 0) return { low: 0, high: 1 };
  const rng = Rng.seeded(`bootstrap:${o.seed ?? 0}`);
  const resamples = o.resamples ?? 2000;
  const rates: number[] = [];
  for (let b = 0; b < resamples; b++) {
    let correct = 0;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const c = clusters[rng.int(n)]!;
      correct += c.correct;
      total += c.total;
    }
    rates.push(total === 0 ? 0 : correct / total);
  }
  rates.sort((a, b) => a - b);
  const at = (q: number) => rates[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return { low: at(0.025), high: at(0.975) };
}

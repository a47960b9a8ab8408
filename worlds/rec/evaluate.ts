/**
 * A recaller's NDCG@k and HR@k over a phase's held-out items, by full ranking (ranking.ts) as
 * RecBole's full-sort evaluation does, with the metrics of metrics.ts.
 */
import { hitAt, ndcgAt, type TopKScore } from "./metrics.js";
import { topK } from "./ranking.js";
import type { Recaller } from "./recallers/recaller.js";
import type { RecCase } from "./split.js";

/** The recaller's top k for one case, its history masked. */
export function recommend(recaller: Recaller, c: RecCase, items: number, k: number, buf = new Float64Array(items)): number[] {
  recaller.score(c.user, c.history, buf);
  return topK(buf, k, c.history);
}

/** The means, and each case's NDCG@k in the order of the cases (for standard errors and paired differences). */
export interface CaseScores extends TopKScore {
  readonly ndcgs: readonly number[];
}

export function evaluate(recaller: Recaller, cases: readonly RecCase[], items: number, k: number, onProgress?: (done: number) => void): CaseScores {
  const buf = new Float64Array(items);
  const ndcgs: number[] = [];
  let hr = 0;
  cases.forEach((c, n) => {
    const ranked = recommend(recaller, c, items, k, buf);
    const relevant = new Set([c.target]);
    ndcgs.push(ndcgAt(ranked, relevant, k));
    hr += hitAt(ranked, relevant, k);
    if (n % 256 === 255) onProgress?.(n + 1);
  });
  onProgress?.(cases.length);
  const n = Math.max(1, cases.length);
  return { k, ndcg: ndcgs.reduce((a, b) => a + b, 0) / n, hr: hr / n, n: cases.length, ndcgs };
}

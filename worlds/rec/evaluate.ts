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

export function evaluate(recaller: Recaller, cases: readonly RecCase[], items: number, k: number, onProgress?: (done: number) => void): TopKScore {
  const buf = new Float64Array(items);
  let ndcg = 0;
  let hr = 0;
  cases.forEach((c, n) => {
    const ranked = recommend(recaller, c, items, k, buf);
    const relevant = new Set([c.target]);
    ndcg += ndcgAt(ranked, relevant, k);
    hr += hitAt(ranked, relevant, k);
    if (n % 256 === 255) onProgress?.(n + 1);
  });
  onProgress?.(cases.length);
  const n = Math.max(1, cases.length);
  return { k, ndcg: ndcg / n, hr: hr / n, n: cases.length };
}

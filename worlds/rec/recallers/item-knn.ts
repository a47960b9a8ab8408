/**
 * Item-kNN (RecBole's ItemKNN, shrink 0): the cosine similarity of two items' columns of the
 * binary user-item training matrix,
 *
 *   sim(i, j) = |users of i and j| / sqrt(|users of i| * |users of j|),
 *
 * of which each item i keeps its k most similar others N(i) (default 100); a user's score for i is
 * the sum of sim(i, j) over the items j of the history that are in N(i) (RecBole: the user's row
 * times W, W[j, i] = sim(i, j) for j in N(i)).
 */
import type { TrainSet } from "../split.js";
import type { Recaller } from "./recaller.js";
import { topK } from "../ranking.js";

export interface ItemKnnOptions {
  /** Neighbours kept per item. */
  readonly k?: number;
}

export function fitItemKnn(train: TrainSet, opts: ItemKnnOptions = {}, onProgress?: (done: number, total: number) => void): Recaller {
  const k = Math.min(opts.k ?? 100, train.items - 1);
  const n = train.items;
  // Co-occurrence counts, filled in the upper triangle (i < j) only.
  const co = new Float32Array(n * n);
  const count = new Float64Array(n);
  train.rows.forEach((row, u) => {
    const items = [...new Set(row)].sort((a, b) => a - b);
    for (let a = 0; a < items.length; a++) {
      const i = items[a]!;
      count[i]! += 1;
      const base = i * n;
      for (let b = a + 1; b < items.length; b++) co[base + items[b]!]! += 1;
    }
    if (u % 512 === 0) onProgress?.(u, train.rows.length + n);
  });
  // Inverted: for each item j, the items i that keep j as a neighbour, and sim(i, j).
  const into: number[][] = Array.from({ length: n }, () => []);
  const weight: number[][] = Array.from({ length: n }, () => []);
  const row = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const c = i < j ? co[i * n + j]! : co[j * n + i]!;
      row[j] = j === i || c === 0 ? 0 : c / Math.sqrt(count[i]! * count[j]!);
    }
    for (const j of topK(row, k, [i])) {
      if (row[j]! <= 0) break;
      into[j]!.push(i);
      weight[j]!.push(row[j]!);
    }
    if (i % 512 === 0) onProgress?.(train.rows.length + i, train.rows.length + n);
  }
  const neighbours = into.map((l) => Int32Array.from(l));
  const sims = weight.map((l) => Float64Array.from(l));
  onProgress?.(train.rows.length + n, train.rows.length + n);
  return {
    name: "itemknn",
    score(_user, history, out) {
      out.fill(0);
      for (const j of new Set(history)) {
        const nb = neighbours[j]!;
        const s = sims[j]!;
        for (let t = 0; t < nb.length; t++) out[nb[t]!]! += s[t]!;
      }
    },
  };
}

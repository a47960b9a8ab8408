import { describe, expect, it } from "vitest";
import { hitAt, meanError, ndcgAt, pairedDifference, topK } from "../../worlds/rec/index.js";

describe("NDCG@k and HR@k (RecBole's definitions, hand-computed)", () => {
  it("one held-out item: 1 / log2(rank + 1) inside the top k, 0 outside", () => {
    const r = new Set([3]);
    expect(ndcgAt([3, 5, 7], r, 10)).toBe(1);
    expect(ndcgAt([5, 3, 7], r, 10)).toBeCloseTo(0.6309297535714575, 15);
    expect(ndcgAt([5, 7, 3], r, 10)).toBeCloseTo(0.5, 15);
    expect(ndcgAt([5, 7, 3], r, 2)).toBe(0);
    expect(hitAt([5, 7, 3], r, 3)).toBe(1);
    expect(hitAt([5, 7, 3], r, 2)).toBe(0);
  });

  it("several relevant items: IDCG counts min(|R|, k) places", () => {
    // DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3).
    expect(ndcgAt([3, 1, 9, 4], new Set([3, 9]), 3)).toBeCloseTo(0.9197207891481876, 15);
    // k = 2 with 4 relevant items: IDCG over 2 places; only the 2nd place hits.
    expect(ndcgAt([1, 9, 3], new Set([3, 9, 11, 12]), 2)).toBeCloseTo(0.38685280723454163, 15);
    expect(ndcgAt([3, 9], new Set([3, 9, 11, 12]), 2)).toBe(1);
  });

  it("a short list misses its empty places; a repeated item counts once", () => {
    expect(ndcgAt([], new Set([1]), 10)).toBe(0);
    expect(hitAt([], new Set([1]), 10)).toBe(0);
    expect(ndcgAt([3, 3], new Set([3, 4]), 2)).toBeCloseTo(0.6131471927654584, 15);
  });

  it("rejects a k that is no positive integer and an empty relevant set", () => {
    expect(() => ndcgAt([1], new Set([1]), 0)).toThrow(/positive integer/);
    expect(() => hitAt([1], new Set([1]), 1.5)).toThrow(/positive integer/);
    expect(() => ndcgAt([1], new Set(), 10)).toThrow(/relevant/);
  });
});

/**
 * RecBole's own computation (recbole/evaluator/metrics.py, NDCG.metric_info and Hit.metric_info),
 * transcribed line by line: from the matrix of hits of the top k (pos_index) and the number of
 * relevant items (pos_len), the metric at every cut-off 1..k; topk_result takes column k - 1.
 */
function recboleNdcg(posIndex: readonly boolean[], posLen: number): number[] {
  const k = posIndex.length;
  const idcgLen = posLen > k ? k : posLen;
  const idcg: number[] = [];
  let acc = 0;
  for (let i = 1; i <= k; i++) idcg.push((acc += 1 / Math.log2(i + 1)));
  for (let i = idcgLen; i < k; i++) idcg[i] = idcg[idcgLen - 1]!;
  const dcg: number[] = [];
  acc = 0;
  for (let i = 1; i <= k; i++) dcg.push((acc += posIndex[i - 1] ? 1 / Math.log2(i + 1) : 0));
  return dcg.map((d, i) => d / idcg[i]!);
}
const recboleHit = (posIndex: readonly boolean[]) => posIndex.map((_, i) => (posIndex.slice(0, i + 1).some(Boolean) ? 1 : 0));

describe("NDCG@k and HR@k agree with RecBole's matrix computation", () => {
  it("on random rankings of distinct items, for every cut-off", () => {
    let x = 12345;
    const next = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
    for (let trial = 0; trial < 200; trial++) {
      const k = 1 + next(20);
      const ranked = [...new Set(Array.from({ length: 40 }, () => next(60)))].slice(0, k);
      const relevant = new Set(Array.from({ length: 1 + next(6) }, () => next(60)));
      const posIndex = Array.from({ length: k }, (_, i) => i < ranked.length && relevant.has(ranked[i]!));
      const ndcg = recboleNdcg(posIndex, relevant.size);
      const hit = recboleHit(posIndex);
      for (let cut = 1; cut <= k; cut++) {
        expect(ndcgAt(ranked, relevant, cut)).toBeCloseTo(ndcg[cut - 1]!, 12);
        expect(hitAt(ranked, relevant, cut)).toBe(hit[cut - 1]);
      }
    }
  });
});

describe("full ranking", () => {
  it("keeps the k best scores, ties to the lower index, history masked", () => {
    const s = [0.5, 0.9, 0.5, 0.1, 0.9, 0.7];
    expect(topK(s, 3)).toEqual([1, 4, 5]);
    expect(topK(s, 4)).toEqual([1, 4, 5, 0]);
    expect(topK(s, 3, [1, 5])).toEqual([4, 0, 2]);
    expect(topK(s, 10, [0])).toEqual([1, 4, 5, 2, 3]);
  });

  it("ranks NaN last and keeps -Infinity candidates", () => {
    expect(topK([NaN, -Infinity, 2], 3)).toEqual([2, 0, 1]);
  });

  it("agrees with a full sort on random scores", () => {
    let x = 7;
    const s = Array.from({ length: 500 }, () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % 50));
    const exclude = [3, 17, 99];
    const sorted = s
      .map((v, i) => [v, i] as const)
      .filter(([, i]) => !exclude.includes(i))
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .map(([, i]) => i);
    expect(topK(s, 25, exclude)).toEqual(sorted.slice(0, 25));
  });
});

describe("standard errors over users", () => {
  it("a mean's standard error is the sample standard deviation over sqrt(n)", () => {
    // mean 2.5; sample variance ((1.5^2 + 0.5^2) * 2) / 3 = 5/3; s.e. sqrt(5/3 / 4).
    expect(meanError([1, 2, 3, 4])).toEqual({ mean: 2.5, error: Math.sqrt(5 / 3 / 4), n: 4 });
    expect(meanError([0.7])).toEqual({ mean: 0.7, error: 0, n: 1 });
    expect(() => meanError([])).toThrow(/no users/);
  });

  it("a paired difference is B minus A user by user: a shift common to both cancels", () => {
    const a = [0, 1, 0.5, 0.25];
    const b = [0.1, 1.1, 0.6, 0.35];
    const d = pairedDifference(a, b);
    expect(d.mean).toBeCloseTo(0.1, 15);
    expect(d.error).toBeLessThan(1e-15);
    // Unpaired, the same means would differ by less than one of their standard errors.
    expect(meanError(b).error).toBeGreaterThan(0.1);
    expect(pairedDifference([1, 0], [0, 1])).toEqual({ mean: 0, error: 1, n: 2 });
    expect(() => pairedDifference([1], [1, 0])).toThrow(/not the same users/);
  });
});

import { describe, expect, it } from "vitest";
import { bestMixture, casesOf, fitBpr, fitItemKnn, fitPopularity, generateRec, gridNdcgs, gridNdcgsByRanking, leaveLastOut, simplexGrid, trainSetOf, type Recaller } from "../../worlds/rec/index.js";

/** A recaller that scores from a fixed table (user-independent). */
const table = (name: string, scores: readonly number[]): Recaller => ({
  name,
  score(_u, _h, out) {
    scores.forEach((s, i) => (out[i] = s));
  },
});

describe("the best-mixture search counts the held-out item's rank (gridNdcgs)", () => {
  const g = generateRec({ users: 200, items: 90, meanLength: 14 }, 5);
  const split = leaveLastOut(g.dataset);
  const train = trainSetOf(split);
  const items = split.items.length;
  // A coarse recaller (scores in 3 buckets: many exact ties) and one that scores every item alike.
  const coarse: Recaller = {
    name: "coarse",
    score(u, _h, out) {
      for (let i = 0; i < out.length; i++) out[i] = (i * 7 + u) % 3;
    },
  };
  const recallers = [fitPopularity(train), fitItemKnn(train), fitBpr(train, { epochs: 5 }), coarse];
  const flat = table("flat", new Array(items).fill(1));

  it("gives every mixture of 4 recallers the very NDCG@10 that merging and ranking the catalogue gives, on every user", () => {
    const grid = simplexGrid(4, 10);
    let nonzero = 0;
    for (const c of [...casesOf(split, "valid"), ...casesOf(split, "test")]) {
      const fast = gridNdcgs(recallers, c, items, 10, grid);
      expect(fast, `user ${c.user}`).toEqual(gridNdcgsByRanking(recallers, c, items, 10, grid));
      nonzero += fast.filter((x) => x > 0).length;
    }
    expect(nonzero).toBeGreaterThan(1000);
    const withFlat = [recallers[0]!, flat, recallers[2]!];
    for (const c of casesOf(split, "valid").slice(0, 40)) expect(gridNdcgs(withFlat, c, items, 5, simplexGrid(3, 10))).toEqual(gridNdcgsByRanking(withFlat, c, items, 5, simplexGrid(3, 10)));
  });

  it("an item tied with the held-out one in every recaller outranks it when its index is lower, not when higher", () => {
    // Item 3 is held out; item 1 ties it everywhere, item 4 too; item 0 beats it in a alone, item 2 in b alone.
    const a = table("a", [9, 5, 1, 5, 5, 0]);
    const b = table("b", [0, 5, 9, 5, 5, 0]);
    const c = { user: 0, history: [5], target: 3 };
    const grid = [
      [1, 0],
      [0.5, 0.5],
      [0, 1],
    ];
    // a alone: 0 then 1 above it (rank 3); the even mixture: 0 and 2 at 4.5 < 5, so only 1 (rank 2).
    const expected = [1 / Math.log2(4), 1 / Math.log2(3), 1 / Math.log2(4)];
    expect(gridNdcgs([a, b], c, 6, 10, grid)).toEqual(expected);
    expect(gridNdcgsByRanking([a, b], c, 6, 10, grid)).toEqual(expected);
    // With k = 2 the item at rank 3 is out of the list.
    expect(gridNdcgs([a, b], c, 6, 2, grid)).toEqual([0, 1 / Math.log2(3), 0]);
  });

  it("an item in the history is ranked nowhere, and a NaN score is ranked last as topK ranks it", () => {
    const a = table("a", [3, 2, 1, 0]);
    expect(gridNdcgs([a], { user: 0, history: [1], target: 1 }, 4, 10, [[1]])).toEqual([0]);
    const nan = table("nan", [3, Number.NaN, 1, 0]);
    const c = { user: 0, history: [], target: 2 };
    expect(gridNdcgs([nan, a], c, 4, 10, simplexGrid(2, 4))).toEqual(gridNdcgsByRanking([nan, a], c, 4, 10, simplexGrid(2, 4)));
  });

  it("finds the same best mixture as the search by ranking, with the same NDCG on the validation users", () => {
    const valid = casesOf(split, "valid");
    const fast = bestMixture(recallers, valid, items, 10);
    const reference = bestMixture(recallers, valid, items, 10, { scorer: gridNdcgsByRanking });
    expect(fast).toEqual(reference);
    expect(fast.mixtures).toBe(286);
    expect(fast.validNdcg).toBeGreaterThan(0);
  });
});

import { describe, expect, it } from "vitest";
import { fitBpr, fitItemKnn, fitPopularity, mixtureRecaller, oracleRecaller, type Recaller } from "../../worlds/rec/index.js";
import { bestMixture, casesOf, evaluate, generateRec, leaveLastOut, recommend, simplexGrid, standardise, trainSetOf, type TrainSet } from "../../worlds/rec/index.js";

const HAND: TrainSet = { users: 3, items: 4, rows: [[0, 1], [0, 1, 2], [2, 3]] };
const scores = (r: Recaller, user: number, history: number[], n = 4) => {
  const out = new Float64Array(n);
  r.score(user, history, out);
  return [...out];
};

describe("popularity and item-kNN on a hand-made matrix", () => {
  it("popularity counts the training interactions", () => {
    expect(scores(fitPopularity(HAND), 0, [])).toEqual([2, 2, 2, 1]);
  });

  it("item-kNN sums cosine similarities: sim(0,1) = 2/2, sim(0,2) = 1/2, sim(2,3) = 1/sqrt(2)", () => {
    const knn = fitItemKnn(HAND);
    expect(scores(knn, 0, [0])).toEqual([0, 1, 0.5, 0]);
    const s = scores(knn, 0, [2]);
    expect(s[0]).toBeCloseTo(0.5, 15);
    expect(s[3]).toBeCloseTo(Math.SQRT1_2, 15);
    expect(scores(knn, 0, [0, 2]).map((x) => +x.toFixed(6))).toEqual([0.5, 1.5, 0.5, 0.707107]);
  });

  it("item-kNN keeps each item's k nearest as RecBole does: score(i) sums over the history in N(i)", () => {
    // k = 1: N(0) = {1}, N(1) = {0}, N(2) = {3} (0.707 beats 0.5), N(3) = {2}.
    const knn = fitItemKnn(HAND, { k: 1 });
    expect(scores(knn, 0, [0])).toEqual([0, 1, 0, 0]);
    expect(scores(knn, 0, [3])[2]).toBeCloseTo(Math.SQRT1_2, 15);
    expect(scores(knn, 0, [2]).map((x) => +x.toFixed(12))).toEqual([0, 0, 0, 0.707106781187]);
  });
});

describe("the mixture of recallers", () => {
  it("standardises over the items not in the history", () => {
    const s = Float64Array.from([1, 2, 3, 100]);
    standardise(s, [3]);
    expect(s[0]).toBeCloseTo(-Math.sqrt(1.5), 12);
    expect(s[1]).toBeCloseTo(0, 12);
    expect(s[2]).toBeCloseTo(Math.sqrt(1.5), 12);
    const flat = Float64Array.from([4, 4, 4]);
    standardise(flat, []);
    expect([...flat]).toEqual([0, 0, 0]);
  });

  it("with all weight on one recaller ranks as that recaller; weights are normalised", () => {
    const pop = fitPopularity(HAND);
    const knn = fitItemKnn(HAND);
    const c = { user: 0, history: [2], target: 3 };
    const alone = recommend(knn, c, 4, 3);
    expect(recommend(mixtureRecaller([pop, knn], { itemknn: 5 }), c, 4, 3)).toEqual(alone);
    const half = scores(mixtureRecaller([pop, knn], { pop: 1, itemknn: 1 }), 0, [2]);
    const twice = scores(mixtureRecaller([pop, knn], { pop: 2, itemknn: 2 }), 0, [2]);
    expect(half).toEqual(twice);
  });

  it("refuses unknown recallers, negative weights and all-zero weights", () => {
    const pop = fitPopularity(HAND);
    expect(() => mixtureRecaller([pop], { bpr: 1 })).toThrow(/no recaller "bpr"/);
    expect(() => mixtureRecaller([pop], { pop: -1 })).toThrow(/>= 0/);
    expect(() => mixtureRecaller([pop], { pop: 0 })).toThrow(/all 0/);
  });

  it("searches the simplex grid: 66 mixtures of 3 recallers at step 1/10, each summing to 1", () => {
    const grid = simplexGrid(3, 10);
    expect(grid).toHaveLength(66);
    for (const w of grid) expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(grid).toContainEqual([1, 0, 0]);
    expect(grid).toContainEqual([0, 0, 1]);
  });
});

describe("recallers on generated users (seeded)", () => {
  const g = generateRec({ users: 300, items: 120, meanLength: 15 }, 11);
  const split = leaveLastOut(g.dataset);
  const train = trainSetOf(split);
  const test = casesOf(split, "test");
  const valid = casesOf(split, "valid");
  const items = split.items.length;
  const pop = fitPopularity(train);
  const knn = fitItemKnn(train);
  const bpr = fitBpr(train, { epochs: 15 });
  const oracle = oracleRecaller(g.preferences, split);
  const random: Recaller = {
    name: "random",
    score(_u, _h, out) {
      for (let i = 0; i < out.length; i++) out[i] = ((i * 2654435761) % 1000) / 1000;
    },
  };

  it("BPR's loss falls epoch on epoch overall, and a fit is replayed exactly from its seed", () => {
    expect(bpr.losses[bpr.losses.length - 1]!).toBeLessThan(bpr.losses[0]! * 0.8);
    const again = fitBpr(train, { epochs: 15 });
    expect(scores(again, 5, [], items)).toEqual(scores(bpr, 5, [], items));
    expect(scores(fitBpr(train, { epochs: 15, seed: 1 }), 5, [], items)).not.toEqual(scores(bpr, 5, [], items));
  });

  it("every recaller beats chance, and the oracle beats every recaller", () => {
    const r = evaluate(random, test, items, 10).ndcg;
    const results = Object.fromEntries([pop, knn, bpr, oracle].map((x) => [x.name, evaluate(x, test, items, 10)]));
    for (const name of ["pop", "itemknn", "bpr"]) {
      expect(results[name]!.ndcg, name).toBeGreaterThan(r * 1.5);
      expect(results.oracle!.ndcg, name).toBeGreaterThan(results[name]!.ndcg);
      expect(results[name]!.hr).toBeGreaterThanOrEqual(results[name]!.ndcg);
    }
    expect(results.oracle!.n).toBe(300);
  });

  it("the best mixture is at least as good on the validation users as each recaller alone", () => {
    const best = bestMixture([pop, knn, bpr], valid, items, 10);
    expect(best.mixtures).toBe(66);
    expect(best.searched).toBe(valid.length);
    expect(Object.values(best.weights).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    for (const r of [pop, knn, bpr]) expect(best.validNdcg).toBeGreaterThanOrEqual(evaluate(r, valid, items, 10).ndcg - 1e-12);
  });

  it("the oracle refuses preferences that are not the data's truth", () => {
    const other = generateRec({ users: 10, items: 120, meanLength: 15 }, 11).preferences;
    expect(() => oracleRecaller(other, split)).toThrow(/the preferences have no user \d+: they are not the truth of this data/);
  });
});

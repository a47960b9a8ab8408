import { describe, expect, it } from "vitest";
import { casesOf, evaluate, fitPopularity, generateRec, leaveLastOut, trainSetOf } from "../../worlds/rec/index.js";
import { fitSasrec, sasrecWindows } from "../../trainers/rec/sasrec.js";
import { sasrecRecaller } from "../../trainers/rec/decisions.js";
import { recDecisionSet, simplexGrid } from "../../worlds/rec/index.js";

describe("SASRec's training windows", () => {
  it("cut [start, x1..xn] from its end into windows of maxLen inputs, each target the next token", () => {
    const w = sasrecWindows([0, 1, 2, 3, 4], 9, 2);
    expect(w.map((e) => [[...e.tokens], [...e.targets]])).toEqual([
      [[2, 3], [3, 4]],
      [[0, 1], [1, 2]],
      [[9], [0]],
    ]);
    expect(sasrecWindows([5], 9, 50).map((e) => [[...e.tokens], [...e.targets], e.trained])).toEqual([[[9], [5], 1]]);
    expect(sasrecWindows([], 9, 50)).toEqual([]);
  });

  it("refuses settings it cannot build", () => {
    const train = { users: 1, items: 3, rows: [[0, 1]] };
    expect(() => fitSasrec(train, { dim: 30, heads: 4 })).toThrow(/dim 30 is not a multiple of heads 4/);
    expect(() => fitSasrec(train, { epochs: 0 })).toThrow(/epochs must be a whole number >= 1/);
    expect(() => fitSasrec({ users: 1, items: 3, rows: [[]] })).toThrow(/no user has a training item/);
  });
});

describe("SASRec on generated users", { timeout: 120_000 }, () => {
  const gen = generateRec({ users: 300, items: 60, meanLength: 20, gamma: 1.5 }, 3);
  const split = leaveLastOut(gen.dataset);
  const train = trainSetOf(split);
  const test = casesOf(split, "test");
  const opts = { dim: 32, layers: 1, heads: 2, maxLen: 24, epochs: 8, batch: 16, seed: 1 };

  it("learns the sequences (its loss falls) and beats popularity on NDCG@10; the same seed gives the same scores", () => {
    const epochs: number[] = [];
    const sasrec = fitSasrec(train, opts, (done) => epochs.push(done));
    expect(epochs).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(sasrec.losses[7]!).toBeLessThan(sasrec.losses[0]! - 0.3);
    const s = evaluate(sasrec, test, split.items.length, 10);
    const pop = evaluate(fitPopularity(train), test, split.items.length, 10);
    console.log(`sasrec NDCG@10 ${s.ndcg.toFixed(4)} HR@10 ${s.hr.toFixed(4)}; pop ${pop.ndcg.toFixed(4)} ${pop.hr.toFixed(4)}; losses ${sasrec.losses.map((l) => l.toFixed(3)).join(" ")}`);
    expect(s.ndcg).toBeGreaterThan(pop.ndcg * 2);
    const again = fitSasrec(train, opts);
    const [a, b] = [new Float64Array(split.items.length), new Float64Array(split.items.length)];
    sasrec.score(0, test[0]!.history, a);
    again.score(0, test[0]!.history, b);
    expect([...b]).toEqual([...a]);
  });
});

describe("the decision points with SASRec among the recallers", { timeout: 120_000 }, () => {
  it("ask for weights over pop, itemknn, bpr and sasrec; the best action is the grid's best", async () => {
    const set = recDecisionSet([sasrecRecaller({ epochs: 2, dim: 16 })]);
    const points = await set.points(30, 2);
    expect(points).toHaveLength(30);
    const p = points[0]!;
    expect(p.observation).toMatch(/^sasrec recommends: /m);
    expect(p.observation).toContain('{"weights": {"pop": W, "itemknn": W, "bpr": W, "sasrec": W}}');
    expect(p.schema.safeParse({ weights: { pop: 0, itemknn: 0, bpr: 0, sasrec: 1 } }).success).toBe(true);
    expect(p.schema.safeParse({ weights: { pop: 0, itemknn: 0, bpr: 1 } }).success).toBe(false);
    for (const q of points.slice(0, 4)) {
      const rewards = simplexGrid(4, 10).map((w) => q.reward({ weights: { pop: w[0], itemknn: w[1], bpr: w[2], sasrec: w[3] } }));
      expect(q.reward(q.best)).toBe(Math.max(...rewards));
    }
  });
});

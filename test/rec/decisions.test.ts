import { describe, expect, it } from "vitest";
import { strictFormat } from "../../worlds/core/rewards/strict-format.js";
import { casesOf, fitRecaller, generateRec, leaveLastOut, RECALLERS, RecRankingSchema, RecWeightsSchema, scoreAction, simplexGrid, trainSetOf, world } from "../../worlds/rec/index.js";

const g = generateRec({ users: 80, items: 100, meanLength: 12 }, 5);
const split = leaveLastOut(g.dataset);
const recallers = RECALLERS.map((n) => fitRecaller(n, trainSetOf(split), { bpr: { epochs: 5 } }));
const cases = casesOf(split, "valid");

describe("the recommender's actions", () => {
  it("a ranked list of MovieIDs scores NDCG@10 and HR@10 of where it puts the next item", () => {
    const c = cases[0]!;
    const target = split.items[c.target]!.id;
    const others = split.items.map((m) => m.id).filter((id) => id !== target);
    expect(scoreAction({ items: [target] }, c, split, recallers, 10)).toMatchObject({ ndcg: 1, hr: 1 });
    expect(scoreAction({ items: [others[0]!, others[1]!, target] }, c, split, recallers, 10).ndcg).toBeCloseTo(0.5, 15);
    expect(scoreAction({ items: [others[0]!, others[0]!, target] }, c, split, recallers, 10).ndcg).toBeCloseTo(0.5, 15);
    expect(scoreAction({ items: [...others.slice(0, 10), target] }, c, split, recallers, 10)).toMatchObject({ ndcg: 0, hr: 0 });
    expect(scoreAction({ items: [999_999] }, c, split, recallers, 10)).toMatchObject({ ndcg: 0, ranked: [-1] });
  });

  it("weights rank as the mixture does; all-zero weights rank nothing", () => {
    const c = cases[1]!;
    const s = scoreAction({ weights: { pop: 0, itemknn: 1, bpr: 0 } }, c, split, recallers, 10);
    expect(s.ranked).toHaveLength(10);
    expect(scoreAction({ weights: { pop: 0, itemknn: 0, bpr: 0 } }, c, split, recallers, 10)).toEqual({ ndcg: 0, hr: 0, ranked: [] });
  });

  it("the strict format takes exactly the schemas' JSON", () => {
    expect(strictFormat('{"weights": {"pop": 0.2, "itemknn": 0.5, "bpr": 0.3}}', RecWeightsSchema).ok).toBe(true);
    expect(strictFormat('{"weights": {"pop": 0.2, "itemknn": 0.5}}', RecWeightsSchema).ok).toBe(false);
    expect(strictFormat('{"weights": {"pop": 0.2, "itemknn": 0.5, "bpr": 0.3, "svd": 1}}', RecWeightsSchema).ok).toBe(false);
    expect(strictFormat('{"weights": {"pop": 2, "itemknn": 0.5, "bpr": 0.3}}', RecWeightsSchema).ok).toBe(false);
    expect(strictFormat('{"items": [1, 2, 3]}', RecRankingSchema).ok).toBe(true);
    // A repeat is an action (it wastes its place: scoreAction counts the item at its first place).
    expect(strictFormat('{"items": [1, 2, 1]}', RecRankingSchema).ok).toBe(true);
    expect(strictFormat('{"items": [1, -2]}', RecRankingSchema).ok).toBe(false);
    expect(strictFormat('{"items": []}', RecRankingSchema).ok).toBe(false);
  });
});

describe("the decision points train grpo --world rec learns from", () => {
  it("are seeded, one per generated user at the valid item, with the best grid weights as the best action", async () => {
    const a = await world.decisions!.points(40, 3);
    const b = await world.decisions!.points(40, 3);
    expect(a).toHaveLength(40);
    expect(a.map((p) => p.observation)).toEqual(b.map((p) => p.observation));
    expect(a.map((p) => p.id)).toEqual(b.map((p) => p.id));
    for (const p of a.slice(0, 8)) {
      const rewards = simplexGrid(3, 10).map((w) => p.reward({ weights: { pop: w[0], itemknn: w[1], bpr: w[2] } }));
      expect(p.reward(p.best)).toBe(Math.max(...rewards));
      for (const r of rewards) expect(r >= 0 && r <= 1).toBe(true);
      expect(p.schema.safeParse(p.best).success).toBe(true);
    }
  });

  it("show the user's own recent history and the recallers' picks, never the held-out items as watched", async () => {
    const [p] = await world.decisions!.points(20, 4);
    const gen = generateRec({ users: 20 }, 4);
    const s = leaveLastOut(gen.dataset);
    const u = s.users[0]!;
    const watched = p!.observation.split("\n").filter((l) => l.startsWith("- "));
    expect(watched).toEqual(u.train.slice(-15).map((i) => `- ${s.items[i]!.title} [${s.items[i]!.genres.join(", ")}]`));
    expect(p!.observation).toContain(`A user has watched ${u.train.length} films`);
    for (const name of RECALLERS) expect(p!.observation).toMatch(new RegExp(`^${name} recommends: `, "m"));
    expect(p!.observation).toContain('{"weights": {"pop": W, "itemknn": W, "bpr": W}}');
  });
});

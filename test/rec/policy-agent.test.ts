/**
 * `bench rec --agent policy:DIR`: a policy as the recommender's mixture agent. The scoring is
 * checked against the fixed mixtures (a policy that always answers one recaller's weights scores
 * exactly what that recaller does), a model policy runs end to end, and policies that were not
 * trained for the rec world are named as such.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { parseRecAgent, RecAgentError, runRecBench } from "../../benchmarks/recommendation.js";
import { PolicyNotForRec, scorePolicy } from "../../benchmarks/rec-policy.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { AgentFailure, type Agent, type AgentTurn } from "../../worlds/core/agent.js";
import { casesOf, fitRecaller, generateRec, leaveLastOut, meanError, pairedDifference, renderObservation, trainSetOf } from "../../worlds/rec/index.js";
import { captureOutput } from "../capture.js";
import { tempDir, tinyCheckpoint } from "../policy/fixtures.js";

const io = captureOutput();

/** An agent that answers every turn with `weights`, and remembers what it was shown. */
function fixedAgent(weights: Record<string, number> | "junk"): Agent & { seen: AgentTurn[] } {
  const seen: AgentTurn[] = [];
  return {
    id: "fixed",
    seen,
    async act(turn) {
      seen.push(turn);
      if (weights === "junk") throw new AgentFailure("not JSON", { raw: "pop please" });
      return { action: { weights } };
    },
  };
}

describe("a policy as the rec world's mixture agent", () => {
  const gen = generateRec({ users: 80, items: 60 }, 4);
  const split = leaveLastOut(gen.dataset);
  const train = trainSetOf(split);
  const recallers = (["pop", "itemknn", "bpr"] as const).map((n) => fitRecaller(n, train, { bpr: { epochs: 3, seed: 4 } }));
  const test = casesOf(split, "test");

  it("is shown the observation train grpo --world rec trains on, and scores its weights as the fixed mixture does", async () => {
    const rows = await runRecBench(split, [parseRecAgent("itemknn"), parseRecAgent("mix:pop=1,itemknn=3")], { bpr: { epochs: 3, seed: 4 } });
    for (const [weights, row] of [
      [{ pop: 0, itemknn: 1, bpr: 0 }, rows[0]!],
      [{ pop: 0.25, itemknn: 0.75, bpr: 0 }, rows[1]!],
    ] as const) {
      const agent = fixedAgent(weights);
      const s = await scorePolicy(agent, "fixed", split, recallers, test, { k: 10, concurrency: 7 });
      expect(s.n).toBe(test.length);
      expect(s.ndcg).toBeCloseTo(row.ndcg, 12);
      expect(s.hr).toBeCloseTo(row.hr, 12);
      expect(s.failures).toBe(0);
      expect(s.meanWeights.itemknn).toBeCloseTo(weights.itemknn, 12);
      expect(agent.seen).toHaveLength(test.length);
      const c = test[5]!;
      const turn = agent.seen.find((t) => t.observation.text === renderObservation(split, c, recallers));
      expect(turn, "user 5's observation").toBeDefined();
      expect(turn!.actionSchema.safeParse({ weights: { pop: 1, itemknn: 0, bpr: 0 } }).success).toBe(true);
      expect(turn!.actionSchema.safeParse({ weights: { pop: 1, itemknn: 0 } }).success).toBe(false);
    }
  });

  it("gives each user's NDCG@10 in the order of the test users, however late the answers come, so rows pair user by user", async () => {
    const [row] = await runRecBench(split, parseRecAgent("itemknn"), { bpr: { epochs: 3, seed: 4 } });
    expect(row!.ndcgs).toHaveLength(test.length);
    expect(row!.ndcgs.reduce((a, b) => a + b, 0) / test.length).toBeCloseTo(row!.ndcg, 12);
    expect(row!.ndcgError).toBeCloseTo(meanError(row!.ndcgs).error, 15);
    expect(row!.ndcgError).toBeGreaterThan(0);
    let turns = 0;
    const late: Agent = {
      id: "late",
      async act() {
        // Later users answer sooner: completion order is not the order asked.
        await new Promise((r) => setTimeout(r, 12 - (turns++ % 12)));
        return { action: { weights: { pop: 0, itemknn: 1, bpr: 0 } } };
      },
    };
    const s = await scorePolicy(late, "late", split, recallers, test, { k: 10, concurrency: 8 });
    expect(s.ndcgs).toEqual(row!.ndcgs);
    expect(pairedDifference(row!.ndcgs, s.ndcgs)).toEqual({ mean: 0, error: 0, n: test.length });
  });

  it("scores replies that are no action 0, and names a policy none of whose replies is an action", async () => {
    let calls = 0;
    const half: Agent = {
      id: "half",
      async act(turn) {
        if (calls++ % 2) throw new AgentFailure("not JSON", { raw: "?" });
        return { action: { weights: { pop: 0, itemknn: 1, bpr: 0 } } };
      },
    };
    const s = await scorePolicy(half, "half", split, recallers, test, { k: 10, concurrency: 1 });
    expect(s.failures).toBe(Math.floor(test.length / 2));
    await expect(scorePolicy(fixedAgent("junk"), "policy:x", split, recallers, test, { k: 10 })).rejects.toThrow(
      new PolicyNotForRec(`policy:x: not one of ${test.length} replies was weights over pop, itemknn, bpr, so it was not trained for the rec world (train it with \`train grpo --world rec\`); the first: not JSON (reply "pop please")`),
    );
  });

  it("parses policy:DIR with its options, and refuses bad ones before anything loads", () => {
    expect(parseRecAgent("policy:some/dir?temperature=0.5")).toEqual({ kind: "policy", spec: "policy:some/dir?temperature=0.5" });
    expect(() => parseRecAgent("policy:")).toThrow(RecAgentError);
    expect(() => parseRecAgent("policy:d?temprature=1")).toThrow(/temprature/);
    expect(() => parseRecAgent("policy:d?tau=2")).toThrow(/tau is a setting of soft thinking: add soft_thinking=K/);
  });

  it("runs a model policy end to end through bench rec, the same for the same seed", async () => {
    const corpus = test.slice(0, 20).map((c) => renderObservation(split, c, recallers));
    const m = await createFromScratch({ preset: "1m", seed: 2, tokenizerKind: "word", corpus: [...corpus, '{"weights": {"pop": 0.25, "itemknn": 0.5, "bpr": 0, "sasrec": 1}}'] });
    const dir = tempDir("sw-rec-policy-");
    saveCheckpoint(dir, m.model, m.files);
    const data = tempDir("sw-rec-data-");
    expect(await main(["generate", "rec", "--n", "12", "--seed", "5", "--out", data, "--quiet"])).toBe(0);
    const bench = (json: string, agent: string) =>
      main(["bench", "rec", "--data", data, "--agent", agent, "--epochs", "2", "--sasrec-epochs", "1", "--sasrec-dim", "8", "--json", json, "--quiet"]);
    const spec = `policy:${dir}?temperature=1&seed=3&max_new_tokens=40`;
    expect(await bench(join(data, "a.json"), spec), io.err).toBe(0);
    expect(await bench(join(data, "b.json"), spec)).toBe(0);
    const a = JSON.parse(readFileSync(join(data, "a.json"), "utf8"));
    expect(a.rows).toHaveLength(1);
    const row = a.rows[0];
    expect(row).toMatchObject({ agent: spec, users: 12, failures: 0 });
    expect(row.ndcg >= 0 && row.ndcg <= row.hr && row.hr <= 1).toBe(true);
    expect(Object.keys(row.weights)).toEqual(["pop", "itemknn", "bpr", "sasrec"]);
    expect(Object.values(row.weights as Record<string, number>).reduce((x, y) => x + y, 0)).toBeCloseTo(1, 9);
    expect(JSON.parse(readFileSync(join(data, "b.json"), "utf8")).rows[0]).toMatchObject({ ndcg: row.ndcg, hr: row.hr, weights: row.weights });
    expect(io.out).toContain(`| ${spec} | ${row.ndcg.toFixed(4)} |`);

    // Soft thinking at evaluation (a SofT-GRPO policy as it was trained): still weights, for every user.
    expect(await bench(join(data, "s.json"), `policy:${dir}?soft_thinking=3&tau=0.5&seed=3&max_new_tokens=40`), io.err).toBe(0);
    expect(JSON.parse(readFileSync(join(data, "s.json"), "utf8")).rows[0]).toMatchObject({ users: 12, failures: 0 });
    // A 1M-parameter policy, three benches of 12 users: a minute alone, several on a machine shared with training runs.
  }, 900_000);

  it("names a policy that was not trained for the rec world, and a folder that is no policy", async () => {
    const data = tempDir("sw-rec-data-");
    await main(["generate", "rec", "--n", "20", "--seed", "5", "--out", data, "--quiet"]);
    const tomi = await tinyCheckpoint(3);
    const run = async (agent: string) => {
      io.err = "";
      const code = await main(["bench", "rec", "--data", data, "--agent", agent, "--epochs", "1", "--sasrec-epochs", "1", "--sasrec-dim", "8", "--quiet"]);
      return { code, err: io.err };
    };
    // A ToMi policy: the observation overflows its context; asked without a grammar, it never answers weights.
    const long = await run(`policy:${tomi.dir}`);
    expect(long.code).toBe(2);
    expect(long.err).toMatch(/--agent: policy:.*: (a user's observation .* does not fit the model's context|its tokenizer cannot write the recommender's weights|not one of 20 replies was weights).*not trained for the rec world/);
    const missing = await run(`policy:${join(data, "nope")}`);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nope/);
  }, 300_000);
});

/**
 * `train grpo --world rec`: the world's decision points (a generated user's history and the
 * recallers' picks; the weights over the recallers as JSON, rewarded with NDCG@10 of the merged
 * list), the strict format's -1, and a one-step run whose rollouts are logged with their rewards.
 */
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { scoreReply } from "../../trainers/grpo/reward.js";
import { ScoredPoints } from "../../trainers/grpo/scored-points.js";
import { recDecisionsWithSasrec } from "../../trainers/rec/decisions.js";
import { loadDecisions } from "../../worlds/registry.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();
const settings = GrpoConfigSchema.parse({});
const reply = (text: string) => ({ text, tokens: 10, finish: "stop", logprob: -3 });

describe("train grpo --world rec", () => {
  it("rewards weights over the recallers (SASRec among them) with the world's NDCG@10; anything else gets -1", async () => {
    const source = await ScoredPoints.open("rec", 5, 2);
    const decisions = await recDecisionsWithSasrec.points(5, 2);
    expect(source.size).toBe(5);
    for (let i = 0; i < 5; i++) {
      const p = await source.point(i);
      const d = decisions[i]!;
      expect(p.messages.at(-1)).toEqual({ role: "user", content: d.observation });
      expect(d.observation).toMatch(/^sasrec recommends: /m);
      const w = { weights: { pop: 0.2, itemknn: 0.3, bpr: 0.3, sasrec: 0.2 } };
      const mid = scoreReply(p, reply(JSON.stringify(w)), settings);
      expect(mid.format).toBe(true);
      expect(mid.reward).toBeCloseTo(d.reward(w), 12);
      expect(scoreReply(p, reply(JSON.stringify(d.best)), settings).reward).toBeGreaterThanOrEqual(mid.reward);
      for (const bad of ['{"weights": {"pop": 1}}', '{"weights": {"pop": 0.2, "itemknn": 0.5, "bpr": 0.3}}', '{"items": [1, 2]}', "pop 0.5", '{"weights": {"pop": 0.2, "itemknn": 0.5, "bpr": 0.3, "sasrec": 1.5}}']) {
        expect(scoreReply(p, reply(bad), settings).reward, bad).toBe(-1);
      }
    }
  });

  it("trains a policy one step on the world's points and logs each rollout with its reward", async () => {
    const corpus = (await (await loadDecisions("rec")).points(10, 0)).map((d) => d.observation);
    const m = await createFromScratch({ preset: "1m", seed: 3, corpus: [...corpus, '{"weights": {"pop": 0.2, "itemknn": 0.5, "bpr": 0.3, "sasrec": 0}}'] });
    const model = tempDir("sw-rec-model-");
    saveCheckpoint(model, m.model, m.files);
    const out = tempDir("sw-rec-grpo-");
    const store = tempDir("sw-rec-store-");
    const argv = ["train", "grpo", "--model", model, "--world", "rec", "--points", "4", "--prompts", "2", "--group-size", "2", "--out", out, "--store", store, "--steps", "1", "--max-new-tokens", "40", "--quiet"];
    expect(await main(argv)).toBe(0);
    expect(io.err).toMatch(/world rec \(4 decision points it scores itself from seed 0/);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const s = await RunStore.open(store);
    const recs = readEpisodeLog<{ kind: string; world: string; turns: { agent: string; reward: number; source: string }[] }>(s.episodesPath(s.get(runId)!)).records;
    expect(recs).toHaveLength(2);
    for (const r of recs) {
      expect(r).toMatchObject({ kind: "room_episode", world: "rec" });
      for (const t of r.turns) {
        expect(t.agent).toBe("recommender");
        if (t.source === "fallback") expect(t.reward).toBe(-1);
        else expect(t.reward >= 0 && t.reward <= 1).toBe(true);
      }
    }
    // A model, a rollout group and an optimizer step: seconds alone, minutes on a machine shared with training runs.
  }, 180_000);
});

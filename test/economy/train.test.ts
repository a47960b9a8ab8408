/**
 * `train grpo --world economy`: the world's own decision points (household-months rewarded with
 * the decision's normalized utility), the strict format's -1, the seed's settings as a preset (its
 * resume auto included), and a run whose rollouts are logged with their rewards.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configFromArgs } from "../../cli/commands/train-grpo.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { advantagesOf } from "../../trainers/grpo/advantages.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { scoreReply } from "../../trainers/grpo/reward.js";
import { ScoredPoints } from "../../trainers/grpo/scored-points.js";
import { loadDecisions } from "../../worlds/registry.js";
import { captureOutput } from "../capture.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();
const settings = GrpoConfigSchema.parse({});
const reply = (text: string) => ({ text, tokens: 10, finish: "stop", logprob: -3 });

describe("train grpo --world economy", () => {
  it("asks the household's prompt and rewards a decision with the world's own reward; anything else gets -1", async () => {
    const source = await ScoredPoints.open("economy", 6, 3);
    const decisions = await (await loadDecisions("economy")).points(6, 3);
    expect(source.size).toBe(6);
    for (let i = 0; i < 6; i++) {
      const p = await source.point(i);
      const d = decisions[i]!;
      expect(p.id).toBe(d.id);
      expect(p.messages.at(-1)).toEqual({ role: "user", content: d.observation });
      const mid = scoreReply(p, reply('{"work": 0.5, "consumption": 0.3}'), settings);
      expect(mid.format).toBe(true);
      expect(mid.reward).toBeCloseTo(d.reward({ work: 0.5, consumption: 0.3 }), 12);
      const best = scoreReply(p, reply(JSON.stringify(d.best)), settings);
      expect(best.reward).toBeCloseTo(1, 9);
      expect(best.reward).toBeGreaterThanOrEqual(mid.reward);
      for (const bad of ['{"work": 0.5}', '{"work": 0.5, "consumption": 1.2}', 'work 0.5, consumption 0.3', '{"work": 0.5, "consumption": 0.3, "why": "rent"}', 'Sure: {"work": 0.5, "consumption": 0.3}']) {
        expect(scoreReply(p, reply(bad), settings).reward, bad).toBe(-1);
      }
    }
    // The same seed gives the same points (a resumed run's data check).
    expect((await ScoredPoints.open("economy", 6, 3)).dataId).toBe(source.dataId);
    expect((await ScoredPoints.open("economy", 6, 4)).dataId).not.toBe(source.dataId);
  });

  it("has the seed's settings as a preset that flags override", () => {
    const base = { _: [], out: "x", "world-seed": 0, "save-every": 20, keep: 2, quiet: false, mode: "vanilla", "dynamic-sampling": false, "skip-solved": false, "mask-truncated": false } as const;
    const c = GrpoConfigSchema.parse(configFromArgs({ ...base, preset: "econagent" } as Parameters<typeof configFromArgs>[0]));
    // The seed's trainer scales by each group's std: so does the preset.
    expect([c.groupSize, c.temperature, c.entropyCoef, c.klCoef, c.prompts, c.formatFailure, c.advantageStd]).toEqual([2, 0.7, 0.02, 0.005, 4, -1, "group"]);
    // There a pair apart only in consumption (a reward gap of 0.02) is pushed as hard as a pair
    // apart in work (0.25): what made 200 steps collapse consumption.
    const groups = [
      [0.93, 0.95],
      [0.7, 0.95],
    ];
    const byGroup = advantagesOf(groups, c);
    expect(byGroup[0]![1]).toBeCloseTo(byGroup[1]![1]!, 3);
    // The guard for long runs, `--advantage-std batch` beside the preset: pushes in proportion to the gaps.
    const guarded = GrpoConfigSchema.parse(configFromArgs({ ...base, preset: "econagent", "advantage-std": "batch" } as Parameters<typeof configFromArgs>[0]));
    expect([guarded.advantageStd, guarded.groupSize, guarded.temperature]).toEqual(["batch", 2, 0.7]);
    const [consumption, work] = advantagesOf(groups, guarded);
    expect(consumption![1]! / work![1]!).toBeCloseTo(0.02 / 0.25, 9);
    const t = GrpoConfigSchema.parse(configFromArgs({ ...base, preset: "econagent", temperature: 1 } as Parameters<typeof configFromArgs>[0]));
    expect(t.temperature).toBe(1);
  });

  it("trains a policy on the economy's decision points and logs each rollout with its reward", async () => {
    // A model whose tokenizer was built on the households' prompts, so that they fit its context.
    const corpus = (await (await loadDecisions("economy")).points(40, 0)).map((d) => d.observation);
    const m = await createFromScratch({ preset: "1m", seed: 3, corpus: [...corpus, '{"work": 0.5, "consumption": 0.25}'] });
    const model = tempDir("sw-econ-model-");
    saveCheckpoint(model, m.model, m.files);
    const out = tempDir("sw-econ-grpo-");
    const store = tempDir("sw-econ-store-");
    const argv = ["train", "grpo", "--model", model, "--world", "economy", "--points", "8", "--preset", "econagent", "--out", out, "--store", store, "--steps", "2", "--save-every", "1", "--max-new-tokens", "16", "--quiet"];
    expect(await main(argv)).toBe(0);
    // The recipe's LoRA adapter: the base stays as it was, the adapter is saved in PEFT's layout.
    expect(io.err).toMatch(/LoRA r=8 alpha=16 dropout=\S+ on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj/);
    expect(existsSync(join(out, "adapter_config.json"))).toBe(true);
    expect(io.err).toMatch(/world economy \(8 decision points it scores itself from seed 0/);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const s = await RunStore.open(store);
    const recs = readEpisodeLog<{ kind: string; world: string; turns: { agent: string; reward: number; source: string; raw: string }[] }>(s.episodesPath(s.get(runId)!)).records;
    expect(recs).toHaveLength(8);
    for (const r of recs) {
      expect(r).toMatchObject({ kind: "room_episode", world: "economy" });
      expect(r.turns).toHaveLength(2);
      for (const t of r.turns) {
        expect(t.agent).toMatch(/^household-\d+$/);
        if (t.source === "fallback") expect(t.reward).toBe(-1);
        else expect(t.reward).toBeGreaterThanOrEqual(0);
      }
    }

    // The recipe's resume auto: the same command again goes on from OUT's latest checkpoint (here
    // step 1, as if the run had been stopped before its last step) instead of starting over.
    rmSync(join(out, "checkpoint-2"), { recursive: true });
    expect(await main(argv)).toBe(0);
    expect(io.err).toContain(`resuming from ${join(out, "checkpoint-1")} (step 1 of 2)`);
    expect(existsSync(join(out, "checkpoint-2"))).toBe(true);
    // Again on the finished run: nothing is trained, and it says so.
    io.out = "";
    io.err = "";
    expect(await main(argv)).toBe(0);
    expect(io.out).toContain("already at step 2 of 2: nothing to train");
    expect(io.out).not.toContain("trained");
    // Other settings on the same OUT: refused in the preset's name (no --resume was typed), with no
    // --model hint (a LoRA checkpoint is an adapter alone), and a way out.
    const other = argv.map((x) => (x === "2" ? "3" : x));
    expect(await main(other)).toBe(2);
    expect(io.err).toContain(`--preset econagent resumes OUT's latest checkpoint (resume auto): ${join(out, "checkpoint-2")} was trained with steps=2, not 3`);
    expect(io.err).toContain("--resume off to start afresh");
    expect(io.err).not.toContain("--resume:");
    expect(io.err).not.toContain("--model " + join(out, "checkpoint-2"));
    // Another base model: the adapter's settings are named by their one differing key, not quoted whole.
    const model2 = tempDir("sw-econ-model2-");
    saveCheckpoint(model2, m.model, m.files);
    expect(await main(argv.map((x) => (x === model ? model2 : x)))).toBe(2);
    expect(io.err).toMatch(/was trained with lora\.base="[^"]+", not "[^"]+"; resume with/);
    expect(io.err).not.toContain('"alpha"');
    // --resume off starts afresh in the same OUT: the former run's checkpoints go.
    io.out = "";
    io.err = "";
    expect(await main([...other, "--resume", "off"])).toBe(0);
    expect(io.err).not.toContain("resuming from");
    expect(io.out).toMatch(/^trained 3 GRPO steps on/m);

    expect(await main(["train", "grpo", "--model", model, "--world", "economy", "--episodes", "3", "--out", tempDir("sw-econ-grpo-")])).toBe(2);
    expect(io.err).toContain("--episodes: the economy world gives decision points of its own: ask for --points N");
    expect(await main(["train", "grpo", "--model", model, "--world", "tomi", "--points", "3", "--out", tempDir("sw-econ-grpo-")])).toBe(2);
    expect(io.err).toContain("--points: the tomi world has no decision points of its own");
  }, 180_000);
});

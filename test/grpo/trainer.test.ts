/**
 * The GRPO loop end to end on a tiny seeded model: it raises the reward of a simple task (reply
 * with a digit: about 3% of a fresh model's replies do), the same seed gives the same run, and a
 * run interrupted at a checkpoint and resumed ends with byte-identical weights, optimizer state,
 * metrics and rollout log as the uninterrupted run; a resume with other settings is refused. A run
 * that continues another's checkpoint on its own data (self-play's continueTraining rounds) takes
 * its AdamW moments, update count, schedule position, step and data position: on the same data the
 * two runs end exactly where one run would.
 * SofT-GRPO (soft thinking before the answer) trains on the same task, reproducibly.
 */
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { readSafetensors, writeSafetensors } from "../../models/safetensors.js";
import { RunStore } from "../../store/run-store.js";
import { readEpisodeLog, type EpisodeLog } from "../../store/episode-log.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { GrpoConfigSchema, type GrpoConfigInput } from "../../trainers/grpo/config.js";
import type { DecisionPoint, PointSource, ScoredReply } from "../../trainers/grpo/decision-point.js";
import type { StepMetrics } from "../../trainers/grpo/metrics.js";
import { runGrpoSession, SettingsMismatch } from "../../trainers/grpo/session.js";
import { tempDir, tinyModel } from "../policy/fixtures.js";

/** "Reply with a digit": exact match when the answer is one. */
class DigitTask implements PointSource {
  readonly description = "digits";
  readonly runParams = { task: "digits" };
  /** Another data id asks other questions (a self-play round's new episodes). */
  constructor(readonly dataId = "digits-v1", readonly size = 6) {}
  async point(i: number): Promise<DecisionPoint> {
    return {
      id: `digit-${i}`,
      messages: [{ role: "user", content: this.dataId === "digits-v1" ? `Question ${i}: reply with one digit.` : `Item ${i}, a digit please.` }],
      schema: AnswerSchema as z.ZodType<unknown>,
      reference: "7",
      exact: (a) => (/^[0-9]$/.test((a as { answer: string }).answer) ? 1 : 0),
      answerText: (a) => (a as { answer: string }).answer,
    };
  }
  async logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number }): Promise<void> {
    log.append({ kind: "digit_group", run: runId, point: point.id, replies: replies.map((r) => r.text), turns: [{ info: { grpo: { step: meta.step, group: meta.group } } }] });
  }
}

const base: GrpoConfigInput = { prompts: 4, groupSize: 16, maxNewTokens: 1, lr: 0.02, beta2: 0.99, klCoef: 0, temperature: 1, seed: 3 };

async function start(seed: number): Promise<string> {
  const m = await tinyModel(seed);
  const dir = tempDir("sw-grpo-");
  saveCheckpoint(dir, m.model, m.files);
  return dir;
}

describe("GRPO end to end", () => {
  it("raises the reward of a simple task", async () => {
    const model = await start(5);
    const metrics: StepMetrics[] = [];
    const r = await runGrpoSession({ out: tempDir("sw-grpo-"), model, source: new DigitTask(), config: GrpoConfigSchema.parse({ ...base, steps: 30 }), saveEvery: 1000, keep: 1, onStep: (m) => metrics.push(m) });
    expect(r.steps).toBe(30);
    const first = metrics.slice(0, 5).reduce((a, m) => a + m.accuracy, 0) / 5;
    const last = metrics.slice(-5).reduce((a, m) => a + m.accuracy, 0) / 5;
    expect(first).toBeLessThan(0.15);
    expect(last).toBeGreaterThan(0.6);
    expect(metrics.at(-1)!.reward).toBeGreaterThan(metrics[0]!.reward);
  });

  it("SofT-GRPO (soft thinking tokens, then the answer) trains, and the same seed gives the same run", async () => {
    const model = await start(5);
    const config = GrpoConfigSchema.parse({ ...base, groupSize: 8, steps: 4, soft: true, thinkingSteps: 2, tau: 1, topP: 0.9, klCoef: 0.01 });
    const runOnce = async () => {
      const metrics: StepMetrics[] = [];
      const out = tempDir("sw-grpo-");
      await runGrpoSession({ out, model, source: new DigitTask(), config, saveEvery: 1000, keep: 1, onStep: (m) => metrics.push(m) });
      return { metrics, out };
    };
    const a = await runOnce();
    expect(a.metrics).toHaveLength(4);
    for (const m of a.metrics) {
      expect(Number.isFinite(m.loss)).toBe(true);
      expect(m.kl).not.toBeNull();
    }
    expect(a.metrics.some((m) => m.gradNorm > 0)).toBe(true);
    const weights = (dir: string) => readFileSync(join(dir, "model.safetensors"));
    expect(weights(a.out)).not.toEqual(weights(model));
    const b = await runOnce();
    expect(b.metrics.map((m) => m.reward)).toEqual(a.metrics.map((m) => m.reward));
    expect(weights(b.out)).toEqual(weights(a.out));
  }, 240_000);

  it("resumes exactly: weights, optimizer, metrics and the rollout log match the uninterrupted run", async () => {
    const model = await start(6);
    // KL to the reference, dynamic sampling and two updates per batch: every piece of state in play.
    const config = GrpoConfigSchema.parse({ ...base, groupSize: 8, steps: 4, klCoef: 0.05, dynamicSampling: true, miniBatch: 2, epochs: 1 });
    const straight = tempDir("sw-grpo-");
    const storeA = await RunStore.open(tempDir("sw-grpo-store-"));
    const a = await runGrpoSession({ out: straight, model, source: new DigitTask(), config, saveEvery: 2, keep: 3, store: storeA });

    const broken = tempDir("sw-grpo-");
    const storeB = await RunStore.open(tempDir("sw-grpo-store-"));
    const controller = new AbortController();
    const first = await runGrpoSession({
      out: broken, model, source: new DigitTask(), config, saveEvery: 2, keep: 3, store: storeB, signal: controller.signal,
      onStep: (m) => m.step === 3 && controller.abort(),
    });
    expect(first.interrupted).toBe(true);
    expect(first.steps).toBe(3);
    // Resume from the step-2 checkpoint (not the one written at the interruption): step 3 runs again.
    const b = await runGrpoSession({ out: broken, source: new DigitTask(), config, resume: join(broken, "checkpoint-2"), saveEvery: 2, keep: 3, store: storeB });
    expect(b.resumedFrom).toBe(join(broken, "checkpoint-2"));
    expect(b.runId).toBe(first.runId);

    for (const f of ["model.safetensors", "checkpoint-4/optimizer.safetensors"]) {
      expect(readFileSync(join(broken, f)), f).toEqual(readFileSync(join(straight, f)));
    }
    // Every metric but the clock's.
    const metrics = (dir: string) =>
      readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => {
        const { seconds: _s, rolloutSeconds: _r, tokensPerSecond: _t, ...rest } = JSON.parse(l) as StepMetrics;
        return rest;
      });
    expect(metrics(broken)).toEqual(metrics(straight));
    expect(metrics(broken).map((m) => m.step)).toEqual([1, 2, 3, 4]);
    const state = (dir: string) => ({ ...JSON.parse(readFileSync(join(dir, "checkpoint-4", "trainer_state.json"), "utf8")), runId: null });
    expect(state(broken)).toEqual(state(straight));
    // The log holds every step once; the superseded step-3 records are kept beside it.
    const logA = readEpisodeLog<{ replies: string[] }>(storeA.episodesPath(storeA.get(a.runId!)!)).records;
    const logB = readEpisodeLog<{ replies: string[] }>(storeB.episodesPath(storeB.get(b.runId!)!)).records;
    expect(logB.map((r) => r.replies)).toEqual(logA.map((r) => r.replies));
    expect(readFileSync(storeB.episodesPath(storeB.get(b.runId!)!).replace(/\.jsonl$/, ".superseded.jsonl"), "utf8").trim().split("\n").length).toBeGreaterThan(0);
    expect(storeB.get(b.runId!)!.status).toBe("done");

    await expect(runGrpoSession({ out: broken, source: new DigitTask(), config: { ...config, lr: 0.01 }, resume: "auto", saveEvery: 2, keep: 3 })).rejects.toThrow(SettingsMismatch);
  });

  describe("a run that continues another's checkpoint (self-play's continueTraining)", () => {
    // Warmup, then a decay over one schedule of 4 updates, KL to the first run's starting policy,
    // dynamic sampling and two updates a batch: the state a continuing run must take over.
    const config = GrpoConfigSchema.parse({ ...base, groupSize: 8, steps: 4, klCoef: 0.05, dynamicSampling: true, warmupSteps: 2, minLr: 0.002, scheduleSteps: 8, miniBatch: 2 });
    const half = { ...config, steps: 2 };
    const stateOf = (dir: string) => JSON.parse(readFileSync(join(dir, "trainer_state.json"), "utf8"));
    const lrs = (dir: string) => readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as StepMetrics).map((m) => [m.step, m.updates, m.lr]);

    it("on the same data ends exactly where one run does: weights, moments, counters, schedule", async () => {
      const model = await start(7);
      const straight = tempDir("sw-grpo-");
      await runGrpoSession({ out: straight, model, source: new DigitTask(), config, saveEvery: 1000, keep: 1 });
      const first = tempDir("sw-grpo-");
      await runGrpoSession({ out: first, model, source: new DigitTask(), config: half, saveEvery: 1000, keep: 1 });
      const second = tempDir("sw-grpo-");
      const starts: number[] = [];
      const r = await runGrpoSession({
        out: second, model: first, referenceModel: model, continueFrom: join(first, "checkpoint-2"), source: new DigitTask(), config: half, saveEvery: 1000, keep: 1,
        onStart: (info) => starts.push(info.startStep),
      });
      expect(starts).toEqual([2]);
      expect(r.steps).toBe(4);
      for (const f of ["model.safetensors", "checkpoint-4/optimizer.safetensors"]) {
        expect(readFileSync(join(second, f)), f).toEqual(readFileSync(join(straight, f)));
      }
      const { settings: _a, runId: _b, ...counters } = stateOf(join(straight, "checkpoint-4"));
      expect(stateOf(join(second, "checkpoint-4"))).toMatchObject(counters);
      expect(counters).toMatchObject({ step: 4, updates: 8 });
      // Steps 3 and 4 on the schedule where the one run had them: past the warmup, on with the decay.
      expect(lrs(second)).toEqual(lrs(straight).slice(2));
      expect(lrs(first).concat(lrs(second))).toEqual(lrs(straight));
    }, 240_000);

    it("takes the first run's moments: with them zeroed, its first step lands elsewhere", async () => {
      const model = await start(8);
      const first = tempDir("sw-grpo-");
      await runGrpoSession({ out: first, model, source: new DigitTask(), config: half, saveEvery: 1000, keep: 1 });
      const ck = join(first, "checkpoint-2");
      const saved = readSafetensors(join(ck, "optimizer.safetensors"));
      expect(saved.tensors.get("exp_avg")!.shape[0]).toBeGreaterThan(0);
      const zeroed = tempDir("sw-grpo-zeroed-");
      cpSync(ck, zeroed, { recursive: true });
      const n = saved.tensors.get("exp_avg")!.shape[0]!;
      writeSafetensors(join(zeroed, "optimizer.safetensors"), [
        { name: "exp_avg", shape: [n], data: new Float32Array(n) },
        { name: "exp_avg_sq", shape: [n], data: new Float32Array(n) },
      ]);
      const once = { ...config, steps: 1 };
      const withMoments = tempDir("sw-grpo-");
      const withoutMoments = tempDir("sw-grpo-");
      await runGrpoSession({ out: withMoments, model: first, referenceModel: model, continueFrom: ck, source: new DigitTask("digits-v2", 5), config: once, saveEvery: 1000, keep: 1 });
      await runGrpoSession({ out: withoutMoments, model: first, referenceModel: model, continueFrom: zeroed, source: new DigitTask("digits-v2", 5), config: once, saveEvery: 1000, keep: 1 });
      expect(readFileSync(join(withMoments, "model.safetensors"))).not.toEqual(readFileSync(join(withoutMoments, "model.safetensors")));
      // Its own data, its counters on from the first run's.
      const before = stateOf(ck);
      const after = stateOf(join(withMoments, "checkpoint-3"));
      expect(after.step).toBe(3);
      expect(after.updates).toBe(before.updates + 2);
      expect(after.settings.data).toBe("digits-v2");
      // Other data: its own order from its start, as a run of its own would draw it (a position
      // part-way through the other data's pass would draw some points twice before others once).
      const fresh = tempDir("sw-grpo-");
      await runGrpoSession({ out: fresh, model: first, referenceModel: model, source: new DigitTask("digits-v2", 5), config: once, saveEvery: 1000, keep: 1 });
      expect(after.cursor).toBe(stateOf(join(fresh, "checkpoint-1")).cursor);
      expect(lrs(withMoments).map(([step, updates]) => [step, updates])).toEqual([[3, before.updates + 2]]);
    }, 240_000);

    it("resumes in its own OUT after an interruption, ending where it would have", async () => {
      const model = await start(9);
      const first = tempDir("sw-grpo-");
      await runGrpoSession({ out: first, model, source: new DigitTask(), config: half, saveEvery: 1000, keep: 1 });
      const from = join(first, "checkpoint-2");
      const go = (out: string, resume?: string) =>
        runGrpoSession({ out, model: first, referenceModel: model, continueFrom: from, source: new DigitTask("digits-v2", 5), config: half, saveEvery: 1, keep: 5, ...(resume ? { resume } : {}) });
      const whole = tempDir("sw-grpo-");
      await go(whole);
      // Cut after step 3: its checkpoint and the run's reference policy are what is left.
      const cut = tempDir("sw-grpo-");
      for (const d of ["checkpoint-3", "reference"]) cpSync(join(whole, d), join(cut, d), { recursive: true });
      const r = await go(cut, "auto");
      expect(r.resumedFrom).toBe(join(cut, "checkpoint-3"));
      expect(r.steps).toBe(4);
      expect(readFileSync(join(cut, "model.safetensors"))).toEqual(readFileSync(join(whole, "model.safetensors")));
    }, 240_000);

    it("refuses a checkpoint trained with other settings, naming it", async () => {
      const model = await start(9);
      const first = tempDir("sw-grpo-");
      await runGrpoSession({ out: first, model, source: new DigitTask(), config: { ...half, steps: 1 }, saveEvery: 1000, keep: 1 });
      const ck = join(first, "checkpoint-1");
      const err = await runGrpoSession({ out: tempDir("sw-grpo-"), model: first, continueFrom: ck, source: new DigitTask(), config: { ...half, lr: 0.01 }, saveEvery: 1000, keep: 1 }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(SettingsMismatch);
      expect((err as Error).message).toContain(`${ck} was trained with lr=0.02, not 0.01`);
    }, 120_000);
  });
});

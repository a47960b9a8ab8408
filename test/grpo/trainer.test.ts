/**
 * The GRPO loop end to end on a tiny seeded model: it raises the reward of a simple task (reply
 * with a digit: about 3% of a fresh model's replies do), the same seed gives the same run, and a
 * run interrupted at a checkpoint and resumed ends with byte-identical weights, optimizer state,
 * metrics and rollout log as the uninterrupted run; a resume with other settings is refused.
 * SofT-GRPO (soft thinking before the answer) trains on the same task, reproducibly.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { saveCheckpoint } from "../../models/checkpoint.js";
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
  readonly dataId = "digits-v1";
  readonly size = 6;
  readonly runParams = { task: "digits" };
  async point(i: number): Promise<DecisionPoint> {
    return {
      id: `digit-${i}`,
      messages: [{ role: "user", content: `Question ${i}: reply with one digit.` }],
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
});

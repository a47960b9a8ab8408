/**
 * Supervised fine-tuning: mean cross-entropy on the assistant's tokens, AdamW with decoupled
 * weight decay, global-norm gradient clipping, gradient accumulation, linear warmup then cosine
 * decay. Checkpoints (with optimizer state) every `saveEvery` steps; a run resumed from one
 * continues exactly as the uninterrupted run would have. What is trained is `model.trained`: every
 * weight, or the LoRA adapter in use (its dropout masks seeded by step and micro-batch, so a
 * resumed run draws the same ones).
 */
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { naming } from "../../store/io-error.js";
import type { CheckpointFiles } from "../../models/checkpoint.js";
import type { PolicyModel } from "../../models/model.js";
import { batchExamples, makeBatch, type EncodedExample } from "./batches.js";
import { learningRate } from "./schedule.js";
import { TRAINER_STATE_FORMAT, type TrainerState } from "./state.js";
import { saveTrainedModel, saveTrainerCheckpoint } from "../common/checkpoint-folders.js";
import { dropoutSeed } from "../common/dropout-seed.js";
import { trimStepLog } from "../common/step-log.js";

export interface SftSettings {
  readonly steps: number;
  readonly lr: number;
  readonly minLr: number;
  readonly warmupSteps: number;
  /** Examples per micro-batch. */
  readonly batch: number;
  /** Micro-batches per optimizer step. */
  readonly gradAccum: number;
  readonly weightDecay: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  /** Clip the global gradient norm to this (0: no clipping). */
  readonly clip: number;
  readonly seed: number;
  readonly maxLen: number;
  /** The weight of the prompt's tokens in the loss (0: the assistant's tokens only; batches.ts). */
  readonly promptLoss?: number;
  /** A JSON response's field -> the weight of its value's tokens against the response's 1 (batches.ts). */
  readonly fieldWeights?: Readonly<Record<string, number>>;
}

export interface StepRecord {
  readonly step: number;
  readonly loss: number;
  readonly lr: number;
  readonly gradNorm: number;
  readonly tokens: number;
  readonly seconds: number;
}

export interface SftRun {
  readonly out: string;
  readonly model: PolicyModel;
  readonly files: CheckpointFiles;
  readonly examples: readonly EncodedExample[];
  readonly settings: SftSettings;
  /** Identifies the training data (resume refuses other data). */
  readonly dataId: string;
  /** A LoRA run: its settings and base model (resume refuses others). */
  readonly lora?: { readonly settings: unknown; readonly base: string };
  readonly saveEvery: number;
  readonly keep: number;
  /** Steps already done (resume). */
  readonly startStep?: number;
  readonly onStep?: (r: StepRecord) => void;
  readonly signal?: AbortSignal;
}

export interface SftResult {
  readonly steps: number;
  readonly lastLoss: number | null;
  readonly interrupted: boolean;
  readonly tokensPerSecond: number;
}

/** What a resumed run must share with the run that wrote the checkpoint. */
export function stateSettings(run: Pick<SftRun, "settings" | "dataId" | "lora">): Record<string, unknown> {
  return { ...run.settings, data: run.dataId, ...(run.lora ? { lora: run.lora } : {}) };
}

export function dataId(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex").slice(0, 16);
}

export async function trainSft(run: SftRun): Promise<SftResult> {
  const s = run.settings;
  const { model } = run;
  const schedule = { lr: s.lr, minLr: s.minLr, warmupSteps: s.warmupSteps, totalSteps: s.steps };
  const logFile = join(run.out, "train_log.jsonl");
  const start = run.startStep ?? 0;
  trimStepLog(logFile, start);
  let last: number | null = null;
  let tokensTotal = 0;
  const started = performance.now();
  let step = start;
  const settings = stateSettings(run);
  const checkpoint = (done: number, loss: number | null) => {
    const state: TrainerState = { format: TRAINER_STATE_FORMAT, step: done, settings, loss };
    saveTrainerCheckpoint(run.out, model, run.files, state, run.keep);
  };

  for (; step < s.steps; step++) {
    if (run.signal?.aborted) {
      checkpoint(step, last);
      return { steps: step, lastLoss: last, interrupted: true, tokensPerSecond: tokensTotal / ((performance.now() - started) / 1000) };
    }
    const t0 = performance.now();
    const micro = Array.from({ length: s.gradAccum }, (_, k) => batchExamples(run.examples.length, s.batch, step * s.gradAccum + k, s.seed).map((i) => run.examples[i]!));
    // Weighted mean over every trained token of the optimizer step, across its micro-batches.
    const trained = micro.flat().reduce((a, e) => a + e.trained, 0);
    model.trained.zeroGrad();
    let loss = 0;
    let tokens = 0;
    for (const [k, exs] of micro.entries()) {
      const r = await model.pass(makeBatch(exs, trained), true, { dropoutSeed: dropoutSeed(s.seed, step, k) });
      loss += r.loss;
      tokens += exs.reduce((a, e) => a + e.tokens.length, 0);
    }
    const gradNorm = model.trained.gradNorm();
    const lr = learningRate(schedule, step);
    const gradScale = s.clip > 0 && gradNorm > s.clip ? s.clip / gradNorm : 1;
    model.trained.adamwStep({ lr, beta1: s.beta1, beta2: s.beta2, eps: s.eps, weightDecay: s.weightDecay, step: step + 1, gradScale });
    const seconds = (performance.now() - t0) / 1000;
    tokensTotal += tokens;
    last = loss;
    const rec: StepRecord = { step: step + 1, loss, lr, gradNorm, tokens, seconds };
    naming(logFile, () => appendFileSync(logFile, JSON.stringify(rec) + "\n"));
    run.onStep?.(rec);
    if ((step + 1) % run.saveEvery === 0 && step + 1 < s.steps) checkpoint(step + 1, loss);
  }
  checkpoint(step, last);
  saveTrainedModel(run.out, model, run.files);
  return { steps: step, lastLoss: last, interrupted: false, tokensPerSecond: tokensTotal / ((performance.now() - started) / 1000) };
}

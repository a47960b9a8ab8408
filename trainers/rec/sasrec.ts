/**
 * SASRec-style sequential recaller (Kang and McAuley, "Self-Attentive Sequential Recommendation",
 * ICDM 2018) on the native engine: its causal transformer with the items as the vocabulary,
 * trained on the users' training sequences by next-item cross-entropy, scoring every item by the
 * last position's logits. A recaller like worlds/rec/recallers/*; it lives above worlds/ because
 * the model runtime does.
 *
 * Vocabulary: the split's dense item indices 0..I-1, and I, the start token before a user's first
 * item. A user's sequence [start, x1, ..., xn] is cut into windows of at most `maxLen` inputs from
 * its end (inputs tok[s..s+L-1], targets tok[s+1..s+L]), so a long history trains every item, not
 * only its last `maxLen` as SASRec's truncation does. A ranking reads the last `maxLen` tokens of
 * [start, history]. Batches are right-padded: the attention is causal, so padding after a
 * sequence changes nothing before it, and its targets are -1 (untrained).
 *
 * Differences from the paper's model, which are the engine's architecture (Qwen2): rotary
 * positions instead of learned position embeddings, RMSNorm, a SwiGLU feed-forward, no dropout,
 * and full softmax cross-entropy over the items instead of one sampled negative per position (as
 * RecBole's SASRec with loss_type CE). The output layer is tied to the item embeddings, as
 * SASRec's scores are <h, e_item>.
 *
 * Training is the SFT trainer's path (trainers/sft): seeded batches per epoch, mean token
 * cross-entropy, AdamW, global-norm clipping, warmup then cosine decay.
 */
import type { Recaller, TrainSet } from "../../worlds/rec/index.js";
import { qwen2Config } from "../../models/config.js";
import { initParams } from "../../models/init.js";
import { PolicyModel } from "../../models/model.js";
import { batchExamples, makeBatch, type EncodedExample } from "../sft/batches.js";
import { learningRate } from "../sft/schedule.js";

export interface SasrecOptions {
  /** Hidden size (item embedding size). */
  readonly dim?: number;
  readonly layers?: number;
  readonly heads?: number;
  /** Inputs per sequence at most (SASRec's max_seq_length). */
  readonly maxLen?: number;
  readonly epochs?: number;
  /** Sequences (windows) per optimizer step. */
  readonly batch?: number;
  readonly lr?: number;
  readonly weightDecay?: number;
  readonly seed?: number;
}

export const SASREC_DEFAULTS: Required<SasrecOptions> = {
  dim: 64,
  layers: 2,
  heads: 2,
  maxLen: 50,
  epochs: 20,
  batch: 32,
  lr: 2e-3,
  weightDecay: 0,
  seed: 0,
};

export interface SasrecRecaller extends Recaller {
  readonly model: PolicyModel;
  /** Mean training cross-entropy (nats per item) of each epoch. */
  readonly losses: readonly number[];
}

export class SasrecError extends Error {}

/** The training windows of one user's sequence (the start token first), as SFT examples. */
export function sasrecWindows(row: readonly number[], start: number, maxLen: number): EncodedExample[] {
  const tok = [start, ...row];
  const out: EncodedExample[] = [];
  // Inputs tok[s..e-1], targets tok[s+1..e]; windows from the end, the first may be shorter.
  for (let e = tok.length - 1; e > 0; e -= maxLen) {
    const s = Math.max(0, e - maxLen);
    const n = e - s;
    const tokens = Int32Array.from(tok.slice(s, e));
    const targets = Int32Array.from(tok.slice(s + 1, e + 1));
    out.push({ tokens, targets, weights: new Float32Array(n).fill(1), trained: n, line: 0 });
  }
  return out;
}

/**
 * Trains the recaller on `train`'s sequences. `onEpoch` gets the epochs done, their total and the
 * epoch's mean loss (a progress bar's note).
 */
export function fitSasrec(train: TrainSet, options: SasrecOptions = {}, onEpoch?: (done: number, total: number, loss: number) => void): SasrecRecaller {
  const o = { ...SASREC_DEFAULTS, ...options };
  for (const key of ["dim", "layers", "heads", "maxLen", "epochs", "batch"] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 1) throw new SasrecError(`sasrec: ${key} must be a whole number >= 1, got ${o[key]}`);
  }
  if (o.dim % o.heads !== 0) throw new SasrecError(`sasrec: dim ${o.dim} is not a multiple of heads ${o.heads}`);
  if (!(o.lr > 0)) throw new SasrecError(`sasrec: lr must be above 0, got ${o.lr}`);
  const start = train.items;
  const examples = train.rows.flatMap((row) => sasrecWindows(row, start, o.maxLen));
  if (examples.length === 0) throw new SasrecError("sasrec: no user has a training item to learn from");

  const engine = {
    vocabSize: train.items + 1,
    hiddenSize: o.dim,
    numLayers: o.layers,
    numHeads: o.heads,
    numKvHeads: o.heads,
    headDim: o.dim / o.heads,
    intermediateSize: 2 * o.dim,
    maxPositionEmbeddings: o.maxLen,
    rmsNormEps: 1e-6,
    ropeTheta: 10000,
    tieWordEmbeddings: true,
    attentionBias: true,
  };
  const model = new PolicyModel(qwen2Config(engine, { bos: start, eos: start }));
  initParams(model, `sasrec:${o.seed}`);

  const batch = Math.min(o.batch, examples.length);
  const perEpoch = Math.max(1, Math.floor(examples.length / batch));
  const total = perEpoch * o.epochs;
  const schedule = { lr: o.lr, minLr: o.lr / 10, warmupSteps: Math.min(perEpoch, Math.ceil(total / 20)), totalSteps: total };
  const losses: number[] = [];
  let epochLoss = 0;
  let epochTokens = 0;
  for (let step = 0; step < total; step++) {
    const exs = batchExamples(examples.length, batch, step, o.seed).map((i) => examples[i]!);
    const tokens = exs.reduce((a, e) => a + e.trained, 0);
    model.trained.zeroGrad();
    const r = model.passSync(makeBatch(exs, tokens), true);
    const gradNorm = model.trained.gradNorm();
    model.trained.adamwStep({ lr: learningRate(schedule, step), beta1: 0.9, beta2: 0.98, eps: 1e-8, weightDecay: o.weightDecay, step: step + 1, gradScale: gradNorm > 1 ? 1 / gradNorm : 1 });
    epochLoss += r.loss * tokens;
    epochTokens += tokens;
    if ((step + 1) % perEpoch === 0) {
      losses.push(epochLoss / epochTokens);
      onEpoch?.(losses.length, o.epochs, losses[losses.length - 1]!);
      epochLoss = epochTokens = 0;
    }
  }

  const items = train.items;
  return {
    name: "sasrec",
    model,
    losses,
    score(_user, history, out) {
      const ids = [start, ...history].slice(-o.maxLen);
      const logits = model.lastLogits(ids);
      for (let i = 0; i < items; i++) out[i] = logits[i]!;
    },
  };
}

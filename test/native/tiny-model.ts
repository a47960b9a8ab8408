/**
 * The tiny configuration the gradient checks run on, seeded parameters for it and a batch with
 * positive, negative and zero weights and ignored targets (the per-token-weighted loss a
 * policy-gradient trainer uses).
 */
import type { EngineConfig, NativeModel } from "../../models/native.js";
import type { Rng } from "../../worlds/core/rng.js";

export const TINY: EngineConfig = {
  vocabSize: 13,
  hiddenSize: 8,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 4,
  intermediateSize: 12,
  maxPositionEmbeddings: 32,
  rmsNormEps: 1e-6,
  ropeTheta: 50,
  tieWordEmbeddings: false,
  attentionBias: true,
};

/** Uniform in [-0.45, 0.45), norm weights in [0.7, 1.3). */
export function randomize(m: NativeModel, rng: Rng): void {
  const p = m.params();
  for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * 0.9;
  for (const t of m.tensors()) if (t.name.endsWith("norm.weight")) for (let i = t.offset; i < t.offset + t.size; i++) p[i] = 0.7 + rng.next() * 0.6;
}

export function weightedBatch(rng: Rng, B: number, T: number, V: number) {
  const tokens = Int32Array.from({ length: B * T }, () => rng.int(V));
  const targets = Int32Array.from({ length: B * T }, (_, i) => (i % 5 === 4 ? -1 : rng.int(V)));
  const weights = Float32Array.from({ length: B * T }, (_, i) => (i % 7 === 3 ? 0 : rng.next() * 2 - 0.7));
  return { tokens, targets, weights, B, T };
}

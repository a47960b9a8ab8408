/**
 * The engine's policy-gradient head (temperature, per-position entropy, entropy term in the loss),
 * checked against the logits the same model gives (softmax computed here, in float64) and its
 * gradient against central finite differences.
 */
import { describe, expect, it } from "vitest";
import { centralDifferences } from "../native/finite-differences.js";
import { loadNative, type EngineConfig, type NativeModel } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";

const { Model } = loadNative();

const cfg: EngineConfig = {
  vocabSize: 11,
  hiddenSize: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 4,
  intermediateSize: 12,
  maxPositionEmbeddings: 16,
  rmsNormEps: 1e-6,
  ropeTheta: 100,
  tieWordEmbeddings: false,
  attentionBias: true,
};

function randomModel(seed: string): NativeModel {
  const m = new Model(cfg, { dtype: "float64" });
  const rng = Rng.seeded(seed);
  const p = m.params();
  for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * 1.2;
  return m;
}

const B = 2;
const T = 5;
const tokens = Int32Array.from([1, 4, 2, 9, 3, 0, 7, 7, 5, 10]);
const targets = Int32Array.from([4, 2, 9, -1, 6, 7, 7, 5, 10, -1]);

/** log softmax(logits / temp) rows and their entropies, from the model's own logits. */
function reference(m: NativeModel, temp: number): { logp: number[]; entropy: number[] } {
  const z = m.logits(tokens, B, T);
  const V = cfg.vocabSize;
  const logp: number[] = [];
  const entropy: number[] = [];
  for (let r = 0; r < B * T; r++) {
    const u = Array.from({ length: V }, (_, i) => z[r * V + i]! / temp);
    const mx = Math.max(...u);
    const lse = mx + Math.log(u.reduce((a, x) => a + Math.exp(x - mx), 0));
    const p = u.map((x) => Math.exp(x - lse));
    const t = targets[r]!;
    logp.push(t < 0 ? 0 : u[t]! - lse);
    entropy.push(t < 0 ? 0 : -p.reduce((a, pi, i) => a + pi * (u[i]! - lse), 0));
  }
  return { logp, entropy };
}

describe("policy-gradient head", () => {
  it("log-probs and entropies under a temperature match softmax(logits / T)", () => {
    const m = randomModel("head");
    for (const temp of [1, 0.7, 1.6]) {
      const r = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: temp, entropy: true });
      const ref = reference(m, temp);
      for (let i = 0; i < B * T; i++) {
        expect(r.logprobs[i]!).toBeCloseTo(ref.logp[i]!, 10);
        expect(r.entropy![i]!).toBeCloseTo(ref.entropy[i]!, 10);
      }
      expect(r.entropy![3]).toBe(0);
    }
  });

  it("without options the pass is the plain cross-entropy one (same log-probs)", () => {
    const m = randomModel("plain");
    const a = m.forwardBackward(tokens, targets, null, B, T, false);
    const b = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 1 });
    expect(a.entropy).toBeUndefined();
    for (let i = 0; i < B * T; i++) expect(b.logprobs[i]!).toBeCloseTo(a.logprobs[i]!, 12);
    expect(b.loss).toBeCloseTo(a.loss, 10);
  });

  it("the gradient of -sum w logp - sum e H at a temperature matches finite differences", async () => {
    const m = randomModel("grad");
    const rng = Rng.seeded("grad-weights");
    const weights = Float32Array.from({ length: B * T }, () => rng.next() * 2 - 1);
    const entropyWeights = Float32Array.from({ length: B * T }, () => rng.next() * 1.5 - 0.5);
    const opts = { temperature: 0.8, entropyWeights };
    m.zeroGrad();
    const loss0 = m.forwardBackward(tokens, targets, weights, B, T, true, opts).loss;
    // The loss is what it says it is.
    const parts = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 0.8, entropy: true });
    let expected = 0;
    for (let i = 0; i < B * T; i++) expected += -weights[i]! * parts.logprobs[i]! - entropyWeights[i]! * parts.entropy![i]!;
    expect(loss0).toBeCloseTo(expected, 10);

    const g = Float64Array.from(m.grads());
    const picks = m.tensors().flatMap((t) => rng.sample(Array.from({ length: t.size }, (_, j) => j), Math.min(t.size, 12)).map((k) => t.offset + k));
    const { maxErr, maxGrad: maxG } = await centralDifferences(m.params(), picks, g, () => m.forwardBackward(tokens, targets, weights, B, T, false, opts).loss);
    expect(maxG).toBeGreaterThan(1e-3);
    expect(maxErr).toBeLessThan(1e-7 * Math.max(1, maxG));
  });

  it("refuses a temperature that is not positive", () => {
    const m = randomModel("bad");
    expect(() => m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 0 })).toThrow(/temperature/);
  });
});

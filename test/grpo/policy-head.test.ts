/**
 * The engine's policy-gradient head (temperature, per-position entropy, entropy term in the loss,
 * masks of a grammar's allowed tokens), checked against the logits the same model gives (softmax
 * computed here, in float64) and its gradient against central finite differences.
 */
import { describe, expect, it } from "vitest";
import { centralDifferences } from "../native/finite-differences.js";
import { loadNative, type EngineConfig, type NativeModel, type TokenMasks } from "../../models/native.js";
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

/**
 * log softmax(logits / temp) rows and their entropies, from the model's own logits; where `allowed`
 * gives a row its tokens, the softmax is over those only.
 */
function reference(m: NativeModel, temp: number, allowed?: readonly (readonly number[] | undefined)[]): { logp: number[]; entropy: number[] } {
  const z = m.logits(tokens, B, T);
  const V = cfg.vocabSize;
  const logp: number[] = [];
  const entropy: number[] = [];
  for (let r = 0; r < B * T; r++) {
    const ids = allowed?.[r] ?? Array.from({ length: V }, (_, i) => i);
    const u = ids.map((i) => z[r * V + i]! / temp);
    const mx = Math.max(...u);
    const lse = mx + Math.log(u.reduce((a, x) => a + Math.exp(x - mx), 0));
    const p = u.map((x) => Math.exp(x - lse));
    const t = targets[r]!;
    logp.push(t < 0 ? 0 : u[ids.indexOf(t)]! - lse);
    entropy.push(t < 0 ? 0 : -p.reduce((a, pi, k) => a + pi * (u[k]! - lse), 0));
  }
  return { logp, entropy };
}

/**
 * Masks as the trainer lays them out: a list per position (undefined: the whole vocabulary), equal
 * lists stored once.
 */
function masksOf(lists: readonly (readonly number[] | undefined)[]): TokenMasks {
  const rows = new Int32Array(2 * lists.length);
  const pool: number[] = [];
  const seen = new Map<string, number>();
  lists.forEach((l, r) => {
    if (!l) return;
    const key = l.join(",");
    let at = seen.get(key);
    if (at === undefined) {
      seen.set(key, (at = pool.length));
      pool.push(...l);
    }
    rows[2 * r] = at;
    rows[2 * r + 1] = l.length;
  });
  return { rows, tokens: Int32Array.from(pool) };
}

// Per position: a grammar's allowed tokens (its target among them), a forced token, the whole
// vocabulary, a list shared by two positions; position 3 and 9 predict nothing.
const allowed: (number[] | undefined)[] = [[1, 4, 8], [2, 3], [0, 5, 9, 10], [2, 3], [6], undefined, [3, 7, 9], [5], [1, 4, 8, 10], undefined];

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

  it("under masks, log-probs and entropies are those of softmax(logits / T) over the allowed tokens; a forced token has 0", () => {
    const m = randomModel("masked");
    for (const temp of [1, 0.7]) {
      const r = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: temp, entropy: true, masks: masksOf(allowed) });
      const ref = reference(m, temp, allowed);
      for (let i = 0; i < B * T; i++) {
        expect(r.logprobs[i]!).toBeCloseTo(ref.logp[i]!, 10);
        expect(r.entropy![i]!).toBeCloseTo(ref.entropy[i]!, 10);
      }
      expect([r.logprobs[4], r.entropy![4], r.logprobs[7], r.entropy![7]]).toEqual([0, 0, 0, 0]);
      // The unmasked positions are as without masks.
      const free = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: temp });
      expect(r.logprobs[5]).toBe(free.logprobs[5]);
    }
  });

  it("under masks, the gradient of -sum w logp - sum e H matches finite differences, and a forced token adds none", async () => {
    const m = randomModel("masked-grad");
    const rng = Rng.seeded("masked-weights");
    const weights = Float32Array.from({ length: B * T }, () => rng.next() * 2 - 1);
    const entropyWeights = Float32Array.from({ length: B * T }, () => rng.next() * 1.5 - 0.5);
    const opts = { temperature: 0.8, entropyWeights, masks: masksOf(allowed) };
    m.zeroGrad();
    m.forwardBackward(tokens, targets, weights, B, T, true, opts);
    const g = Float64Array.from(m.grads());
    const picks = m.tensors().flatMap((t) => rng.sample(Array.from({ length: t.size }, (_, j) => j), Math.min(t.size, 12)).map((k) => t.offset + k));
    const { maxErr, maxGrad: maxG } = await centralDifferences(m.params(), picks, g, () => m.forwardBackward(tokens, targets, weights, B, T, false, opts).loss);
    expect(maxG).toBeGreaterThan(1e-3);
    expect(maxErr).toBeLessThan(1e-7 * Math.max(1, maxG));

    // Only the forced positions weighted: no gradient at all.
    const forcedOnly = Float32Array.from({ length: B * T }, (_, i) => (i === 4 || i === 7 ? 1 : 0));
    m.zeroGrad();
    m.forwardBackward(tokens, targets, forcedOnly, B, T, true, { temperature: 0.8, masks: masksOf(allowed) });
    expect(m.grads().every((x) => x === 0)).toBe(true);
  });

  it("refuses masks that do not fit: a target outside its mask, tokens out of order or outside the vocabulary, ranges past the list", () => {
    const m = randomModel("bad-masks");
    const pass = (masks: TokenMasks) => m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 1, masks });
    const ok = masksOf(allowed);
    expect(() => pass(ok)).not.toThrow();
    const withList = (r: number, list: number[]) => masksOf(allowed.map((l, i) => (i === r ? list : l)));
    expect(() => pass(withList(0, [1, 8]))).toThrow(/position 0: its target 4 is not among its allowed tokens/);
    expect(() => pass(withList(1, [3, 2]))).toThrow(/position 1: its tokens must increase/);
    expect(() => pass(withList(2, [0, 5, 9, 11]))).toThrow(/position 2: token 11 is outside the vocabulary/);
    const past = { rows: Int32Array.from(ok.rows), tokens: ok.tokens };
    past.rows[1] = ok.tokens.length + 1;
    expect(() => pass(past)).toThrow(/position 0: tokens \[0, \d+\) run past the \d+ mask tokens/);
    expect(() => pass({ rows: new Int32Array(3), tokens: ok.tokens })).toThrow(/masks.rows must hold an \(offset, length\) pair per position/);
  });

  it("refuses a temperature that is not positive", () => {
    const m = randomModel("bad");
    expect(() => m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 0 })).toThrow(/temperature/);
  });
});

/**
 * Every parameter tensor's gradient against central finite differences of the loss, in float64,
 * on tiny configurations that together cover every layer: embeddings (tied and untied LM head),
 * RMSNorm, q/k/v with and without bias, rotary embeddings, grouped-query attention at several
 * group sizes, the output projection, the SwiGLU MLP and the final norm. The loss is the
 * per-token weighted one (-sum w log p), with positive, negative and zero weights and ignored
 * targets, so the hook a policy-gradient trainer uses is what gets checked.
 */
import { describe, expect, it } from "vitest";
import { loadNative, type EngineConfig, type NativeModel } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";
import { centralDifferences } from "./finite-differences.js";

const { Model } = loadNative();

const base: EngineConfig = {
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

function randomize(m: NativeModel, rng: Rng): void {
  const p = m.params();
  for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * 0.9;
  for (const t of m.tensors()) if (t.name.endsWith("norm.weight")) for (let i = t.offset; i < t.offset + t.size; i++) p[i] = 0.7 + rng.next() * 0.6;
}

function batch(rng: Rng, B: number, T: number, V: number) {
  const tokens = Int32Array.from({ length: B * T }, () => rng.int(V));
  const targets = Int32Array.from({ length: B * T }, (_, i) => (i % 5 === 4 ? -1 : rng.int(V)));
  const weights = Float32Array.from({ length: B * T }, (_, i) => (i % 7 === 3 ? 0 : rng.next() * 2 - 0.7));
  return { tokens, targets, weights, B, T };
}

describe("gradients against finite differences (float64)", () => {
  const cases: [string, Partial<EngineConfig>][] = [
    ["untied LM head, q/k/v bias, 2 query heads per kv head", {}],
    ["tied embeddings, no bias, 1 query head per kv head", { tieWordEmbeddings: true, attentionBias: false, numKvHeads: 4 }],
    ["one kv head for four query heads, three layers", { numKvHeads: 1, numLayers: 3 }],
  ];
  for (const [name, over] of cases) {
    it(name, async () => {
      const cfg = { ...base, ...over };
      const m = new Model(cfg, { dtype: "float64" });
      const rng = Rng.seeded(name);
      randomize(m, rng);
      const b = batch(rng, 2, 6, cfg.vocabSize);
      m.zeroGrad();
      m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true);
      const grads = Float64Array.from(m.grads());
      const p = m.params();
      const loss = () => m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, false).loss;
      const seen = new Set<string>();
      for (const t of m.tensors()) {
        // Every element of small tensors; 40 seeded picks of larger ones.
        const picks = t.size <= 40 ? Array.from({ length: t.size }, (_, k) => k) : rng.sample(Array.from({ length: t.size }, (_, k) => k), 40);
        const { maxErr, maxGrad } = await centralDifferences(p, picks.map((k) => t.offset + k), grads, loss);
        expect(maxGrad, `${t.name}: the gradient should not vanish`).toBeGreaterThan(1e-4);
        expect(maxErr, `${t.name}: |finite difference - backward|`).toBeLessThan(1e-7 * Math.max(1, maxGrad));
        seen.add(t.name.replace(/layers\.\d+\./, "layers.*."));
      }
      // Every kind of tensor was checked.
      for (const kind of ["model.embed_tokens.weight", "model.layers.*.input_layernorm.weight", "model.layers.*.self_attn.q_proj.weight", "model.layers.*.self_attn.k_proj.weight", "model.layers.*.self_attn.v_proj.weight", "model.layers.*.self_attn.o_proj.weight", "model.layers.*.post_attention_layernorm.weight", "model.layers.*.mlp.gate_proj.weight", "model.layers.*.mlp.up_proj.weight", "model.layers.*.mlp.down_proj.weight", "model.norm.weight"])
        expect(seen.has(kind), kind).toBe(true);
      if (cfg.attentionBias) expect(seen.has("model.layers.*.self_attn.q_proj.bias")).toBe(true);
      expect(seen.has("lm_head.weight")).toBe(!cfg.tieWordEmbeddings);
    });
  }

  it("float32 gradients agree with float64 ones (the SIMD kernels backpropagate the same function)", () => {
    const cfg = { ...base, hiddenSize: 32, headDim: 8, intermediateSize: 48, vocabSize: 40 };
    const m64 = new Model(cfg, { dtype: "float64" });
    const m32 = new Model(cfg, { dtype: "float32" });
    const rng = Rng.seeded("f32-vs-f64");
    randomize(m64, rng);
    m32.params().set(m64.params());
    const b = batch(rng, 3, 9, cfg.vocabSize);
    m64.zeroGrad();
    m32.zeroGrad();
    const l64 = m64.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true).loss;
    const l32 = m32.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true).loss;
    expect(Math.abs(l32 - l64)).toBeLessThan(1e-4 * Math.abs(l64));
    const g64 = m64.grads();
    const g32 = m32.grads();
    let scale = 0;
    let err = 0;
    for (let i = 0; i < g64.length; i++) {
      scale = Math.max(scale, Math.abs(g64[i]!));
      err = Math.max(err, Math.abs(g64[i]! - g32[i]!));
    }
    expect(err / scale).toBeLessThan(1e-4);
  });

  it("accumulates: two half-weighted passes give the gradient of one full pass", () => {
    const m = new Model(base, { dtype: "float64" });
    const rng = Rng.seeded("accumulate");
    randomize(m, rng);
    const b = batch(rng, 2, 5, base.vocabSize);
    m.zeroGrad();
    m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true);
    const once = Float64Array.from(m.grads());
    m.zeroGrad();
    const half = b.weights.map((w) => w / 2);
    m.forwardBackward(b.tokens, b.targets, half, b.B, b.T, true);
    m.forwardBackward(b.tokens, b.targets, half, b.B, b.T, true);
    const twice = m.grads();
    for (let i = 0; i < once.length; i++) expect(twice[i]).toBeCloseTo(once[i]!, 12);
  });
});

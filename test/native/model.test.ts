import { describe, expect, it } from "vitest";
import { loadNative, type EngineConfig, type NativeModel } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";

const native = loadNative();
const cfg: EngineConfig = {
  vocabSize: 50,
  hiddenSize: 32,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  intermediateSize: 64,
  maxPositionEmbeddings: 64,
  rmsNormEps: 1e-6,
  ropeTheta: 10000,
  tieWordEmbeddings: true,
  attentionBias: true,
};

function model(dtype: "float32" | "float64" = "float32", seed = "m"): NativeModel {
  const m = new native.Model(cfg, { dtype });
  const rng = Rng.seeded(seed);
  const p = m.params();
  for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * 0.5;
  for (const t of m.tensors()) if (t.name.endsWith("norm.weight")) p.fill(1, t.offset, t.offset + t.size);
  return m;
}

const logSoftmax = (z: ArrayLike<number>, i: number) => {
  let m = -Infinity;
  for (let k = 0; k < z.length; k++) m = Math.max(m, z[k]!);
  let s = 0;
  for (let k = 0; k < z.length; k++) s += Math.exp(z[k]! - m);
  return z[i]! - m - Math.log(s);
};

describe("native model", () => {
  it("lays out parameters under Hugging Face names with the config's shapes", () => {
    const m = model();
    const names = m.tensors().map((t) => t.name);
    expect(names.slice(0, 8)).toEqual([
      "model.embed_tokens.weight",
      "model.layers.0.input_layernorm.weight",
      "model.layers.0.self_attn.q_proj.weight",
      "model.layers.0.self_attn.k_proj.weight",
      "model.layers.0.self_attn.v_proj.weight",
      "model.layers.0.self_attn.q_proj.bias",
      "model.layers.0.self_attn.k_proj.bias",
      "model.layers.0.self_attn.v_proj.bias",
    ]);
    expect(names).not.toContain("lm_head.weight");
    const shape = Object.fromEntries(m.tensors().map((t) => [t.name, t.shape]));
    expect(shape["model.layers.1.self_attn.k_proj.weight"]).toEqual([16, 32]);
    expect(shape["model.layers.1.mlp.down_proj.weight"]).toEqual([32, 64]);
    expect(m.tensors().reduce((a, t) => a + t.size, 0)).toBe(m.numParams);
    expect(m.tensors().filter((t) => t.decay).every((t) => t.shape.length === 2)).toBe(true);
  });

  it("float32 and float64 agree, and log-probs are the log-softmax of the logits", () => {
    const m32 = model("float32");
    const m64 = model("float64");
    const tokens = Int32Array.from([3, 14, 15, 9, 26, 5, 35, 8]);
    const l32 = m32.logits(tokens, 2, 4);
    const l64 = m64.logits(tokens, 2, 4);
    for (let i = 0; i < l64.length; i++) expect(Math.abs(l32[i]! - l64[i]!)).toBeLessThan(2e-5);
    const targets = Int32Array.from([14, 15, 9, -1, 5, 35, 8, 1]);
    const r = m64.forwardBackward(tokens, targets, null, 2, 4, false);
    for (let row = 0; row < 8; row++) {
      const want = targets[row]! < 0 ? 0 : logSoftmax(l64.subarray(row * cfg.vocabSize, (row + 1) * cfg.vocabSize), targets[row]!);
      expect(r.logprobs[row]).toBeCloseTo(want, 10);
    }
    expect(r.loss).toBeCloseTo(-Array.from(r.logprobs).reduce((a, b) => a + b, 0), 10);
  });

  it("generates with a KV cache exactly what full passes predict, for ragged batches", () => {
    const m = model("float64");
    const prompts = [Int32Array.from([1, 2, 3, 4, 5]), Int32Array.from([7]), Int32Array.from([9, 8, 7])];
    const gen = new native.Generation(m, prompts, { maxNewTokens: 6, temperature: 0 });
    while (gen.step(2) > 0);
    prompts.forEach((p, i) => {
      const r = gen.result(i);
      expect(r.finishReason).toBe("length");
      expect(r.tokens.length).toBe(6);
      const seq = Int32Array.from([...p, ...r.tokens]);
      const logits = m.logits(seq, 1, seq.length);
      for (let k = 0; k < r.tokens.length; k++) {
        const row = logits.subarray((p.length - 1 + k) * cfg.vocabSize, (p.length + k) * cfg.vocabSize);
        let best = 0;
        for (let v = 1; v < cfg.vocabSize; v++) if (row[v]! > row[best]!) best = v;
        expect(r.tokens[k]).toBe(best);
        expect(r.logprobs[k]).toBeCloseTo(logSoftmax(row, best), 5);
      }
    });
  });

  it("stops a sequence at a stop token and keeps it", () => {
    const m = model();
    const first = new native.Generation(m, [Int32Array.from([1, 2])], { maxNewTokens: 5, temperature: 0 });
    first.step(5);
    const greedy = first.result(0).tokens;
    const stop = greedy[2]!;
    const gen = new native.Generation(m, [Int32Array.from([1, 2])], { maxNewTokens: 5, temperature: 0, stopTokenIds: [stop] });
    gen.step(5);
    const r = gen.result(0);
    expect(r.finishReason).toBe("stop_token");
    expect(Array.from(r.tokens)).toEqual(Array.from(greedy.slice(0, greedy.indexOf(stop) + 1)));
  });

  it("takes AdamW steps as PyTorch's AdamW does, with decay on matrices only and gradient scaling", () => {
    const m = model("float64");
    const tokens = Int32Array.from([1, 2, 3, 4, 5, 6]);
    const targets = Int32Array.from([2, 3, 4, 5, 6, 7]);
    const p0 = Float64Array.from(m.params());
    const opts = { lr: 0.01, beta1: 0.8, beta2: 0.95, eps: 1e-6, weightDecay: 0.1 };
    const m1 = new Float64Array(p0.length);
    const v1 = new Float64Array(p0.length);
    const want = Float64Array.from(p0);
    const decay = new Uint8Array(p0.length);
    for (const t of m.tensors()) if (t.decay) decay.fill(1, t.offset, t.offset + t.size);
    for (let step = 1; step <= 3; step++) {
      m.zeroGrad();
      m.forwardBackward(tokens, targets, null, 1, 6, true);
      const g = Float64Array.from(m.grads());
      const scale = step === 2 ? 0.5 : 1;
      m.adamwStep({ ...opts, step, gradScale: scale });
      for (let i = 0; i < want.length; i++) {
        const gi = g[i]! * scale;
        if (decay[i]) want[i]! *= 1 - opts.lr * opts.weightDecay;
        m1[i] = opts.beta1 * m1[i]! + (1 - opts.beta1) * gi;
        v1[i] = opts.beta2 * v1[i]! + (1 - opts.beta2) * gi * gi;
        const bc1 = 1 - opts.beta1 ** step;
        const bc2 = 1 - opts.beta2 ** step;
        want[i] = want[i]! - (opts.lr / bc1) * (m1[i]! / (Math.sqrt(v1[i]!) / Math.sqrt(bc2) + opts.eps));
      }
      const got = m.params();
      for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 12);
    }
    const { m: mm, v } = m.moments();
    for (let i = 0; i < 50; i++) {
      expect(mm[i]).toBeCloseTo(m1[i]!, 12);
      expect(v[i]).toBeCloseTo(v1[i]!, 14);
    }
  });

  it("reports the global gradient norm", () => {
    const m = model("float64");
    m.zeroGrad();
    m.forwardBackward(Int32Array.from([1, 2, 3]), Int32Array.from([2, 3, 4]), null, 1, 3, true);
    const g = m.grads();
    expect(m.gradNorm()).toBeCloseTo(Math.sqrt(Array.from(g).reduce((a, x) => a + x * x, 0)), 10);
  });

  it("gives the same bits for the same inputs, whatever the number of threads", () => {
    const run = (m: NativeModel) => {
      m.zeroGrad();
      const r = m.forwardBackward(Int32Array.from({ length: 64 }, (_, i) => (i * 7) % 50), Int32Array.from({ length: 64 }, (_, i) => (i * 3) % 50), null, 4, 16, true);
      return { loss: r.loss, grads: Float32Array.from(m.grads()) };
    };
    const a = run(model("float32", "same"));
    const b = run(model("float32", "same"));
    native.setThreads(1);
    const c = run(model("float32", "same"));
    native.setThreads(0);
    expect(b).toEqual(a);
    expect(c.loss).toBe(a.loss);
    expect(c.grads).toEqual(a.grads);
  });

  it("rejects bad input with clear errors", async () => {
    const m = model();
    expect(() => m.logits(Int32Array.from([1, 50]), 1, 2)).toThrow(/token id 50 at index 1 is outside the vocabulary \[0, 50\)/);
    expect(() => m.forwardBackward(Int32Array.from([1, 2]), Int32Array.from([1]), null, 1, 2, false)).toThrow(/batch \* seqLen/);
    expect(() => m.logits(Int32Array.from({ length: 65 }, () => 1), 1, 65)).toThrow(/max_position_embeddings/);
    expect(() => new native.Model({ ...cfg, numKvHeads: 3 })).toThrow(/multiple of num_key_value_heads/);
    expect(() => new native.Generation(m, [new Int32Array(0)], { maxNewTokens: 2 })).toThrow(/prompt 0 is empty/);
    const pending = m.forwardBackwardAsync(Int32Array.from([1, 2]), Int32Array.from([2, 3]), null, 1, 2, true);
    expect(() => m.zeroGrad()).toThrow(/busy/);
    await pending;
    expect(() => m.zeroGrad()).not.toThrow();
  });
});

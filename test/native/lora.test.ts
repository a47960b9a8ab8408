/**
 * LoRA adapters in the native engine: every adapter tensor's gradient against central finite
 * differences (float64, with and without dropout, every target and a subset), the frozen base
 * (no gradients), the identity of a fresh adapter (B = 0), the adapter against its merged weights
 * W + scale B A, and generation with an adapter chosen per Generation.
 */
import { describe, expect, it } from "vitest";
import { loadNative, type EngineConfig, type NativeAdapter, type NativeModel } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";
import { centralDifferences } from "./finite-differences.js";
import { randomize, TINY, weightedBatch } from "./tiny-model.js";

const { Model, LoraAdapter, Generation } = loadNative();
const ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

const base = TINY;

function fill(p: { length: number; [i: number]: number }, rng: Rng, spread: number): void {
  for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * spread;
}

function randomModel(cfg: EngineConfig, rng: Rng, dtype: "float32" | "float64" = "float64"): NativeModel {
  const m = new Model(cfg, { dtype });
  randomize(m, rng);
  return m;
}

const batch = weightedBatch;

/** A grammar's masks as the trainer passes them: each predicted position allows its target and a few others (one only its target). */
function randomMasks(rng: Rng, targets: Int32Array, vocab: number): { rows: Int32Array; tokens: Int32Array } {
  const rows = new Int32Array(2 * targets.length);
  const tokens: number[] = [];
  targets.forEach((t, r) => {
    if (t < 0) return;
    const allowed = new Set([t]);
    if (r % 4 !== 1) for (let k = 0; k < 3; k++) allowed.add(rng.int(vocab));
    rows[2 * r] = tokens.length;
    rows[2 * r + 1] = allowed.size;
    tokens.push(...[...allowed].sort((x, y) => x - y));
  });
  return { rows, tokens: Int32Array.from(tokens) };
}

describe("LoRA gradients against finite differences (float64)", () => {
  const cases: [string, { targets: string[]; dropout: number; rank: number; policy?: boolean; masked?: boolean }][] = [
    ["every linear layer, rank 3, no dropout", { targets: ALL, dropout: 0, rank: 3 }],
    ["every linear layer, rank 2, dropout 0.3 (the mask drawn again in backward)", { targets: ALL, dropout: 0.3, rank: 2 }],
    ["q_proj and v_proj only, through the policy-gradient head", { targets: ["q_proj", "v_proj"], dropout: 0.2, rank: 4, policy: true }],
    ["every linear layer through the policy head under grammar masks", { targets: ALL, dropout: 0.2, rank: 2, policy: true, masked: true }],
  ];
  for (const [name, c] of cases) {
    it(name, async () => {
      const rng = Rng.seeded(name);
      const m = randomModel(base, rng);
      const a = new LoraAdapter(m, { rank: c.rank, scale: 1.7, dropout: c.dropout, targets: c.targets });
      expect(a.targets).toEqual(c.targets);
      fill(a.params(), rng, 0.9);
      m.setAdapter(a);
      const b = batch(rng, 2, 6, base.vocabSize);
      const options = {
        dropoutSeed: 1234,
        ...(c.policy ? { temperature: 0.8, entropyWeights: Float32Array.from(b.weights, (w) => w / 3) } : {}),
        ...(c.masked ? { masks: randomMasks(rng, b.targets, base.vocabSize) } : {}),
      };
      m.zeroGrad();
      a.zeroGrad();
      m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true, options);
      const grads = Float64Array.from(a.grads());
      // The base model is frozen: nothing reached its gradients.
      expect(m.grads().every((g) => g === 0)).toBe(true);
      if (c.masked) {
        // The masks are applied: a forced token (its target alone allowed) has log-prob 0.
        const { logprobs } = m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, false, options);
        const forced = [...b.targets.keys()].filter((r) => b.targets[r]! >= 0 && r % 4 === 1);
        expect(forced.length).toBeGreaterThan(0);
        for (const r of forced) expect(logprobs[r]).toBe(0);
      }
      const loss = () => m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, false, options).loss;
      const p = a.params();
      const kinds = new Set<string>();
      for (const t of a.tensors()) {
        const picks = t.size <= 24 ? Array.from({ length: t.size }, (_, k) => k) : rng.sample(Array.from({ length: t.size }, (_, k) => k), 24);
        const { maxErr, maxGrad } = await centralDifferences(p, picks.map((k) => t.offset + k), grads, loss);
        expect(maxGrad, `${t.name}: the gradient should not vanish`).toBeGreaterThan(1e-4);
        expect(maxErr, `${t.name}: |finite difference - backward|`).toBeLessThan(1e-7 * Math.max(1, maxGrad));
        kinds.add(t.name.replace(/layers\.\d+\./, "layers.*."));
      }
      expect(kinds.size).toBe(2 * c.targets.length);
      if (c.dropout > 0) {
        // Another seed draws another mask (so the seed is what was checked), and no seed: no dropout.
        const other = m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, false, { ...options, dropoutSeed: 99 }).loss;
        expect(other).not.toBeCloseTo(loss(), 6);
        const { dropoutSeed: _, ...eval_ } = options;
        const plain = m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, false, c.policy ? eval_ : undefined).loss;
        expect(plain).not.toBeCloseTo(loss(), 6);
      }
    });
  }
});

describe("LoRA adapters on the model", () => {
  it("name their tensors as PEFT saves them, with PEFT's shapes, A before B", () => {
    const m = new Model(base);
    const a = new LoraAdapter(m, { rank: 4, scale: 2, targets: ["v_proj", "down_proj", "q_proj"] });
    expect(a.tensors().map((t) => [t.name, t.shape])).toEqual([
      ["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", [4, 8]],
      ["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", [16, 4]],
      ["base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight", [4, 8]],
      ["base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight", [8, 4]],
      ["base_model.model.model.layers.0.mlp.down_proj.lora_A.weight", [4, 12]],
      ["base_model.model.model.layers.0.mlp.down_proj.lora_B.weight", [8, 4]],
      ["base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight", [4, 8]],
      ["base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight", [16, 4]],
      ["base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight", [4, 8]],
      ["base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight", [8, 4]],
      ["base_model.model.model.layers.1.mlp.down_proj.lora_A.weight", [4, 12]],
      ["base_model.model.model.layers.1.mlp.down_proj.lora_B.weight", [8, 4]],
    ]);
    expect(a.numParams).toBe(2 * (4 * 8 + 16 * 4 + 4 * 8 + 8 * 4 + 4 * 12 + 8 * 4));
    expect(a.tensors().every((t) => t.decay)).toBe(true);
  });

  it("refuse bad specs and adapters of another model, naming the field", () => {
    const m = new Model(base);
    expect(() => new LoraAdapter(m, { rank: 0, scale: 1, targets: ALL })).toThrow(/rank/);
    expect(() => new LoraAdapter(m, { rank: 2, scale: 1, dropout: 1, targets: ALL })).toThrow(/dropout/);
    expect(() => new LoraAdapter(m, { rank: 2, scale: 1, targets: ["lm_head"] })).toThrow(/unknown module lm_head/);
    expect(() => new LoraAdapter(m, { rank: 2, scale: 1, targets: [] })).toThrow(/targets/);
    const other = new LoraAdapter(new Model(base), { rank: 2, scale: 1, targets: ALL });
    expect(() => m.setAdapter(other)).toThrow(/another model/);
  });

  it("leave the model's outputs as they are while B is zero, and match the merged weights W + scale B A", () => {
    const rng = Rng.seeded("merge");
    const m = randomModel(base, rng);
    const tokens = Int32Array.from({ length: 10 }, () => rng.int(base.vocabSize));
    const before = m.logits(tokens, 2, 5);
    const a = new LoraAdapter(m, { rank: 3, scale: 0.75, dropout: 0.1, targets: ALL });
    for (const t of a.tensors()) if (t.name.includes("lora_A")) fill(a.params().subarray(t.offset, t.offset + t.size), rng, 0.8);
    m.setAdapter(a);
    expect(Array.from(m.logits(tokens, 2, 5))).toEqual(Array.from(before));
    fill(a.params(), rng, 0.8);
    const adapted = m.logits(tokens, 2, 5);
    expect(Math.max(...adapted.map((x, i) => Math.abs(x - before[i]!)))).toBeGreaterThan(1e-3);
    // Merge by hand into a copy of the base: W[out, in] += scale * B[out, r] A[r, in].
    const merged = new Model(base, { dtype: "float64" });
    merged.params().set(m.params());
    const byName = new Map(merged.tensors().map((t) => [t.name, t]));
    const ap = a.params();
    const ts = a.tensors();
    for (let i = 0; i < ts.length; i += 2) {
      const A = ts[i]!;
      const B = ts[i + 1]!;
      const W = byName.get(A.name.replace("base_model.model.", "").replace(".lora_A", ""))!;
      const [r, inF] = A.shape as [number, number];
      const out = B.shape[0]!;
      const w = merged.params();
      for (let o = 0; o < out; o++)
        for (let k = 0; k < inF; k++) {
          let s = 0;
          for (let j = 0; j < r; j++) s += ap[B.offset + o * r + j]! * ap[A.offset + j * inF + k]!;
          w[W.offset + o * inF + k]! += 0.75 * s;
        }
    }
    const want = merged.logits(tokens, 2, 5);
    for (let i = 0; i < want.length; i++) expect(adapted[i]).toBeCloseTo(want[i]!, 10);
    // A training pass (dropout seed) and an evaluation pass give the same log-probs without dropout
    // in the spec; setAdapter(null) is the base model again.
    m.setAdapter(null);
    expect(Array.from(m.logits(tokens, 2, 5))).toEqual(Array.from(before));
  });

  it("train only the adapter: AdamW moves A and B and leaves the base weights", () => {
    const rng = Rng.seeded("train");
    const m = randomModel(base, rng, "float32");
    const a = new LoraAdapter(m, { rank: 2, scale: 2, dropout: 0.05, targets: ALL });
    for (const t of a.tensors()) if (t.name.includes("lora_A")) fill(a.params().subarray(t.offset, t.offset + t.size), rng, 0.5);
    m.setAdapter(a);
    const baseBefore = Float32Array.from(m.params());
    const b = batch(rng, 2, 6, base.vocabSize);
    const weights = Float32Array.from(b.targets, (t) => (t < 0 ? 0 : 1 / 10));
    const losses: number[] = [];
    for (let step = 1; step <= 30; step++) {
      a.zeroGrad();
      losses.push(m.forwardBackward(b.tokens, b.targets, weights, b.B, b.T, true, { dropoutSeed: step }).loss);
      a.adamwStep({ lr: 0.05, step });
    }
    expect(losses.at(-1)!).toBeLessThan(losses[0]! * 0.7);
    expect(Array.from(m.params())).toEqual(Array.from(baseBefore));
    expect(a.moments().m.some((x) => x !== 0)).toBe(true);
  });

  it("generate with the adapter each Generation names, whatever the model has attached", () => {
    const rng = Rng.seeded("generate");
    const m = randomModel(base, rng, "float32");
    const a = new LoraAdapter(m, { rank: 2, scale: 4, targets: ALL });
    fill(a.params(), rng, 1.5);
    const prompts = [Int32Array.from([1, 2, 3]), Int32Array.from([4, 5])];
    const run = (adapter?: NativeAdapter | null) => {
      const g = new Generation(m, prompts, { maxNewTokens: 6, temperature: 0, ...(adapter === undefined ? {} : { adapter }) });
      while (g.step(2) > 0);
      return [0, 1].map((i) => Array.from(g.result(i).tokens));
    };
    const plain = run();
    m.setAdapter(a);
    const adapted = run();
    expect(adapted).not.toEqual(plain);
    expect(run(null)).toEqual(plain);
    m.setAdapter(null);
    expect(run(a)).toEqual(adapted);
    // Interleaved: each steps with its own adapter.
    const g1 = new Generation(m, prompts, { maxNewTokens: 6, temperature: 0, adapter: a });
    const g2 = new Generation(m, prompts, { maxNewTokens: 6, temperature: 0 });
    for (let k = 0; k < 6; k++) {
      g1.step(1);
      g2.step(1);
    }
    expect([0, 1].map((i) => Array.from(g1.result(i).tokens))).toEqual(adapted);
    expect([0, 1].map((i) => Array.from(g2.result(i).tokens))).toEqual(plain);
  });
});

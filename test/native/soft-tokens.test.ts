/**
 * Soft tokens in the engine (SofT-GRPO): inputs that are mixtures of embeddings, the Gumbel head,
 * and soft-thinking generation. A one-hot mixture is its token exactly; the mixture's and the
 * Gumbel head's gradients match central finite differences; KV-cached soft thinking gives the log-probs
 * the teacher-forced pass recomputes from its recorded trace, reproducibly per seed.
 */
import { describe, expect, it } from "vitest";
import { loadNative, type NativeModel, type SoftPassOptions } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";
import { centralDifferences } from "./finite-differences.js";
import { randomize, TINY } from "./tiny-model.js";

const { Model, Generation } = loadNative();
const V = TINY.vocabSize;

function model(dtype: "float32" | "float64", seed = "soft"): NativeModel {
  const m = new Model(TINY, { dtype });
  randomize(m, Rng.seeded(seed));
  return m;
}

const B = 2;
const T = 6;
const tokens = Int32Array.from([1, 4, 2, 9, 3, 0, 7, 7, 5, 10, 12, 6]);

/** Soft rows from per-position lists (undefined: none). */
function rows<K extends string>(lists: readonly ({ ids: number[]; values: number[] } | undefined)[], key: K) {
  const offsets = new Int32Array(lists.length + 1);
  const ids: number[] = [];
  const values: number[] = [];
  lists.forEach((l, r) => {
    if (l) {
      ids.push(...l.ids);
      values.push(...l.values);
    }
    offsets[r + 1] = ids.length;
  });
  return { offsets, ids: Int32Array.from(ids), [key]: Float32Array.from(values) } as { offsets: Int32Array; ids: Int32Array } & Record<K, Float32Array>;
}

describe("soft-token inputs", () => {
  it("a one-hot mixture is its token's embedding, bit for bit", () => {
    for (const dtype of ["float32", "float64"] as const) {
      const m = model(dtype);
      const targets = Int32Array.from(tokens, (_, i) => tokens[(i + 1) % tokens.length]!);
      const plain = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 0.8 });
      // Every other position one-hot on its own token; the placeholder token differs.
      const lists = Array.from(tokens, (t, r) => (r % 2 === 1 ? { ids: [t], values: [1] } : undefined));
      const placeholder = Int32Array.from(tokens, (t, r) => (r % 2 === 1 ? (t + 3) % V : t));
      const soft = m.forwardBackward(placeholder, targets, null, B, T, false, { temperature: 0.8, soft: { inputs: rows(lists, "weights") } });
      expect(Array.from(soft.logprobs)).toEqual(Array.from(plain.logprobs));
    }
  });

  it("a mixture's gradients (the embedding table, the weights, every parameter) match finite differences", async () => {
    const m = model("float64", "soft-grad");
    const rng = Rng.seeded("soft-grad-batch");
    const lists = Array.from(tokens, (_, r) => {
      if (r % 3 !== 1) return undefined;
      const ids = rng.shuffle(Array.from({ length: V }, (_, i) => i)).slice(0, 3);
      return { ids, values: ids.map(() => rng.next() + 0.1) };
    });
    const inputs = rows(lists, "weights");
    const targets = Int32Array.from(tokens, (_, i) => (i % 4 === 3 ? -1 : tokens[(i + 5) % tokens.length]!));
    const weights = Float32Array.from(tokens, () => rng.next() * 2 - 0.8);
    const opts = { temperature: 1.3, soft: { inputs, inputGrads: true } };
    const loss = () => m.forwardBackward(tokens, targets, weights, B, T, false, opts).loss;
    m.zeroGrad();
    const res = m.forwardBackward(tokens, targets, weights, B, T, true, opts);
    const grads = Float64Array.from(m.grads());
    const embed = m.tensors().find((t) => t.name === "model.embed_tokens.weight")!;
    const picked = [...Array.from({ length: 40 }, (_, i) => embed.offset + i * 2), ...Array.from({ length: 30 }, (_, i) => (i * 97) % m.numParams)];
    const p = await centralDifferences(m.params(), picked, grads, loss, 1e-5);
    expect(p.maxGrad).toBeGreaterThan(1e-3);
    expect(p.maxErr).toBeLessThan(1e-6);
    // The weights' gradient (the weights are float32: a step they can hold, and a float32 tolerance).
    const w = inputs.weights;
    const dw = res.inputGrads!;
    expect(dw.length).toBe(w.length);
    const q = await centralDifferences(w, Array.from(w.keys()), dw, loss, 1e-3);
    expect(q.maxGrad).toBeGreaterThan(1e-3);
    expect(q.maxErr).toBeLessThan(1e-4);
  });

  it("refuses bad soft rows with an error naming the position", () => {
    const m = model("float64");
    const targets = Int32Array.from(tokens, () => -1);
    const lists = Array.from(tokens, (_, r) => (r === 2 ? { ids: [3, 3], values: [0.5, 0.5] } : undefined));
    expect(() => m.forwardBackward(tokens, targets, null, B, T, false, { temperature: 1, soft: { inputs: rows(lists, "weights") } })).toThrow(/position 2 names a token twice/);
    const out = rows(Array.from(tokens, (_, r) => (r === 1 ? { ids: [2, 5], values: [0.1, -0.4] } : undefined)), "noised");
    const withTarget = Int32Array.from(tokens, (_, r) => (r === 1 ? 4 : -1));
    expect(() => m.forwardBackward(tokens, withTarget, null, B, T, false, { temperature: 1, soft: { targets: out } })).toThrow(/position 1 has both a soft target and a token target/);
  });
});

describe("the Gumbel head", () => {
  const support = [
    { r: 1, ids: [4, 2, 9] },
    { r: 4, ids: [0] },
    { r: 8, ids: [10, 3, 12, 1] },
  ];
  const targetLists = Array.from(tokens, (_, r) => {
    const s = support.find((x) => x.r === r);
    return s ? { ids: s.ids, values: s.ids.map((_, k) => 0.3 - 0.7 * k) } : undefined;
  });
  const softTargets = rows(targetLists, "noised");
  const targets = Int32Array.from(tokens, (t, r) => (targetLists[r] ? -1 : r % 5 === 4 ? -1 : (t + 1) % V));

  it("scores a soft token by the mean Gumbel log-density of its noise, under the top-p distribution renormalised on its support", () => {
    const m = model("float64");
    const temp = 0.7;
    const res = m.forwardBackward(tokens, targets, null, B, T, false, { temperature: temp, soft: { targets: softTargets } });
    const z = m.logits(tokens, B, T);
    for (const s of support) {
      const u = s.ids.map((i) => z[s.r * V + i]! / temp);
      const mx = Math.max(...u);
      const lse = mx + Math.log(u.reduce((a, x) => a + Math.exp(x - mx), 0));
      const q = targetLists[s.r]!.values;
      let dens = 0;
      u.forEach((x, k) => {
        const g = Math.fround(q[k]!) - (x - lse);
        dens += -g - Math.exp(-g);
      });
      expect(res.logprobs[s.r]).toBeCloseTo(dens / s.ids.length, 10);
    }
  });

  it("its gradient, with soft inputs and token targets in the same pass, matches finite differences", async () => {
    const m = model("float64", "gumbel-grad");
    const rng = Rng.seeded("gumbel-weights");
    const weights = Float32Array.from(tokens, () => rng.next() * 2 - 0.8);
    const inputs = rows(
      Array.from(tokens, (_, r) => (r === 2 || r === 9 ? { ids: [r % V, (r + 4) % V], values: [0.25, 0.75] } : undefined)),
      "weights",
    );
    const soft: SoftPassOptions = { inputs, targets: softTargets };
    const opts = { temperature: 0.9, soft };
    const loss = () => m.forwardBackward(tokens, targets, weights, B, T, false, opts).loss;
    m.zeroGrad();
    m.forwardBackward(tokens, targets, weights, B, T, true, opts);
    const grads = Float64Array.from(m.grads());
    const head = m.tensors().find((t) => t.name === "lm_head.weight")!;
    const picked = [...Array.from({ length: 40 }, (_, i) => head.offset + i * 2), ...Array.from({ length: 40 }, (_, i) => (i * 89) % m.numParams)];
    const p = await centralDifferences(m.params(), picked, grads, loss, 1e-5);
    expect(p.maxGrad).toBeGreaterThan(1e-3);
    expect(p.maxErr).toBeLessThan(1e-6);
  });
});

describe("soft-thinking generation", () => {
  const prompts = [Int32Array.from([1, 4, 2]), Int32Array.from([7, 7, 5, 10, 3])];
  const generate = (m: NativeModel, seeds: number[]) => {
    const g = new Generation(m, prompts, { maxNewTokens: 4, temperature: 1.2, seeds, softThinking: { steps: 3, tau: 0.8, topP: 0.9 } });
    g.step(100);
    return prompts.map((_, i) => g.result(i));
  };

  it("records each soft token's top-p support, noised logits and weights, reproducibly per seed", () => {
    const m = model("float64");
    const a = generate(m, [5, 6]);
    const b = generate(m, [5, 6]);
    const c = generate(m, [5, 7]);
    expect(a).toEqual(b);
    expect(c[0]).toEqual(a[0]); // a sequence's draws do not depend on the rest of the batch
    expect(c[1]).not.toEqual(a[1]);
    for (const r of a) {
      const s = r.soft!;
      expect(s.offsets.length).toBe(4);
      expect(r.tokens.length).toBeGreaterThan(0);
      for (let j = 0; j < 3; j++) {
        const w = Array.from(s.weights.subarray(s.offsets[j]!, s.offsets[j + 1]!));
        const q = Array.from(s.noised.subarray(s.offsets[j]!, s.offsets[j + 1]!));
        expect(w.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 6);
        // y = softmax(q' / tau)
        const mx = Math.max(...q);
        const e = q.map((x) => Math.exp((x - mx) / 0.8));
        const sum = e.reduce((x, y) => x + y, 0);
        e.forEach((x, k) => expect(w[k]).toBeCloseTo(x / sum, 6));
        expect(s.argmax[j]).toBe(s.ids[s.offsets[j]! + q.indexOf(mx)]);
      }
    }
  });

  it("the KV-cached rollout and the teacher-forced pass over its trace agree", () => {
    const m = model("float64");
    const res = generate(m, [11, 12]);
    prompts.forEach((prompt, i) => {
      const r = res[i]!;
      const s = r.soft!;
      const K = s.argmax.length;
      const ids = [...prompt, ...s.argmax, ...r.tokens];
      const n = ids.length - 1;
      const inOff = new Int32Array(n + 1);
      const outOff = new Int32Array(n + 1);
      const targets = new Int32Array(n).fill(-1);
      for (let t = 0; t < n; t++) {
        const j = t - prompt.length; // input soft token j at position prompt.length + j
        inOff[t + 1] = inOff[t]! + (j >= 0 && j < K ? s.offsets[j + 1]! - s.offsets[j]! : 0);
        const o = t + 1 - prompt.length; // the output at t is soft token o
        outOff[t + 1] = outOff[t]! + (o >= 0 && o < K ? s.offsets[o + 1]! - s.offsets[o]! : 0);
        if (o >= K) targets[t] = ids[t + 1]!;
      }
      const first = s.offsets[0]!;
      const last = s.offsets[K]!;
      const soft: SoftPassOptions = {
        inputs: { offsets: inOff, ids: s.ids.slice(first, last), weights: s.weights.slice(first, last) },
        targets: { offsets: outOff, ids: s.ids.slice(first, last), noised: s.noised.slice(first, last) },
      };
      const pass = m.forwardBackward(Int32Array.from(ids.slice(0, n)), targets, null, 1, n, false, { temperature: 1.2, soft });
      // The reply's log-probs as the sampler reported them (float32) and as the pass recomputes them.
      r.tokens.forEach((_, a) => expect(pass.logprobs[prompt.length + K - 1 + a]).toBeCloseTo(r.logprobs[a]!, 5));
      // Every soft token's noise is a plausible standard Gumbel draw: its mean log-density is finite and below the mode's (-1).
      for (let j = 0; j < K; j++) {
        const d = pass.logprobs[prompt.length - 1 + j]!;
        expect(Number.isFinite(d)).toBe(true);
        expect(d).toBeLessThanOrEqual(-1 + 1e-9);
      }
    });
  });
});

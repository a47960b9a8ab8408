/**
 * Activation checkpointing (model.activationCheckpointing): a training pass keeps each layer's
 * input only and recomputes the layer before its backward pass. The kernels are deterministic, so
 * everything a pass returns or accumulates must be the same bits as without it: loss, log-probs,
 * entropies, every gradient, through the cross-entropy and the policy heads, under grammar masks,
 * with soft-token inputs, and for a LoRA adapter with dropout (its masks drawn again in the
 * recomputation). The CUDA backend's version of this check is in measurements/gpu/parity.mjs.
 */
import { describe, expect, it } from "vitest";
import { loadNative, type NativeModel, type PolicyPassOptions } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";
import { randomize, TINY, weightedBatch } from "./tiny-model.js";

const { Model, LoraAdapter } = loadNative();
const ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
// More layers than TINY, so that recomputed layers sit between kept ones.
const DEEP = { ...TINY, numLayers: 4 };

function model(dtype: "float32" | "float64", seed: string): NativeModel {
  const m = new Model(DEEP, { dtype });
  randomize(m, Rng.seeded(seed));
  return m;
}

/** One training pass with checkpointing off then on: what it returns and the gradients it leaves. */
function bothWays(m: NativeModel, run: () => { loss: number; logprobs: ArrayLike<number>; entropy?: ArrayLike<number> | undefined }, grads: () => ArrayLike<number>) {
  const out = [false, true].map((on) => {
    m.activationCheckpointing = on;
    m.zeroGrad();
    const r = run();
    return { loss: r.loss, logprobs: Array.from(r.logprobs), entropy: r.entropy ? Array.from(r.entropy) : undefined, grads: Array.from(grads()) };
  });
  m.activationCheckpointing = false;
  return out;
}

function masksFor(rng: Rng, targets: Int32Array, vocab: number): { rows: Int32Array; tokens: Int32Array } {
  const rows = new Int32Array(2 * targets.length);
  const tokens: number[] = [];
  targets.forEach((t, r) => {
    if (t < 0) return;
    const allowed = new Set([t, rng.int(vocab), rng.int(vocab)]);
    rows[2 * r] = tokens.length;
    rows[2 * r + 1] = allowed.size;
    tokens.push(...[...allowed].sort((x, y) => x - y));
  });
  return { rows, tokens: Int32Array.from(tokens) };
}

describe("activation checkpointing", () => {
  for (const dtype of ["float32", "float64"] as const) {
    it(`gives the same loss, log-probs and gradients to the bit (cross-entropy head, ${dtype})`, () => {
      const m = model(dtype, `ckpt-ce-${dtype}`);
      const b = weightedBatch(Rng.seeded("ckpt-batch"), 3, 9, DEEP.vocabSize);
      const [off, on] = bothWays(m, () => m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true), () => m.grads());
      expect(on).toEqual(off);
      expect(off!.grads.some((g) => g !== 0)).toBe(true);
    });
  }

  it("gives the same bits through the policy head with entropy, temperature and grammar masks", () => {
    const m = model("float32", "ckpt-policy");
    const rng = Rng.seeded("ckpt-policy-batch");
    const b = weightedBatch(rng, 2, 11, DEEP.vocabSize);
    const options: PolicyPassOptions = { temperature: 0.7, entropy: true, entropyWeights: Float32Array.from(b.weights, (w) => w / 4), masks: masksFor(rng, b.targets, DEEP.vocabSize) };
    const [off, on] = bothWays(m, () => m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true, options), () => m.grads());
    expect(on).toEqual(off);
    expect(off!.entropy?.length).toBe(b.B * b.T);
  });

  it("gives the same bits with soft-token inputs (mixtures of embeddings) and their weights' gradients", () => {
    const m = model("float64", "ckpt-soft");
    const b = weightedBatch(Rng.seeded("ckpt-soft-batch"), 2, 6, DEEP.vocabSize);
    const offsets = Int32Array.from([0, 0, 2, 2, 5, 5, 5, 5, 7, 7, 7, 7, 7]);
    const soft = { inputs: { offsets, ids: Int32Array.from([1, 4, 0, 2, 9, 3, 12]), weights: Float32Array.from([0.25, 0.75, 0.5, 0.2, 0.3, 0.6, 0.4]) }, inputGrads: true };
    const [off, on] = bothWays(
      m,
      () => {
        const r = m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true, { temperature: 1, soft });
        return { ...r, entropy: r.inputGrads };
      },
      () => m.grads(),
    );
    expect(on).toEqual(off);
    expect(off!.entropy?.length).toBe(7);
  });

  it("gives a LoRA adapter with dropout the same gradients (the masks drawn again when a layer is recomputed)", () => {
    const m = model("float64", "ckpt-lora");
    const rng = Rng.seeded("ckpt-lora-batch");
    const a = new LoraAdapter(m, { rank: 2, scale: 1.5, dropout: 0.3, targets: ALL });
    const p = a.params();
    for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * 0.9;
    m.setAdapter(a);
    const b = weightedBatch(rng, 2, 7, DEEP.vocabSize);
    const [off, on] = bothWays(
      m,
      () => {
        a.zeroGrad();
        return m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true, { dropoutSeed: 77 });
      },
      () => a.grads(),
    );
    expect(on).toEqual(off);
    expect(off!.grads.some((g) => g !== 0)).toBe(true);
  });

  it("keeps one layer's activations where a pass without it keeps every layer's", () => {
    const m = model("float32", "ckpt-bytes");
    const b = weightedBatch(Rng.seeded("ckpt-bytes-batch"), 3, 9, DEEP.vocabSize);
    expect(m.trainingActivationBytes).toBe(0);
    m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true);
    const every = m.trainingActivationBytes;
    m.activationCheckpointing = true;
    m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true);
    const one = m.trainingActivationBytes;
    // A layer's set, a token: h1, xmid, h2 (hidden each), the rstds, qkv, the attention output,
    // its log-sum-exps, gate+up and the SwiGLU output; the layers' inputs x are kept either way.
    const { hiddenSize: C, numHeads: H, numKvHeads: KV, headDim: hd, intermediateSize: F, numLayers: L } = DEEP;
    const perLayer = 3 * C + 2 + (H + 2 * KV) * hd + H * hd + H + 2 * F + F;
    expect(every - one).toBe((L - 1) * b.B * b.T * perLayer * 4);
  });

  it("can be switched between passes (longer, then shorter batches) and refuses anything but a boolean", () => {
    const m = model("float32", "ckpt-switch");
    expect(m.activationCheckpointing).toBe(false);
    const long = weightedBatch(Rng.seeded("ckpt-long"), 4, 12, DEEP.vocabSize);
    const short = weightedBatch(Rng.seeded("ckpt-short"), 1, 5, DEEP.vocabSize);
    const pass = (b: typeof long) => {
      m.zeroGrad();
      const r = m.forwardBackward(b.tokens, b.targets, b.weights, b.B, b.T, true);
      return [r.loss, Array.from(m.grads())];
    };
    const plain = [pass(long), pass(short)];
    m.activationCheckpointing = true;
    expect(m.activationCheckpointing).toBe(true);
    expect([pass(short), pass(long)]).toEqual([plain[1], plain[0]]);
    m.activationCheckpointing = false;
    expect(pass(long)).toEqual(plain[0]);
    expect(() => {
      (m as unknown as { activationCheckpointing: unknown }).activationCheckpointing = "yes";
    }).toThrow(/boolean/);
  });
});

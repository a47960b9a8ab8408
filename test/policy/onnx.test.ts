import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NativeCompleter } from "../../models/generate.js";
import { exportOnnx } from "../../models/onnx/export.js";
import { OnnxCompleter } from "../../models/onnx/session.js";
import { tempDir, tinyCheckpoint } from "./fixtures.js";

function maxRelDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let scale = 0;
  for (let i = 0; i < a.length; i++) scale = Math.max(scale, Math.abs(a[i]!));
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d / scale;
}

describe("ONNX export", () => {
  it("gives the native engine's logits (1e-4 relative), with and without a KV cache, on left-padded batches", async () => {
    const ck = await tinyCheckpoint(11);
    exportOnnx(ck.model, ck.dir);
    const onnx = await OnnxCompleter.load(ck.dir, { threads: 1 });
    const V = ck.model.vocabSize;
    const a = ck.tokenizer.encode("Ella moved the spinach to the blue_box. Where is the spinach?");
    const b = ck.tokenizer.encode("Avery exited.");
    // Full pass over a left-padded batch.
    const P = a.length;
    const ids = new BigInt64Array(2 * P);
    const mask = new BigInt64Array(2 * P);
    const pos = new BigInt64Array(2 * P);
    for (let t = 0; t < P; t++) {
      ids[t] = BigInt(a[t]!);
      mask[t] = 1n;
      pos[t] = BigInt(t);
      const pad = P - b.length;
      ids[P + t] = BigInt(t >= pad ? b[t - pad]! : 0);
      mask[P + t] = t >= pad ? 1n : 0n;
      pos[P + t] = BigInt(t >= pad ? t - pad : 1);
    }
    const full = await onnx.forward(ids, mask, pos, 2, P, onnx.emptyCache(2));
    const lo = full.logits.data as Float32Array;
    expect(full.logits.dims).toEqual([2, P, V]);
    const na = ck.model.logits(a);
    expect(maxRelDiff(lo.subarray(0, P * V), na)).toBeLessThan(1e-4);
    const nb = ck.model.logits(b);
    expect(maxRelDiff(lo.subarray((2 * P - b.length) * V, 2 * P * V), nb)).toBeLessThan(1e-4);
    // One more token through the cache equals the full pass over the longer sequence.
    const next = 7;
    const step = await onnx.forward(BigInt64Array.from([BigInt(next)]), new BigInt64Array(P + 1).fill(1n), BigInt64Array.from([BigInt(P)]), 1, 1, full.present.map((t) => sliceBatch(t, 0)));
    const nFull = ck.model.lastLogits([...a, next]);
    expect(maxRelDiff(step.logits.data as Float32Array, nFull)).toBeLessThan(1e-4);
  });

  it("stores large models' weights beside the graph (model.onnx_data), and they load the same", async () => {
    const ck = await tinyCheckpoint(13);
    const out = tempDir("sw-onnx-ext-");
    const r = exportOnnx(ck.model, ck.dir, out, { externalDataBytes: 1000 });
    expect(r.externalData).toBe(join(out, "onnx", "model.onnx_data"));
    const onnx = await OnnxCompleter.load(out, { threads: 1 });
    const ids = ck.tokenizer.encode("Mia likes the yellow banana.");
    const step = await onnx.forward(BigInt64Array.from(ids.map(BigInt)), new BigInt64Array(ids.length).fill(1n), BigInt64Array.from(ids.map((_, i) => BigInt(i))), 1, ids.length, onnx.emptyCache(1));
    expect(maxRelDiff(step.logits.data as Float32Array, ck.model.logits(ids))).toBeLessThan(1e-4);
  });

  it("refuses a prompt that with its new tokens would pass the model's positions, as the native engine does", async () => {
    const ck = await tinyCheckpoint(14);
    exportOnnx(ck.model, ck.dir);
    const onnx = await OnnxCompleter.load(ck.dir, { threads: 1 });
    const native = new NativeCompleter("native", ck.model, ck.tokenizer);
    const max = onnx.engine.maxPositionEmbeddings;
    const prompt = Array.from({ length: max - 3 }, (_, i) => 5 + (i % 50));
    const tooLong = { maxNewTokens: 8, temperature: 0 };
    // The last new token is never fed back: max - 3 + 8 - 1 positions.
    await expect(onnx.complete([prompt], tooLong)).rejects.toThrow(`length ${max + 4} (a prompt of ${max - 3} tokens and up to 8 new) exceeds max_position_embeddings ${max}`);
    await expect(native.complete([prompt], tooLong)).rejects.toThrow(`length ${max + 4} exceeds max_position_embeddings ${max}`);
    // Up to the last position, both run, and agree.
    const fitting = { maxNewTokens: 4, temperature: 0 };
    const [o] = await onnx.complete([prompt], fitting);
    const [n] = await native.complete([prompt], fitting);
    expect(o!.tokens).toHaveLength(4);
    expect(o!.tokens).toEqual(n!.tokens);
  });

  it("generates the native engine's greedy tokens, and @huggingface/transformers loads the folder offline and agrees", async () => {
    const ck = await tinyCheckpoint(12);
    exportOnnx(ck.model, ck.dir);
    const native = new NativeCompleter("native", ck.model, ck.tokenizer);
    const onnx = await OnnxCompleter.load(ck.dir, { threads: 1 });
    const prompts = ["Where is the spinach?", "Liam likes the red apple. Mia"];
    const sampling = { maxNewTokens: 12, temperature: 0 };
    const n = await native.complete(prompts, sampling);
    const o = await onnx.complete(prompts, sampling);
    expect(o.map((c) => c.tokens)).toEqual(n.map((c) => c.tokens));
    for (let i = 0; i < n.length; i++) for (let j = 0; j < n[i]!.logprobs.length; j++) expect(o[i]!.logprobs[j]!).toBeCloseTo(n[i]!.logprobs[j]!, 4);

    const root = tempDir("sw-hf-");
    mkdirSync(join(root, "tiny"));
    cpSync(ck.dir, join(root, "tiny"), { recursive: true });
    const hf = await import("@huggingface/transformers");
    hf.env.allowRemoteModels = false;
    hf.env.localModelPath = root + "/";
    const tok = await hf.AutoTokenizer.from_pretrained("tiny");
    const model = await hf.AutoModelForCausalLM.from_pretrained("tiny", { dtype: "fp32" });
    const inputs = tok(prompts[0]!);
    const promptIds = Array.from(inputs.input_ids.data as BigInt64Array, Number);
    expect(promptIds).toEqual(ck.tokenizer.encode(prompts[0]!));
    const out = (await model.generate({ ...inputs, max_new_tokens: 12, do_sample: false })) as { data: BigInt64Array };
    const generated = Array.from(out.data, Number).slice(promptIds.length);
    expect(generated).toEqual(n[0]!.tokens.slice(0, generated.length));
    expect(generated.length).toBeGreaterThan(0);
    await model.dispose();
  });
});

function sliceBatch(t: import("onnxruntime-node").Tensor, b: number): import("onnxruntime-node").Tensor {
  const [B, H, T, D] = t.dims as [number, number, number, number];
  const per = H * T * D;
  const data = (t.data as Float32Array).slice(b * per, (b + 1) * per);
  void B;
  return new (t.constructor as typeof import("onnxruntime-node").Tensor)("float32", data, [1, H, T, D]);
}

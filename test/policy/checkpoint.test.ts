import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCheckpoint, saveCheckpoint } from "../../models/checkpoint.js";
import { readSafetensors, writeSafetensors } from "../../models/safetensors.js";
import { DataError } from "../../worlds/core/errors.js";
import { tempDir, tinyCheckpoint } from "./fixtures.js";

describe("checkpoints", () => {
  it("are Hugging Face folders: Qwen2 config, HF tensor names, and they load back to the same model", async () => {
    const ck = await tinyCheckpoint(5);
    const config = JSON.parse(readFileSync(join(ck.dir, "config.json"), "utf8"));
    expect(config).toMatchObject({ model_type: "qwen2", architectures: ["Qwen2ForCausalLM"], hidden_act: "silu", tie_word_embeddings: true, num_hidden_layers: 2, torch_dtype: "float32" });
    const names = [...readSafetensors(join(ck.dir, "model.safetensors")).tensors.keys()];
    expect(names).toContain("model.layers.1.self_attn.q_proj.bias");
    expect(names).toContain("model.norm.weight");
    expect(names).not.toContain("lm_head.weight");
    const back = loadCheckpoint(ck.dir);
    expect(Array.from(back.model.params())).toEqual(Array.from(ck.model.params()));
    const ids = ck.tokenizer.encode("Where is the spinach?");
    expect(Array.from(back.model.logits(ids))).toEqual(Array.from(ck.model.logits(ids)));
    expect(back.tokenizer.stopTokenIds).toEqual(ck.tokenizer.stopTokenIds);
    // Saved again, the weights file is byte for byte the same.
    const again = tempDir();
    saveCheckpoint(again, back.model, { config: back.config, tokenizerJson: back.tokenizer.tokenizerJson, tokenizerConfig: back.tokenizer.tokenizerConfig, generationConfig: back.generationConfig });
    expect(readFileSync(join(again, "model.safetensors"))).toEqual(readFileSync(join(ck.dir, "model.safetensors")));
  });

  it("reads an untied checkpoint stored in bf16 and sharded, as real Qwen2.5 releases are", async () => {
    const ck = await tinyCheckpoint(6);
    const dir = tempDir();
    for (const f of ["tokenizer.json", "tokenizer_config.json", "generation_config.json"]) copyFileSync(join(ck.dir, f), join(dir, f));
    const config = JSON.parse(readFileSync(join(ck.dir, "config.json"), "utf8"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ...config, tie_word_embeddings: false, torch_dtype: "bfloat16" }));
    // bf16 values (exactly representable) split over two shards with an index.
    const params = ck.model.params();
    const tensors = ck.model.tensors().map((t) => ({ name: t.name, shape: t.shape, data: Float32Array.from(params.subarray(t.offset, t.offset + t.size), (x) => bf16Round(x)) }));
    const embed = tensors.find((t) => t.name === "model.embed_tokens.weight")!;
    tensors.push({ name: "lm_head.weight", shape: embed.shape, data: embed.data.map((x) => -x) });
    const half = Math.floor(tensors.length / 2);
    writeBf16(join(dir, "model-00001-of-00002.safetensors"), tensors.slice(0, half));
    writeBf16(join(dir, "model-00002-of-00002.safetensors"), tensors.slice(half));
    const weight_map = Object.fromEntries(tensors.map((t, i) => [t.name, i < half ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors"]));
    writeFileSync(join(dir, "model.safetensors.index.json"), JSON.stringify({ metadata: {}, weight_map }));
    const loaded = loadCheckpoint(dir);
    const byName = new Map(loaded.model.tensors().map((t) => [t.name, t]));
    const lm = byName.get("lm_head.weight")!;
    expect(Array.from(loaded.model.params().subarray(lm.offset, lm.offset + 8))).toEqual(Array.from(embed.data.subarray(0, 8), (x) => -x));
  });

  it("refuses malformed checkpoints with the file and field at fault", async () => {
    const ck = await tinyCheckpoint(7);
    const attempt = (mutate: (dir: string) => void): Error => {
      const dir = tempDir();
      for (const f of ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"]) copyFileSync(join(ck.dir, f), join(dir, f));
      mutate(dir);
      try {
        loadCheckpoint(dir);
      } catch (err) {
        expect(err).toBeInstanceOf(DataError);
        return err as Error;
      }
      throw new Error("loaded a malformed checkpoint");
    };
    const config = JSON.parse(readFileSync(join(ck.dir, "config.json"), "utf8"));
    expect(attempt((d) => rmSync(join(d, "config.json"))).message).toMatch(/config\.json: missing/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), "{")).message).toMatch(/config\.json: not valid JSON/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, model_type: "llama" }))).message).toMatch(/config\.json \(model_type\): expected "qwen2"/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, num_key_value_heads: 3 }))).message).toMatch(/\(num_key_value_heads\): num_attention_heads \(4\) must be a multiple/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, hidden_size: 32 }))).message).toMatch(/model\.safetensors \(model\.embed_tokens\.weight\): shape \[\d+, 64\] does not match the config's \[\d+, 32\]/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, vocab_size: 100 }))).message).toMatch(/tokenizer\.json: the tokenizer has \d+ tokens but config\.json's vocab_size is 100/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, tie_word_embeddings: false }))).message).toMatch(/\(lm_head\.weight\): tensor missing/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, rope_scaling: { type: "yarn", factor: 4 } }))).message).toMatch(/\(rope_scaling\): rope scaling "yarn" is not supported/);
    expect(attempt((d) => writeFileSync(join(d, "config.json"), JSON.stringify({ ...config, num_hidden_layers: 1 }))).message).toMatch(/tensor\(s\) this config does not use \(model\.layers\.1\./);
    expect(attempt((d) => rmSync(join(d, "model.safetensors"))).message).toMatch(/no weights/);
    expect(attempt((d) => rmSync(join(d, "tokenizer.json"))).message).toMatch(/tokenizer\.json: missing/);
    expect(attempt((d) => writeFileSync(join(d, "model.safetensors"), readFileSync(join(d, "model.safetensors")).subarray(0, 5000))).message).toMatch(/model\.safetensors.*truncated/);
  });
});

function bf16Round(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0] = u[0]! & 0xffff0000;
  return f[0]!;
}

function writeBf16(path: string, tensors: { name: string; shape: readonly number[]; data: Float32Array }[]): void {
  writeSafetensors(path, tensors);
  // Rewrite as BF16: keep the high half of each float32.
  const f = readSafetensors(path);
  const header: Record<string, unknown> = {};
  const parts: Buffer[] = [];
  let off = 0;
  for (const t of tensors) {
    const u = new Uint32Array(Float32Array.from(t.data).buffer);
    const h = Uint16Array.from(u, (x) => x >>> 16);
    header[t.name] = { dtype: "BF16", shape: t.shape, data_offsets: [off, off + h.byteLength] };
    off += h.byteLength;
    parts.push(Buffer.from(h.buffer));
  }
  void f;
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(path, Buffer.concat([len, json, ...parts]));
}

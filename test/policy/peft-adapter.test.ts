/**
 * LoRA adapters in PEFT's layout, both ways: ours written and read back (bit-identical), a folder
 * as PEFT's save_pretrained writes it (its whole LoraConfig, target modules in a set's order, bf16
 * tensors in the safetensors' sorted order; built here, seeded, as test/fixtures/peft-adapter.py
 * documents) giving the logits of the base with W + alpha/r B A merged by hand, what the engine
 * refuses and why, and `model merge-lora` / `model logits --adapter`.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { baseWeightName, relativeDifference } from "../../models/merge-lora.js";
import { loadAdapter, readAdapterFolder, saveAdapter, useAdapterFolder } from "../../models/peft-adapter.js";
import { DEFAULT_LORA } from "../../models/lora-settings.js";
import { LORA_TARGETS } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";
import { DataError } from "../../worlds/core/errors.js";
import { tempDir, tinyCheckpoint } from "./fixtures.js";

const io = captureOutput();
const TEXT = "Where will Ella look for the spinach?";

/** bf16 bits of x (round to nearest even), and back. */
function toBf16(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0]!;
  return ((u + 0x7fff + ((u >> 16) & 1)) >>> 16) & 0xffff;
}
function fromBf16(b: number): number {
  return new Float32Array(new Uint32Array([b << 16]).buffer)[0]!;
}

/** A safetensors file of BF16 tensors, names sorted as the safetensors library writes them. */
function writeBf16Safetensors(path: string, tensors: Map<string, { shape: number[]; values: number[] }>): void {
  const names = [...tensors.keys()].sort();
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  let offset = 0;
  for (const n of names) {
    const bytes = 2 * tensors.get(n)!.values.length;
    header[n] = { dtype: "BF16", shape: tensors.get(n)!.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header));
  const out = Buffer.alloc(8 + json.length + offset);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(out, 8);
  let at = 8 + json.length;
  for (const n of names) for (const v of tensors.get(n)!.values) (out.writeUInt16LE(toBf16(v), at), (at += 2));
  writeFileSync(path, out);
}

/** adapter_config.json as PEFT 0.15's save_pretrained writes it (fields it adds left as it leaves them). */
function peftWrittenConfig(base: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: base,
    bias: "none",
    corda_config: null,
    eva_config: null,
    exclude_modules: null,
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: 24,
    lora_bias: false,
    lora_dropout: 0.1,
    megatron_config: null,
    megatron_core: "megatron.core",
    modules_to_save: null,
    peft_type: "LORA",
    r: 6,
    rank_pattern: {},
    revision: null,
    target_modules: ["v_proj", "down_proj", "q_proj", "up_proj"],
    task_type: "CAUSAL_LM",
    trainable_token_indices: null,
    use_dora: false,
    use_rslora: false,
    ...over,
  };
}

/**
 * A PEFT-written adapter for `base`: A and B of each target of each layer, seeded, in bf16 (as an
 * adapter trained in bf16 is saved). Returns its folder and the float values it holds.
 */
function peftFolder(base: string, numLayers: number, shapes: Map<string, number[]>, over: Record<string, unknown> = {}, seed = "peft") {
  const config = peftWrittenConfig(base, over);
  const rng = Rng.seeded(seed);
  const r = config.r as number;
  const tensors = new Map<string, { shape: number[]; values: number[] }>();
  const parentOf = (t: string) => (["gate_proj", "up_proj", "down_proj"].includes(t) ? "mlp" : "self_attn");
  const modules = config.target_modules as string | string[];
  const targets = Array.isArray(modules)
    ? modules
    : LORA_TARGETS.filter((t) => modules === "all-linear" || new RegExp(`^(?:${modules})$`).test(`model.layers.0.${parentOf(t)}.${t}`));
  for (let l = 0; l < numLayers; l++)
    for (const t of targets) {
      const parent = parentOf(t);
      const [out, inF] = shapes.get(`model.layers.${l}.${parent}.${t}.weight`)!;
      const p = `base_model.model.model.layers.${l}.${parent}.${t}`;
      const draw = (n: number, spread: number) => Array.from({ length: n }, () => fromBf16(toBf16((rng.next() - 0.5) * spread)));
      tensors.set(`${p}.lora_A.weight`, { shape: [r, inF!], values: draw(r * inF!, 0.5) });
      tensors.set(`${p}.lora_B.weight`, { shape: [out!, r], values: draw(out! * r, 0.5) });
    }
  const dir = tempDir("sw-peft-");
  writeFileSync(join(dir, "adapter_config.json"), JSON.stringify(config, null, 2));
  writeBf16Safetensors(join(dir, "adapter_model.safetensors"), tensors);
  writeFileSync(join(dir, "README.md"), "---\nlibrary_name: peft\n---\n");
  return { dir, tensors, scale: (config.lora_alpha as number) / (config.use_rslora ? Math.sqrt(r) : r) };
}

describe("LoRA adapters in PEFT's layout", () => {
  it("round-trip ours bit for bit, with PEFT's config and tensor names", async () => {
    const base = await tinyCheckpoint(61);
    const ck = loadCheckpoint(base.dir);
    const adapter = ck.model.newAdapter({ ...DEFAULT_LORA, r: 4, alpha: 12, targets: ["q_proj", "o_proj", "gate_proj"] }, 1, base.dir);
    adapter.weights.updateParams((p) => p.forEach((_, i) => (p[i] = Math.sin(i) * 0.3)));
    ck.model.useAdapter(adapter);
    const want = Array.from(ck.model.logits(ck.tokenizer.encode(TEXT)));
    const dir = tempDir();
    saveAdapter(dir, adapter);
    const config = JSON.parse(readFileSync(join(dir, "adapter_config.json"), "utf8"));
    expect(config).toMatchObject({ peft_type: "LORA", task_type: "CAUSAL_LM", r: 4, lora_alpha: 12, target_modules: ["q_proj", "o_proj", "gate_proj"], base_model_name_or_path: base.dir });
    const header = JSON.parse(readFileSync(join(dir, "adapter_model.safetensors")).subarray(8, 8 + Number(readFileSync(join(dir, "adapter_model.safetensors")).readBigUInt64LE(0))).toString());
    expect(Object.keys(header)).toContain("base_model.model.model.layers.1.mlp.gate_proj.lora_B.weight");
    expect(Object.keys(header).filter((k) => k !== "__metadata__")).toHaveLength(2 * 3 * ck.model.engine.numLayers);

    const again = loadCheckpoint(base.dir);
    const loaded = useAdapterFolder(again.model, dir);
    expect(loaded.settings).toEqual(adapter.settings);
    expect(Array.from(loaded.weights.readParams())).toEqual(Array.from(adapter.weights.readParams()));
    expect(Array.from(again.model.logits(again.tokenizer.encode(TEXT)))).toEqual(want);
  });

  it("load what PEFT writes: the logits of the base with W + alpha/r B A merged by hand", async () => {
    const base = await tinyCheckpoint(62);
    const ref = loadCheckpoint(base.dir, { dtype: "float64" });
    const shapes = new Map(ref.model.tensors().map((t) => [t.name, [...t.shape]]));
    const peft = peftFolder(base.dir, ref.model.engine.numLayers, shapes);
    // By hand, in float64, from the bf16 values in the file.
    const weights = new Map(ref.model.tensors().map((t) => [t.name, t]));
    ref.model.updateParams((w) => {
      for (const [name, A] of peft.tensors) {
        if (!name.endsWith("lora_A.weight")) continue;
        const B = peft.tensors.get(name.replace("lora_A", "lora_B"))!;
        const W = weights.get(baseWeightName(name))!;
        const [r, inF] = A.shape as [number, number];
        for (let o = 0; o < B.shape[0]!; o++)
          for (let k = 0; k < inF; k++) {
            let s = 0;
            for (let j = 0; j < r; j++) s += B.values[o * r + j]! * A.values[j * inF + k]!;
            w[W.offset + o * inF + k]! += peft.scale * s;
          }
      }
    });
    const ids = ref.tokenizer.encode(TEXT);
    const want = ref.model.logits(ids);

    const ck = loadCheckpoint(base.dir);
    const adapter = useAdapterFolder(ck.model, peft.dir);
    expect(adapter.settings).toEqual({ r: 6, alpha: 24, dropout: 0.1, targets: ["q_proj", "v_proj", "up_proj", "down_proj"], rslora: false });
    expect(adapter.scale).toBe(4);
    const got = ck.model.logits(ids);
    expect(relativeDifference(got, want)).toBeLessThan(1e-5);
    ck.model.useAdapter(undefined);
    expect(relativeDifference(ck.model.logits(ids), want)).toBeGreaterThan(1e-2);

    // rsLoRA scales by alpha / sqrt(r); a regular expression or "all-linear" names the targets.
    const rs = peftFolder(base.dir, ref.model.engine.numLayers, shapes, { use_rslora: true });
    expect(loadAdapter(rs.dir, ck.model.native, 2).adapter.scale).toBeCloseTo(24 / Math.sqrt(6), 12);
    const re = peftFolder(base.dir, ref.model.engine.numLayers, shapes, { target_modules: ".*\\.(q_proj|v_proj)" });
    expect(readAdapterFolder(re.dir, 2).settings.targets).toEqual(["q_proj", "v_proj"]);
    const all = peftFolder(base.dir, ref.model.engine.numLayers, shapes, { target_modules: "all-linear" });
    expect(readAdapterFolder(all.dir, 2).settings.targets).toHaveLength(7);
  });

  it("refuse what the engine cannot run, naming the file and the field", async () => {
    const base = await tinyCheckpoint(63);
    const ck = loadCheckpoint(base.dir);
    const shapes = new Map(ck.model.tensors().map((t) => [t.name, [...t.shape]]));
    const refused = (over: Record<string, unknown>, why: RegExp) => {
      const f = peftFolder(base.dir, 2, shapes, { target_modules: ["q_proj"], ...over });
      expect(() => loadAdapter(f.dir, ck.model.native, 2)).toThrow(why);
      expect(() => loadAdapter(f.dir, ck.model.native, 2)).toThrow(DataError);
    };
    refused({ use_dora: true }, /adapter_config\.json.*use_dora.*DoRA adapters are not supported/);
    refused({ rank_pattern: { q_proj: 4 } }, /rank_pattern.*per-module ranks/);
    refused({ layers_to_transform: [0] }, /layers_to_transform.*some layers only/);
    refused({ modules_to_save: ["lm_head"] }, /modules_to_save/);
    refused({ bias: "all" }, /bias.*trained biases/);
    refused({ peft_type: "IA3" }, /peft_type.*only LoRA/);
    refused({ target_modules: "model\\.layers\\.0\\..*q_proj" }, /picks q_proj in some layers only/);
    // lm_head in the list: the adapter would change a layer this engine does not adapt.
    const lm = peftFolder(base.dir, 2, shapes, { target_modules: ["q_proj"] });
    writeFileSync(join(lm.dir, "adapter_config.json"), JSON.stringify(peftWrittenConfig(base.dir, { target_modules: ["q_proj", "lm_head"] })));
    expect(() => loadAdapter(lm.dir, ck.model.native, 2)).toThrow(/target_modules.*lm_head is not one of the linear layers/);
    // Tensors: one missing, one unaccounted for, one of another shape.
    const f = peftFolder(base.dir, 2, shapes, { target_modules: ["q_proj"] });
    const missing = new Map([...f.tensors].filter(([n]) => !n.includes("layers.1.")));
    writeBf16Safetensors(join(f.dir, "adapter_model.safetensors"), missing);
    expect(() => loadAdapter(f.dir, ck.model.native, 2)).toThrow(/adapter_model\.safetensors.*layers\.1\.self_attn\.q_proj\.lora_A\.weight.*missing/);
    writeBf16Safetensors(join(f.dir, "adapter_model.safetensors"), new Map([...f.tensors, ["base_model.model.lm_head.lora_A.weight", { shape: [1, 1], values: [0] }]]));
    expect(() => loadAdapter(f.dir, ck.model.native, 2)).toThrow(/1 tensor\(s\) that adapter_config\.json does not account for \(base_model\.model\.lm_head\.lora_A\.weight\)/);
    const r3 = peftFolder(base.dir, 2, shapes, { target_modules: ["q_proj"], r: 3 });
    writeFileSync(join(f.dir, "adapter_config.json"), JSON.stringify(peftWrittenConfig(base.dir, { target_modules: ["q_proj"], r: 4 })));
    writeBf16Safetensors(join(f.dir, "adapter_model.safetensors"), r3.tensors);
    expect(() => loadAdapter(f.dir, ck.model.native, 2)).toThrow(/shape \[3, \d+\] does not match the config's \[4, \d+\]/);
    // Not an adapter folder at all.
    const empty = tempDir();
    expect(() => loadAdapter(empty, ck.model.native, 2)).toThrow(/adapter_config\.json.*missing/);
    mkdirSync(join(empty, "x"));
    writeFileSync(join(empty, "adapter_config.json"), "{not json");
    expect(() => loadAdapter(empty, ck.model.native, 2)).toThrow(/not valid JSON/);
  });

  it("model merge-lora writes the merged checkpoint and checks it against the unmerged adapter", async () => {
    const base = await tinyCheckpoint(64);
    const ck = loadCheckpoint(base.dir);
    const shapes = new Map(ck.model.tensors().map((t) => [t.name, [...t.shape]]));
    const peft = peftFolder(base.dir, 2, shapes, { target_modules: "all-linear" });
    const out = join(tempDir(), "merged");
    expect(await main(["model", "merge-lora", base.dir, "--adapter", peft.dir, "--out", out]), io.err).toBe(0);
    expect(io.out).toMatch(/with the LoRA adapter .* merged in \(r=6, alpha=24, 7 target modules x 2 layers\); logits on \d+ tokens match the unmerged adapter's within \d\.\d\de-\d+ relative/);
    const json = async (args: string[]) => {
      expect(await main(["model", "logits", ...args, "--text", TEXT, "--json", "--all"]), io.err).toBe(0);
      return JSON.parse(io.out.trim().split("\n").at(-1)!) as { all: number[] };
    };
    const merged = await json([out]);
    const adapted = await json([base.dir, "--adapter", peft.dir]);
    const plain = await json([base.dir]);
    expect(relativeDifference(merged.all, adapted.all)).toBeLessThan(1e-5);
    expect(relativeDifference(plain.all, adapted.all)).toBeGreaterThan(1e-2);
    // A merged folder is a plain checkpoint: no adapter files.
    expect(() => readFileSync(join(out, "adapter_config.json"))).toThrow();
    expect(await main(["model", "merge-lora", base.dir, "--adapter", peft.dir, "--out", out])).toBe(2);
    expect(io.err).toMatch(/is not empty/);
  });
});

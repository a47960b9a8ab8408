/**
 * LoRA adapters in PEFT's layout, both ways: a folder with adapter_config.json (PEFT's LoraConfig)
 * and adapter_model.safetensors, whose tensors are named as PEFT's get_peft_model_state_dict names
 * them, without the adapter's name: base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight
 * ([r, in]) and ...lora_B.weight ([out, r]). `PeftModel.from_pretrained(base, DIR)` loads what
 * saveAdapter writes, and loadAdapter reads what PEFT's `save_pretrained` writes (float32, float16
 * or bfloat16 tensors), refusing what this engine cannot run as PEFT would (DoRA, per-module
 * ranks, trained biases, extra modules) with the field named.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { DataError } from "../worlds/core/errors.js";
import { PolicyAdapter } from "./adapter.js";
import { writeJson } from "./checkpoint.js";
import { loraTargetParent, loraTargets, LoraSettingsSchema, type LoraSettings } from "./lora-settings.js";
import type { PolicyModel } from "./model.js";
import { LORA_TARGETS, type NativeModel } from "./native.js";
import { readSafetensors, readTensorInto, writeSafetensors } from "./safetensors.js";

export const ADAPTER_CONFIG = "adapter_config.json";
export const ADAPTER_WEIGHTS = "adapter_model.safetensors";

const empty = (v: unknown) => v === undefined || v === null || (typeof v === "object" && Object.keys(v as object).length === 0);

/** The fields of PEFT's LoraConfig this engine reads; the others must keep PEFT's defaults. */
export const PeftLoraConfigSchema = z
  .object({
    peft_type: z.literal("LORA", { error: 'only LoRA adapters (peft_type "LORA") are supported' }),
    r: z.number().int().min(1),
    lora_alpha: z.number().positive(),
    lora_dropout: z.number().min(0).lt(1).default(0),
    target_modules: z.union([z.array(z.string()).min(1), z.string().min(1)], { error: "must name the target modules (a list or a regular expression)" }),
    use_rslora: z.boolean().default(false),
    base_model_name_or_path: z.string().nullish(),
    task_type: z.string().nullish(),
    use_dora: z.literal(false, { error: "DoRA adapters are not supported" }).default(false),
    bias: z.literal("none", { error: 'trained biases are not supported (bias must be "none")' }).default("none"),
    fan_in_fan_out: z.literal(false, { error: "fan_in_fan_out is for GPT-2's Conv1D layers; Qwen2's are nn.Linear" }).default(false),
    rank_pattern: z.unknown().refine(empty, "per-module ranks are not supported").optional(),
    alpha_pattern: z.unknown().refine(empty, "per-module alphas are not supported").optional(),
    modules_to_save: z.unknown().refine(empty, "modules_to_save (fully trained extra modules) is not supported").optional(),
    layers_to_transform: z.unknown().refine((v) => v === undefined || v === null, "adapters on some layers only are not supported").optional(),
    layer_replication: z.unknown().refine((v) => v === undefined || v === null, "layer_replication is not supported").optional(),
  })
  .loose();
export type PeftLoraConfig = z.infer<typeof PeftLoraConfigSchema>;

/** What an adapter folder says: the settings, and the base model it was trained on (as written). */
export interface AdapterFolder {
  readonly dir: string;
  readonly settings: LoraSettings;
  readonly baseModel: string | null;
}

/**
 * The targets of PEFT's target_modules: a list of module names (matched by their last name, as
 * PEFT matches "q_proj" against "model.layers.0.self_attn.q_proj"), "all-linear", or a regular
 * expression PEFT matches against each module's full name (then it must pick the same targets in
 * every layer).
 */
export function peftTargets(targetModules: string | readonly string[], numLayers: number, file: string): LoraSettings["targets"] {
  const field = { field: "target_modules" };
  if (Array.isArray(targetModules)) {
    const names = targetModules.map((n) => n.split(".").at(-1)!);
    const unknown = names.find((n) => !(LORA_TARGETS as readonly string[]).includes(n));
    if (unknown !== undefined) throw new DataError(file, field, `${unknown} is not one of the linear layers this engine adapts (${LORA_TARGETS.join(", ")})`);
    return loraTargets(names);
  }
  const pattern = targetModules as string;
  if (pattern === "all-linear") return [...LORA_TARGETS];
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${pattern})$`);
  } catch (err) {
    throw new DataError(file, field, `not a regular expression: ${(err as Error).message}`);
  }
  const picked = LORA_TARGETS.filter((t) => {
    const hits = Array.from({ length: numLayers }, (_, l) => re.test(`model.layers.${l}.${loraTargetParent(t)}.${t}`));
    if (hits.some((h) => h !== hits[0])) throw new DataError(file, field, `${JSON.stringify(pattern)} picks ${t} in some layers only, which is not supported`);
    return hits[0];
  });
  if (picked.length === 0) throw new DataError(file, field, `${JSON.stringify(pattern)} matches none of the linear layers (${LORA_TARGETS.join(", ")})`);
  return picked;
}

/** Reads and checks DIR/adapter_config.json for a model of `numLayers` layers. */
export function readAdapterFolder(dir: string, numLayers: number): AdapterFolder {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new DataError(dir, {}, "not an adapter folder (it does not exist or is not a directory)");
  const file = join(dir, ADAPTER_CONFIG);
  if (!existsSync(file)) throw new DataError(file, {}, `missing: an adapter folder holds ${ADAPTER_CONFIG} and ${ADAPTER_WEIGHTS}`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new DataError(file, {}, `not valid JSON: ${(err as Error).message}`);
  }
  const r = PeftLoraConfigSchema.safeParse(json);
  if (!r.success) throw new DataError(file, { field: r.error.issues[0]!.path.join(".") || "(root)" }, r.error.issues[0]!.message);
  const c = r.data;
  const settings = LoraSettingsSchema.parse({ r: c.r, alpha: c.lora_alpha, dropout: c.lora_dropout, targets: peftTargets(c.target_modules, numLayers, file), rslora: c.use_rslora });
  return { dir, settings, baseModel: c.base_model_name_or_path ?? null };
}

/**
 * Loads an adapter folder onto `model` (not yet in use: PolicyModel.useAdapter). Every tensor the
 * config implies must be there with its shape, and nothing else.
 */
export function loadAdapter(dir: string, model: NativeModel, numLayers: number): { adapter: PolicyAdapter; folder: AdapterFolder } {
  const folder = readAdapterFolder(dir, numLayers);
  const adapter = new PolicyAdapter(model, folder.settings, folder.baseModel);
  const path = join(dir, ADAPTER_WEIGHTS);
  const file = readSafetensors(path);
  const expected = new Set<string>();
  adapter.weights.updateParams(
    (p) => {
      for (const t of adapter.native.tensors()) {
        expected.add(t.name);
        readTensorInto(file, t.name, t.shape, p, t.offset);
      }
    },
    { overwrite: true },
  );
  const unexpected = [...file.tensors.keys()].filter((n) => !expected.has(n));
  if (unexpected.length > 0)
    throw new DataError(path, { field: unexpected[0]! }, `${unexpected.length} tensor(s) that ${ADAPTER_CONFIG} does not account for (${unexpected.slice(0, 3).join(", ")}${unexpected.length > 3 ? ", ..." : ""})`);
  return { adapter, folder };
}

/** PEFT's LoraConfig for an adapter, as save_pretrained writes it (inference_mode true). */
export function peftConfig(settings: LoraSettings, baseModel: string | null): Record<string, unknown> {
  return {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: baseModel,
    r: settings.r,
    lora_alpha: settings.alpha,
    lora_dropout: settings.dropout,
    target_modules: [...settings.targets],
    use_rslora: settings.rslora,
    use_dora: false,
    bias: "none",
    fan_in_fan_out: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
    layers_to_transform: null,
    layers_pattern: null,
    rank_pattern: {},
    alpha_pattern: {},
    revision: null,
  };
}

/** Writes an adapter folder in PEFT's layout (each file atomically). */
export function saveAdapter(dir: string, adapter: PolicyAdapter): void {
  mkdirSync(dir, { recursive: true });
  writeJson(join(dir, ADAPTER_CONFIG), peftConfig(adapter.settings, adapter.base));
  const p = adapter.weights.readParams();
  writeSafetensors(
    join(dir, ADAPTER_WEIGHTS),
    adapter.native.tensors().map((t) => ({ name: t.name, shape: t.shape, data: p.subarray(t.offset, t.offset + t.size) })),
  );
}

/**
 * Loads an adapter folder onto a loaded base checkpoint and puts it in use (the folder's config
 * must suit the base: the tensors' shapes are checked against its layers).
 */
export function useAdapterFolder(model: PolicyModel, dir: string): PolicyAdapter {
  const { adapter } = loadAdapter(dir, model.native, model.engine.numLayers);
  model.useAdapter(adapter);
  return adapter;
}

/**
 * The base model an adapter folder's config names (base_model_name_or_path, as written: a folder,
 * or a hub id), or null when it names none or cannot be read. A cheap look, for finding the base.
 */
export function adapterBaseModel(dir: string): string | null {
  try {
    const c = JSON.parse(readFileSync(join(dir, ADAPTER_CONFIG), "utf8")) as { base_model_name_or_path?: unknown };
    return typeof c.base_model_name_or_path === "string" ? c.base_model_name_or_path : null;
  } catch {
    return null;
  }
}

/** Whether DIR holds an adapter (not a whole model). */
export function isAdapterFolder(dir: string): boolean {
  return existsSync(join(dir, ADAPTER_CONFIG));
}

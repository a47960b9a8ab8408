/**
 * LoRA settings: what `--lora r=8,alpha=16,dropout=0.05,targets=all-linear` says, as PEFT's
 * LoraConfig says it (r, lora_alpha, lora_dropout, target_modules, use_rslora). The adapter's
 * output is scaled by alpha / r (alpha / sqrt(r) with rsLoRA), as PEFT scales it.
 */
import { z } from "zod";
import { LORA_TARGETS, type LoraTargetName } from "./native.js";

export const LoraSettingsSchema = z.object({
  r: z.number().int().min(1).max(65536),
  alpha: z.number().positive(),
  dropout: z.number().min(0).lt(1),
  targets: z.array(z.enum(LORA_TARGETS)).min(1),
  rslora: z.boolean(),
});
export type LoraSettings = z.infer<typeof LoraSettingsSchema>;

export const DEFAULT_LORA: LoraSettings = { r: 8, alpha: 16, dropout: 0.05, targets: [...LORA_TARGETS], rslora: false };

export const LORA_HELP = `--lora SPEC            train a LoRA adapter instead of every weight (the base is frozen):
                         r=8,alpha=16,dropout=0.05,targets=all-linear (these are the defaults;
                         targets: all-linear or module names, e.g. targets=q_proj,v_proj; rslora=true
                         scales by alpha / sqrt(r)). Saved in PEFT's layout (adapter_config.json,
                         adapter_model.safetensors)`;

/** The multiplier of B A x. */
export function loraScale(s: Pick<LoraSettings, "r" | "alpha" | "rslora">): number {
  return s.rslora ? s.alpha / Math.sqrt(s.r) : s.alpha / s.r;
}

/** The module a target sits in, as Hugging Face's Qwen2 names it. */
export function loraTargetParent(t: LoraTargetName): "self_attn" | "mlp" {
  return t === "gate_proj" || t === "up_proj" || t === "down_proj" ? "mlp" : "self_attn";
}

/**
 * Module names to targets: "all-linear" (every linear layer but the LM head, as PEFT reads it),
 * or names of the seven linear layers, in the layers' order. Throws naming an unknown one.
 */
export function loraTargets(names: readonly string[]): LoraTargetName[] {
  if (names.length === 1 && names[0] === "all-linear") return [...LORA_TARGETS];
  for (const n of names)
    if (!(LORA_TARGETS as readonly string[]).includes(n)) throw new Error(`unknown LoRA target ${JSON.stringify(n)}: use all-linear or some of ${LORA_TARGETS.join(", ")}`);
  return LORA_TARGETS.filter((t) => names.includes(t));
}

/**
 * Parses the text of --lora: comma-separated key=value pairs, where a bare name after targets=
 * continues the list of targets (targets=q_proj,v_proj). Throws a sentence naming the key.
 */
export function parseLoraOption(text: string): LoraSettings {
  const out: Record<string, unknown> = { ...DEFAULT_LORA };
  let targets: string[] | undefined;
  let last = "";
  for (const part of text.split(",").map((p) => p.trim())) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    if (eq < 0) {
      if (last !== "targets") throw new Error(`expected key=value, got ${JSON.stringify(part)} (keys: r, alpha, dropout, targets, rslora)`);
      targets!.push(part);
      continue;
    }
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    last = key;
    if (key === "targets") targets = value.split(/[+:]/).filter(Boolean);
    else if (key === "rslora") {
      if (value !== "true" && value !== "false") throw new Error(`rslora must be true or false (got ${JSON.stringify(value)})`);
      out.rslora = value === "true";
    } else if (key === "r" || key === "alpha" || key === "dropout") {
      const n = Number(value);
      if (value === "" || !Number.isFinite(n)) throw new Error(`${key} must be a number (got ${JSON.stringify(value)})`);
      out[key] = n;
    } else throw new Error(`unknown key ${JSON.stringify(key)} (keys: r, alpha, dropout, targets, rslora)`);
  }
  if (targets) out.targets = loraTargets(targets);
  const r = LoraSettingsSchema.safeParse(out);
  if (!r.success) throw new Error(`${r.error.issues[0]!.path.join(".")}: ${r.error.issues[0]!.message}`);
  return r.data;
}

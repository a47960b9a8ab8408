/**
 * The model a LoRA run trains (`train sft|grpo --lora ...`): the base checkpoint with an adapter
 * in use, new (PEFT's initialisation, seeded) or, when resuming, the checkpoint's adapter with its
 * AdamW moments. The base model is frozen; only the adapter is trained and checkpointed.
 */
import { join, resolve } from "node:path";
import { loadCheckpoint, type Checkpoint } from "../../models/checkpoint.js";
import type { LoraSettings } from "../../models/lora-settings.js";
import type { PolicyModel } from "../../models/model.js";
import { isAdapterFolder, loadAdapter } from "../../models/peft-adapter.js";
import { DataError } from "../../worlds/core/errors.js";
import { loadMoments } from "./checkpoint-folders.js";

/**
 * `startFrom`: an adapter folder a new run starts from instead of a new adapter (self-play's
 * previous round: its weights, a fresh optimizer).
 */
export function loraCheckpoint(base: string, settings: LoraSettings, seed: number, resumeDir?: string, startFrom?: string): Checkpoint {
  const ck = loadCheckpoint(base);
  const model = ck.model;
  const saved = resumeDir ?? startFrom;
  if (saved) {
    if (!isAdapterFolder(saved)) throw new DataError(saved, {}, "holds a whole model, not a LoRA adapter: that run did not train with --lora");
    const { adapter } = loadAdapter(saved, model.native, model.engine.numLayers);
    if (JSON.stringify(adapter.settings) !== JSON.stringify(settings))
      throw new DataError(join(saved, "adapter_config.json"), {}, `its LoRA settings ${JSON.stringify(adapter.settings)} are not this run's ${JSON.stringify(settings)}`);
    model.useAdapter(adapter);
    if (resumeDir) loadMoments(resumeDir, model);
  } else {
    model.useAdapter(model.newAdapter(settings, `${seed}`, resolve(base)));
  }
  return ck;
}

/**
 * What a run resumes or continues from a checkpoint folder: its weights (a LoRA run: the base with
 * the folder's adapter) and their AdamW moments.
 */
export function resumedCheckpoint(dir: string, lora: { readonly settings: LoraSettings; readonly base: string } | undefined, seed: number): Checkpoint {
  if (lora) return loraCheckpoint(lora.base, lora.settings, seed, dir);
  const ck = loadCheckpoint(dir);
  loadMoments(dir, ck.model);
  return ck;
}

/** What a run trains and what that holds in memory (parameters, gradients and AdamW moments). */
export function trainableSummary(model: PolicyModel): string {
  const bytes = model.dtype === "float64" ? 8 : 4;
  const adapter = model.adapter;
  const recomputed = model.native.activationCheckpointing ? "; activations recomputed layer by layer in the backward pass (--activation-checkpointing)" : "";
  if (!adapter) return `training all ${count(model.numParams)} parameters: ${mib(4 * bytes * model.numParams)} for weights, gradients and AdamW moments${recomputed}`;
  const s = adapter.settings;
  const share = ((100 * adapter.numParams) / model.numParams).toFixed(adapter.numParams / model.numParams < 0.01 ? 3 : 2);
  return (
    `LoRA r=${s.r} alpha=${s.alpha} dropout=${s.dropout} on ${s.targets.join(", ")}: ${count(adapter.numParams)} trainable parameters ` +
    `(${share}% of ${count(model.numParams)}); memory ${mib(bytes * model.numParams)} frozen base + ${mib(4 * bytes * adapter.numParams)} adapter weights, gradients and AdamW moments ` +
    `(full fine-tuning: ${mib(4 * bytes * model.numParams)})${recomputed}`
  );
}

function count(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : `${n}`;
}

function mib(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * Checkpoint folders shared by every trainer: OUT/checkpoint-STEP/ holds the model as a Hugging
 * Face folder (a LoRA run: the adapter in PEFT's layout, and the tokenizer), the AdamW moments of
 * what is trained (optimizer.safetensors: exp_avg and exp_avg_sq over the flat parameter buffer,
 * or the adapter's) and trainer_state.json (whatever the trainer needs to continue exactly).
 * Folders are written under a temporary name and renamed when complete, so a crash never leaves a
 * half checkpoint that resume would pick.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { DataError } from "../../worlds/core/errors.js";
import { saveCheckpoint, writeJson, type CheckpointFiles } from "../../models/checkpoint.js";
import type { PolicyModel } from "../../models/model.js";
import { saveAdapter } from "../../models/peft-adapter.js";
import { readSafetensors, readTensorInto, writeSafetensors } from "../../models/safetensors.js";

const PREFIX = "checkpoint-";
const STATE_FILE = "trainer_state.json";

export function checkpointDir(out: string, step: number): string {
  return join(out, `${PREFIX}${step}`);
}

/** Complete checkpoints in OUT, by step (ascending). */
export function listCheckpoints(out: string): { step: number; dir: string }[] {
  if (!existsSync(out)) return [];
  return readdirSync(out)
    .filter((n) => n.startsWith(PREFIX) && /^\d+$/.test(n.slice(PREFIX.length)))
    .map((n) => ({ step: Number(n.slice(PREFIX.length)), dir: join(out, n) }))
    .filter((c) => existsSync(join(c.dir, STATE_FILE)))
    .sort((a, b) => a.step - b.step);
}

/** The folder a run resumes from: the newest complete checkpoint in OUT for "auto", else `resume` as given. */
export function resumeFolder(out: string, resume: string | undefined): string | undefined {
  return resume === "auto" ? listCheckpoints(out).at(-1)?.dir : resume || undefined;
}

/**
 * Why a checkpoint cannot be resumed with `want` (the first setting that differs from the one it
 * was trained with, as a sentence), or undefined when every setting agrees.
 */
export function settingsMismatch(dir: string, saved: Readonly<Record<string, unknown>>, want: Readonly<Record<string, unknown>>): string | undefined {
  const d = firstDifference("", saved, want);
  return d && `${dir} was trained with ${d}; resume with the same settings and data`;
}

/** The first key whose values differ, as `key=SAVED, not WANT`; nested settings (lora) name the inner key, so that the sentence does not quote both objects whole. */
function firstDifference(path: string, saved: Readonly<Record<string, unknown>>, want: Readonly<Record<string, unknown>>): string | undefined {
  const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
  // At the top only the settings asked for count (an older checkpoint may record more); inside a
  // nested setting a key either side lacks is a difference too.
  const keys = path ? new Set([...Object.keys(want), ...Object.keys(saved)]) : Object.keys(want);
  for (const k of keys) {
    const was = saved[k];
    const v = want[k];
    if (JSON.stringify(was) === JSON.stringify(v)) continue;
    if (isRecord(was) && isRecord(v)) return firstDifference(`${path}${k}.`, was, v) ?? `${path}${k}=${JSON.stringify(was)}, not ${JSON.stringify(v)}`;
    return `${path}${k}=${JSON.stringify(was) ?? "(none)"}, not ${JSON.stringify(v) ?? "(none)"}`;
  }
  return undefined;
}

/** Writes OUT/checkpoint-STEP atomically and keeps only the newest `keep` checkpoints. */
export function saveTrainerCheckpoint<S extends { step: number }>(
  out: string,
  model: PolicyModel,
  files: CheckpointFiles,
  state: S,
  keep: number,
): string {
  const final = checkpointDir(out, state.step);
  const tmp = join(out, `.${PREFIX}${state.step}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  saveTrainedModel(tmp, model, files);
  const { m, v } = model.trained.readMoments();
  writeSafetensors(join(tmp, "optimizer.safetensors"), [
    { name: "exp_avg", shape: [m.length], data: m },
    { name: "exp_avg_sq", shape: [v.length], data: v },
  ]);
  writeJson(join(tmp, STATE_FILE), state);
  rmSync(final, { recursive: true, force: true });
  renameSync(tmp, final);
  const all = listCheckpoints(out);
  for (const c of all.slice(0, Math.max(0, all.length - keep))) rmSync(c.dir, { recursive: true, force: true });
  return final;
}

/** Reads and validates a checkpoint's trainer_state.json. */
export function readTrainerStateFile<S>(dir: string, schema: z.ZodType<S>): S {
  return readJsonFile(join(dir, STATE_FILE), schema, "the trainer state");
}

/** Reads a JSON file a trainer wrote (`what` it holds, for the error), checked against `schema`. */
export function readJsonFile<S>(file: string, schema: z.ZodType<S>, what: string): S {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new DataError(file, {}, `cannot read ${what}: ${(err as Error).message}`);
  }
  const r = schema.safeParse(json);
  if (!r.success) throw new DataError(file, { field: r.error.issues[0]!.path.join(".") || "(root)" }, r.error.issues[0]!.message);
  return r.data;
}

/**
 * What a run trained: the model as a Hugging Face folder, or, when it trains a LoRA adapter, the
 * adapter in PEFT's layout with the tokenizer's files beside it (the base model stays where it is).
 */
export function saveTrainedModel(dir: string, model: PolicyModel, files: CheckpointFiles): void {
  if (!model.adapter) return saveCheckpoint(dir, model, files);
  saveAdapter(dir, model.adapter);
  writeJson(join(dir, "tokenizer.json"), files.tokenizerJson);
  writeJson(join(dir, "tokenizer_config.json"), files.tokenizerConfig);
}

/** Loads the AdamW moments saved beside a checkpoint's weights into what the model trains. */
export function loadMoments(dir: string, model: PolicyModel): void {
  const file = readSafetensors(join(dir, "optimizer.safetensors"));
  model.trained.updateMoments(({ m, v }) => {
    readTensorInto(file, "exp_avg", [m.length], m, 0);
    readTensorInto(file, "exp_avg_sq", [v.length], v, 0);
  });
}

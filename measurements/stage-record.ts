/**
 * What a stage of a recipe script was trained with, kept beside the policy it left, so that
 * `--reuse` keeps a policy only for a run that asks for the same one. A policy is not told apart by
 * its files alone: a stage trained with other settings (or on other data) leaves the same files.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { DataError } from "../worlds/core/errors.js";

/** The file in a stage's folder that holds what it was trained with, written once it finished. */
export function stageRecord(dir: string): string {
  return join(dir, "recipe-args.json");
}

/**
 * Whether the policy in `dir` was trained with `record`: "kept" where a finished stage wrote the
 * same record, "other" where the folder holds a policy trained otherwise (other settings, an
 * interrupted run, or one from before the record), "none" where it holds none.
 */
export function keptStage(dir: string, record: unknown): "kept" | "other" | "none" {
  if (!existsSync(join(dir, "model.safetensors"))) return "none";
  const file = stageRecord(dir);
  return existsSync(file) && readFileSync(file, "utf8").trim() === JSON.stringify(record) ? "kept" : "other";
}

/** Trains the stage afresh through `train` (its earlier record dropped first, so that an interrupted run is never kept), then records it. */
export async function trainStage(dir: string, record: unknown, train: () => Promise<unknown>): Promise<void> {
  rmSync(stageRecord(dir), { force: true });
  await train();
  writeFileSync(stageRecord(dir), JSON.stringify(record) + "\n");
}

const CommandLine = z.array(z.string());
// A record is the stage's command line, or an object of command lines and other facts (learn-recipe's: base, sft, data).
const RecordSchema = z.union([CommandLine, z.record(z.string(), z.unknown())]);

/**
 * The value given to `option` ("--steps") in the command lines of the stage record in `dir`;
 * undefined where the folder has no record or its command lines do not give the option.
 */
export function recordedOption(dir: string, option: string): string | undefined {
  const file = stageRecord(dir);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new DataError(file, {}, `not valid JSON (${(err as Error).message})`);
  }
  const record = RecordSchema.safeParse(json);
  if (!record.success) throw new DataError(file, { field: "top level" }, "expected a command line (an array of strings) or an object of them");
  const lines = Array.isArray(record.data) ? [record.data] : Object.values(record.data).flatMap((v) => (CommandLine.safeParse(v).success ? [v as string[]] : []));
  for (const line of lines) {
    const i = line.indexOf(option);
    if (i >= 0 && i + 1 < line.length) return line[i + 1];
  }
  return undefined;
}

/**
 * What a policy kept from elsewhere (not trained by the script that uses it) was trained with, as
 * a results header says it: its steps and batch by its stage record, or that they are unknown.
 */
export function reusedTraining(dir: string): string {
  const steps = recordedOption(dir, "--steps");
  if (steps === undefined) return "reused, steps unknown";
  const batch = recordedOption(dir, "--batch");
  return `reused, ${steps} steps${batch === undefined ? "" : ` of ${batch} examples`} (its stage record)`;
}

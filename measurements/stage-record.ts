/**
 * What a stage of a recipe script was trained with, kept beside the policy it left, so that
 * `--reuse` keeps a policy only for a run that asks for the same one. A policy is not told apart by
 * its files alone: a stage trained with other settings (or on other data) leaves the same files.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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

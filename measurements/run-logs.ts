/**
 * The learning curves the demonstration scripts print (learn-demo, usersim-demo): a training
 * run's per-step records (SFT's train_log.jsonl, GRPO's metrics.jsonl) and their means over each
 * tenth of the run.
 */
import { existsSync, readFileSync } from "node:fs";

/** The JSON lines of `file` (none when it does not exist: the stage did not run). */
export function readRunLog(file: string): Record<string, unknown>[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

/** The mean of `field` over each tenth of the records that have it, with the step each tenth starts at. */
export function tenthMeans(log: readonly Record<string, unknown>[], field: string): { step: unknown; mean: number }[] {
  const rows = log.filter((r) => typeof r[field] === "number");
  const tenth = Math.max(1, Math.floor(rows.length / 10));
  const out: { step: unknown; mean: number }[] = [];
  for (let i = 0; i < rows.length; i += tenth) {
    const part = rows.slice(i, i + tenth);
    out.push({ step: part[0]!.step, mean: part.reduce((a, r) => a + (r[field] as number), 0) / part.length });
  }
  return out;
}

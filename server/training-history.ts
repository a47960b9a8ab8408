/**
 * The training dashboard after a restart: the board itself lives in memory, so at start the server
 * puts back every GRPO run its store knows of (self-play rounds, and `train grpo --store` runs on
 * the same store), with each run's steps read from its OUT/metrics.jsonl. A run the store still
 * calls running was cut off with the previous process: it shows as interrupted. Lines that do not
 * parse (a torn last line, a foreign record) are skipped; a missing file gives a run without steps.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { z } from "zod";
import type { RunRecord, RunStore } from "../store/run-store.js";
import { MAX_RUNS, StepMetricsSchema, type TrainingMetrics, type TrainingBoard } from "./training-board.js";

const GrpoParams = z.looseObject({
  out: z.string().min(1),
  description: z.string().optional(),
  config: z.looseObject({ steps: z.number().int().min(1) }).optional(),
});

function readMetrics(file: string): TrainingMetrics[] {
  if (!existsSync(file)) return [];
  const out: TrainingMetrics[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      continue;
    }
    const m = StepMetricsSchema.safeParse(json);
    if (m.success) out.push(m.data);
  }
  return out;
}

/** Puts the store's newest GRPO runs (as many as the board keeps) back on it; returns how many. */
export function restoreTrainingRuns(store: RunStore, board: TrainingBoard): number {
  let n = 0;
  // Newest first, and no more than the board would keep: older runs' files are not read at start.
  for (const run of store.list()) {
    if (n >= MAX_RUNS) break;
    if (run.kind !== "grpo") continue;
    const p = GrpoParams.safeParse(run.params);
    if (!p.success) continue;
    const history = readMetrics(join(p.data.out, "metrics.jsonl"));
    const round = /^round-(\d+)$/.exec(basename(p.data.out));
    board.restore({
      runId: run.id,
      title: run.title,
      source: p.data.description ?? "",
      steps: p.data.config?.steps ?? Math.max(1, history.at(-1)?.step ?? 1),
      status: statusOf(run),
      roomIds: [],
      ...(round ? { round: Number(round[1]) } : {}),
      // A private room's pool folder is named for the room: its rounds' checkpoints are not shown.
      ...(run.status === "done" && round && run.params.visibility !== "private" ? { checkpoint: p.data.out } : {}),
      startedAt: run.createdAt,
      updatedAt: run.finishedAt ?? run.createdAt,
      history,
    });
    n++;
  }
  return n;
}

function statusOf(run: RunRecord): "done" | "interrupted" | "failed" {
  return run.status === "done" ? "done" : run.status === "failed" ? "failed" : "interrupted";
}

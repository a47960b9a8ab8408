/**
 * Per-step JSONL logs (losses, metrics). A resumed run continues from its checkpoint's step, so
 * the records written after that step by the interrupted run are dropped and written again:
 * the log of a resumed run equals the log of an uninterrupted one.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../../store/write-atomic.js";

/** Keeps the records of steps up to `step`. */
export function trimStepLog(file: string, step: number): void {
  if (!existsSync(file)) return;
  if (step === 0) {
    writeFileAtomic(file, "");
    return;
  }
  const kept = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => {
      if (!l.trim()) return false;
      try {
        return (JSON.parse(l) as { step: number }).step <= step;
      } catch {
        return false;
      }
    });
  // Whole or not at all: a crash while cutting back must not lose the steps kept.
  writeFileAtomic(file, kept.map((l) => l + "\n").join(""));
}

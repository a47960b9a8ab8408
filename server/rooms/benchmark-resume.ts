/**
 * Where a benchmark room's run stands in its log: the questions already answered (their results,
 * as `bench --resume` reads them) and the stories whose contexts are logged. A room restored after
 * its server was killed goes on from there, asking none of them again.
 */
import type { ItemResult } from "../../benchmarks/runner.js";
import { readEpisodeLog } from "../../store/episode-log.js";

export interface LoggedRun {
  readonly done: ReadonlyMap<string, ItemResult>;
  readonly contexts: Set<string>;
}

export function loggedRun(logPath: string): LoggedRun {
  const done = new Map<string, ItemResult>();
  const contexts = new Set<string>();
  // A torn last line (the kill came mid-write) is not a result: that question is asked again.
  for (const rec of readEpisodeLog<{ kind?: string; result?: ItemResult; context_id?: string; socialized_context?: unknown }>(logPath).records) {
    if (rec.kind !== "benchmark_item" || !rec.result) continue;
    done.set(rec.result.id, rec.result);
    if (rec.context_id && rec.socialized_context) contexts.add(rec.context_id);
  }
  return { done, contexts };
}

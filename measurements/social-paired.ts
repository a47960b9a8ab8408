/**
 * Question by question comparisons of social policies' bench runs: each run's right-or-wrong per
 * test question, read from its log in the run store, and the table of paired changes
 * (benchmarks/paired-change.ts) that social-demo.ts prints within one run of the demo and
 * social-demo-compare.ts between two.
 */
import { join } from "node:path";
import type { PairedChange } from "../benchmarks/paired-change.js";
import { readEpisodeLog } from "../store/episode-log.js";
import type { RunStore } from "../store/run-store.js";

/** Where a demo in `dir` writes agent `name`'s bench report (the compare script reads it there). */
export const evalReport = (dir: string, name: string): string => join(dir, `eval-${name.toLowerCase().replace("+", "-")}.json`);

/** Each question's type right or wrong in bench run `runId` of `store`, by question id (`test.jsonl#TREE/USER@ITEM`). */
export function rightByQuestion(store: RunStore, runId: string): Map<string, boolean> {
  const r = store.get(runId);
  if (!r) throw new Error(`no run ${runId} in ${store.root}`);
  const recs = readEpisodeLog<{ kind: string; result?: { id: string; correct: boolean } }>(store.episodesPath(r)).records;
  return new Map(recs.flatMap((x) => (x.kind === "benchmark_item" && x.result ? [[x.result.id, x.result.correct] as const] : [])));
}

/** "+0.7" or "−1.5": a change in points. */
export const signedPoints = (x: number): string => `${x >= 0 ? "+" : "−"}${(100 * Math.abs(x)).toFixed(1)}`;

/**
 * A question's cascade (its tree), from its id `FILE#TREE/USER@ITEM` (pooled ids add a prefix,
 * `1:FILE#TREE/...`, which keeps the pairs' trees apart): the cluster of pairedChange's
 * cascade-level standard error. Cut at the first "/" after the "#": a user or item id may hold
 * a "/" (a real dump's), the task id writes a tree id's own "/" as %2F (`taskTreeId`), and the
 * file's name holds none.
 */
export function cascadeOf(id: string): string {
  const slash = id.indexOf("/", id.indexOf("#") + 1);
  return slash < 0 ? id : id.slice(0, slash);
}

/**
 * A Markdown table of paired changes: one row per [agent, against, change]; the question-level
 * standard error and, where the change has one, the cascade-level one (the questions of one tree
 * are not independent: the same post, users and feed) with the number of cascades.
 */
export function pairedTable(rows: readonly (readonly [string, string, PairedChange])[]): string[] {
  return [
    "| agent | against | questions | type accuracy change (points) | standard error | cascade-level s.e. (cascades) | right only here | right only there | McNemar p |",
    "|:--|:--|--:|--:|--:|--:|--:|--:|--:|",
    ...rows.map(
      ([after, before, c]) =>
        `| ${after} | ${before} | ${c.shared} | ${signedPoints(c.difference)} | ${(100 * c.standardError).toFixed(1)} | ${c.cluster ? `${(100 * c.cluster.standardError).toFixed(1)} (${c.cluster.clusters})` : "–"} | ${c.gained} | ${c.lost} | ${c.p < 0.001 ? "< 0.001" : c.p.toFixed(3)} |`,
    ),
  ];
}

/**
 * A run's socialized contexts as JSON files, one per logged episode (per question for benchmark
 * runs), named by the question's id so that two exports of the same questions pair up file by file
 * (the world model's contexts against a model's, for `eval-context`).
 *
 * Layouts:
 *   context  the context alone, byte for byte as the social-world-model project writes it
 *            (json.dumps indent=2, ASCII-escaped: worlds/core/socialized-context.ts)
 *   swm      that project's result-file layout: story, question, answer, correct_answer and the
 *            context under `socialized_context` as its `SocializedContext` model dumps it
 *            (observations and actions as {"Name": "text"}, with `context_manual`), which its
 *            `load_existing_socialized_contexts`, `run_socialized_context_eval.py` and training
 *            scripts read.
 *
 * Sources: `world` (the world model's episode of the story, what every record logs) or `agent`
 * (the context the agent wrote itself in simulation mode: its turn's `info.socializedContext`,
 * written as the agent wrote it even when it does not follow the schema, so that `eval-context`
 * can score it).
 */
import { mkdirSync, readdirSync, writeFileSync, existsSync, statSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DataError } from "../../worlds/core/errors.js";
import { pythonJson, serializeSocializedContext, SocializedContextSchema, type SocializedContext } from "../../worlds/core/socialized-context.js";
import type { RunRecord } from "../../store/run-store.js";
import { dictLines } from "../../worlds/core/sap-file.js";
import { loadQuestionItems, type FoundItem } from "./examples.js";
import type { KnownRecord, RunLog } from "./run-log.js";

export type SapLayout = "context" | "swm";
export type SapSource = "world" | "agent";

export interface SapExportOptions {
  readonly layout?: SapLayout;
  readonly source?: SapSource;
  /** The benchmark data file, for the story text of the swm layout (default: the run's). */
  readonly data?: string;
  /** Write into a folder that already holds .json files. */
  readonly force?: boolean;
}

export interface SapExportResult {
  readonly files: readonly string[];
  readonly skipped: Readonly<Record<string, number>>;
}

/** How to read our contexts; the swm layout requires one (its `SocializedContext.context_manual`). */
export const CONTEXT_MANUAL =
  "Each timestep gives the state of the world before the agents act, then one observation and one action per agent. " +
  "What the actions cause appears in the next timestep's state; at the last timestep every action is none. " +
  "<same_as_state /> means the agent perceives the whole state; none means it perceives (or does) nothing; " +
  "<mental_state>...</mental_state> holds what the agent believes, which no other agent can see. " +
  "Written by socialworld's world model: an agent perceives what happens where it is.";

/** A file name from an id ("fb_all_val.txt#12" -> "fb_all_val.txt_12"). */
export function fileStem(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "_") || "_";
}

export async function exportSap(run: RunRecord, log: RunLog, dir: string, opts: SapExportOptions = {}): Promise<SapExportResult> {
  const layout = opts.layout ?? "context";
  const source = opts.source ?? "world";
  const created = prepareDir(dir, opts.force ?? false);
  try {
    const items: Map<string, FoundItem> = layout === "swm" ? await loadQuestionItems(run, log, opts, false) : new Map();
    const result = writeSapFiles(run, log, dir, layout, source, items);
    // A folder this export made and left empty (nothing to export) is not left behind.
    if (created !== undefined && result.files.length === 0) rmSync(created, { recursive: true, force: true });
    return result;
  } catch (err) {
    if (created !== undefined) rmSync(created, { recursive: true, force: true });
    throw err;
  }
}

function writeSapFiles(run: RunRecord, log: RunLog, dir: string, layout: SapLayout, source: SapSource, items: Map<string, FoundItem>): SapExportResult {
  const skipped: Record<string, number> = {};
  const skip = (reason: string) => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };
  for (const [kind, n] of Object.entries(log.unknownKinds)) skipped[`records of unknown kind "${kind}"`] = n;
  const used = new Set<string>();
  const files: string[] = [];
  for (const { line, record } of log.records) {
    const context = source === "world" ? record.socialized_context : agentContext(record);
    if (context === undefined) {
      skip(source === "world" ? "records without a socialized context" : "records without a context written by the agent (simulation mode only)");
      continue;
    }
    let stem = fileStem(stemOf(record, line));
    if (used.has(stem)) stem = `${stem}-${line}`;
    used.add(stem);
    const path = join(dir, `${stem}.json`);
    const text = layout === "context" ? contextText(context) : pythonJson(swmResult(record, context, items, run));
    writeFileSync(path, text);
    files.push(path);
  }
  return { files, skipped };
}

/** Checks the folder, or makes it; the first folder it made (missing parents included), if any. */
function prepareDir(dir: string, force: boolean): string | undefined {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new DataError(dir, {}, "is a file; the sap export writes a folder of JSON files (one per episode)");
    const json = readdirSync(dir).filter((f) => f.endsWith(".json"));
    if (json.length && !force) throw new DataError(dir, {}, `already holds ${json.length} .json files; write into an empty folder, or pass --force to replace files of the same names`);
    return undefined;
  }
  return mkdirSync(dir, { recursive: true });
}

function stemOf(record: KnownRecord, line: number): string {
  switch (record.kind) {
    case "benchmark_item":
      return record.result.id;
    case "room_episode":
      return `${record.world}-${line}`;
    case "demo_story":
      return `demo-${line}`;
    case "imported_context":
      return `imported-${line}`;
  }
}

function agentContext(record: KnownRecord): unknown {
  if (record.kind !== "benchmark_item") return undefined;
  for (const t of record.turns) if (t.info && t.info.socializedContext !== undefined) return t.info.socializedContext;
  return undefined;
}

function contextText(context: unknown): string {
  const valid = SocializedContextSchema.safeParse(context);
  return valid.success ? serializeSocializedContext(valid.data) : pythonJson(context);
}

function dictContext(context: unknown, manual = CONTEXT_MANUAL): unknown {
  const valid = SocializedContextSchema.safeParse(context);
  if (!valid.success) return context;
  const c: SocializedContext = valid.data;
  return {
    agents_names: c.agents_names,
    socialized_context: c.socialized_context.map((s) => ({ timestep: s.timestep, state: s.state, observations: dictLines(s.observations), actions: dictLines(s.actions) })),
    context_manual: manual,
  };
}

function swmResult(record: KnownRecord, context: unknown, items: Map<string, FoundItem>, run: RunRecord): Record<string, unknown> {
  // An imported result file's own manual describes its context; ours describes the world model's.
  const manual = record.kind === "imported_context" && typeof record.context_manual === "string" ? record.context_manual : undefined;
  const socialized_context = dictContext(context, manual);
  const provenance = { run: run.id, kind: record.kind };
  switch (record.kind) {
    case "benchmark_item": {
      const r = record.result;
      const found = items.get(r.id);
      const story = found ? found.benchmark.task(found.item, record.mode).story : undefined;
      return {
        index: r.index,
        ...(story !== undefined ? { story } : {}),
        question: r.question,
        answer: r.answer,
        correct_answer: typeof r.official === "string" ? r.official : r.official.join(", "),
        is_correct: r.correct,
        socialized_context,
        socialworld: { ...provenance, id: r.id, benchmark: record.benchmark, context_id: record.context_id, world_model_answer: r.worldModel },
      };
    }
    case "demo_story":
      return { story: record.story.join(" "), socialized_context, socialworld: provenance };
    case "imported_context": {
      // What the imported result file held beside its context goes back out where it came from.
      const meta: Record<string, unknown> = {};
      for (const k of ["index", "story", "question", "answer", "correct_answer"] as const) if (record[k] !== undefined) meta[k] = record[k];
      return { ...meta, socialized_context, socialworld: { ...provenance, source: record.source } };
    }
    default:
      return { socialized_context, socialworld: provenance };
  }
}

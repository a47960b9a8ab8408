/**
 * Training examples from a run's log. A benchmark question becomes the prompt a policy is asked in
 * the export's mode (vanilla: the benchmark's own `task(item, mode).prompt`; simulation: the
 * question over the story's socialized context, see agents/policy/question-prompt.ts), rebuilt from
 * the run's data file, so an export is exactly what a model would be asked; the label (official or the world model's) and a reference
 * answer in the format the prompt asks for, checked with the benchmark's judge. A live room's
 * episode gives one example per turn an agent or person actually took: what it observed, what it did.
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { isWorldName, loadBenchmark } from "../../worlds/registry.js";
import type { Benchmark, BenchItem, BenchmarkOptions, Mode } from "../../worlds/question/benchmark.js";
import { DataError } from "../../worlds/core/errors.js";
import type { RunRecord } from "../../store/run-store.js";
import { askedQuestion, replyFor } from "../../agents/policy/question-prompt.js";
import { isWrittenSource } from "../../agents/policy/options.js";
import type { BenchmarkItemRecord, RoomEpisodeRecord, RunLog } from "./run-log.js";

export type LabelSource = "official" | "world";

/** A question with a checkable answer (VERL RL rows, SFT pairs, chat transcripts). */
export interface QuestionExample {
  readonly kind: "question";
  readonly dataSource: string;
  readonly ability: string;
  readonly prompt: string;
  /** The label as text: the answer itself, or a JSON array for list answers. */
  readonly groundTruth: string;
  /** The label written as the prompt asks for it. */
  readonly reference: string;
  readonly meta: QuestionMeta;
}

export interface QuestionMeta {
  readonly id: string;
  readonly index: number;
  readonly benchmark: string;
  readonly type: string;
  readonly mode: Mode;
  readonly question: string;
  readonly labelSource: LabelSource;
  readonly official: string;
  readonly worldModel: string | null;
  readonly agrees: boolean;
  readonly cause: string | null;
  readonly choices: readonly string[];
  readonly contextId: string;
  readonly file: string;
  readonly line: number | null;
  readonly field: string | null;
  readonly run: string;
  readonly logLine: number;
}

/** One turn of a live episode (SFT pairs and chat transcripts only: there is no label to reward). */
export interface TurnExample {
  readonly kind: "turn";
  readonly dataSource: string;
  readonly prompt: string;
  readonly response: string;
  readonly meta: { readonly world: string; readonly agent: string; readonly timestep: number | null; readonly source: string; readonly run: string; readonly logLine: number };
}

export interface ExampleOptions {
  /** The benchmark data file (default: the run's `data` parameter). */
  readonly data?: string;
  /** The prompt's mode (default: the mode the run was asked in). */
  readonly mode?: Mode;
  readonly labels?: LabelSource;
  /** Include turns of live room episodes (they have no label). */
  readonly turns?: boolean;
}

export interface Examples {
  readonly examples: (QuestionExample | TurnExample)[];
  /** Why records gave no example: reason -> count. */
  readonly skipped: Readonly<Record<string, number>>;
}

const labelText = (l: string | readonly string[]) => (typeof l === "string" ? l : JSON.stringify(l));

export async function examplesFromLog(run: RunRecord, log: RunLog, opts: ExampleOptions = {}): Promise<Examples> {
  const skipped: Record<string, number> = {};
  const skip = (reason: string, n = 1) => {
    skipped[reason] = (skipped[reason] ?? 0) + n;
  };
  for (const [kind, n] of Object.entries(log.unknownKinds)) skip(`records of unknown kind "${kind}"`, n);
  const items = await loadQuestionItems(run, log, opts);
  const labels = opts.labels ?? "official";
  const examples: (QuestionExample | TurnExample)[] = [];
  for (const { line, record } of log.records) {
    switch (record.kind) {
      case "benchmark_item": {
        const found = items.get(record.result.id)!;
        const ex = await questionExample(found.benchmark, found.item, record, line, run, opts.mode ?? record.mode, labels);
        if (typeof ex === "string") skip(ex);
        else examples.push(ex);
        break;
      }
      case "room_episode":
        if (opts.turns) examples.push(...turnExamples(record, line, run, skip));
        else skip("room episodes (no labels; with --turns, sft and chat exports take their turns)");
        break;
      case "demo_story":
        skip("demo stories (no benchmark item to build the prompt from)");
        break;
      case "imported_context":
        skip("imported socialized contexts (no question)");
        break;
    }
  }
  return { examples, skipped };
}

export interface FoundItem {
  readonly benchmark: Benchmark;
  readonly item: BenchItem;
}

/**
 * The benchmark options a run was asked with (`bench --context full`): FANToM's prompts depend on
 * them, the social world's on its context and facts (its flags: `stance: true`...) and its items
 * on the depth, usersim's on the hierarchy and its items on the split. A yes-or-no key of no
 * option here is a flag the world declares (recordedOptions), which the benchmark checks as `bench`
 * does; other keys (the judge's spec, Hi-ToM's vpLabels) are left out, as before flags. (An
 * LLM judge is not needed to rebuild prompts: references are checked with the offline judge.)
 */
const RunBenchmarkOptions = z
  .object({
    context: z.enum(["short", "full"]).optional(),
    depth: z.number().int().nonnegative().optional(),
    embedder: z.string().optional(),
    aggregation: z.enum(["set", "part", "conversation"]).optional(),
    hierarchy: z.string().optional(),
    weights: z.string().optional(),
    split: z.string().optional(),
  })
  .catchall(z.unknown())
  .default({});
const OPTION_KEYS = new Set(Object.keys(RunBenchmarkOptions.unwrap().shape));

/**
 * Every logged question's item, read from the benchmark's data file (once per file). `judging`
 * false: the items are only read, never judged, so a judge's model (FANToM's ONNX embedder) is not loaded.
 */
export async function loadQuestionItems(run: RunRecord, log: RunLog, opts: Pick<ExampleOptions, "data"> = {}, judging = true): Promise<Map<string, FoundItem>> {
  const out = new Map<string, FoundItem>();
  const parsed = RunBenchmarkOptions.safeParse(run.params.options);
  if (!parsed.success) throw new DataError(log.path, { field: `run ${run.id} params.options` }, parsed.error.issues[0]!.message);
  const given = Object.entries(parsed.data).filter(([k, v]) => v !== undefined && (judging || k !== "embedder"));
  // Other keys: a yes-or-no one is a flag; the rest (the judge, Hi-ToM's vpLabels) do not change prompts.
  const flags = given.filter(([k, v]) => !OPTION_KEYS.has(k) && typeof v === "boolean");
  const benchOptions: BenchmarkOptions = { ...Object.fromEntries(given.filter(([k]) => OPTION_KEYS.has(k))), ...(flags.length ? { flags: Object.fromEntries(flags) as Record<string, boolean> } : {}) };
  const byFile = new Map<string, { benchmark: Benchmark; items: readonly BenchItem[] }>();
  for (const { line, record } of log.records) {
    if (record.kind !== "benchmark_item") continue;
    if (!isWorldName(record.benchmark)) throw new DataError(log.path, { line }, `unknown benchmark "${record.benchmark}"`);
    const file = opts.data ?? (typeof run.params.data === "string" ? run.params.data : record.result.file);
    const key = `${record.benchmark}\n${file}`;
    let loaded = byFile.get(key);
    if (!loaded) {
      if (!existsSync(file)) {
        throw new DataError(file, {}, `run ${run.id}'s data file is not there; exports rebuild each prompt from it (give its path with --data)`);
      }
      const benchmark = await loadBenchmark(record.benchmark, benchOptions);
      loaded = { benchmark, items: await benchmark.load(file) };
      byFile.set(key, loaded);
    }
    // By position, not id: ids carry the file's name, and the file may have moved.
    const item = loaded.items[record.result.index];
    if (!item) throw new DataError(file, {}, `has no question ${record.result.index + 1} (logged on line ${line} of run ${run.id}): is it the file the run used?`);
    if (item.question !== record.result.question) {
      throw new DataError(file, { field: item.id }, `question differs from the one logged on line ${line} of run ${run.id}: the file changed since the run`);
    }
    out.set(record.result.id, { benchmark: loaded.benchmark, item });
  }
  return out;
}

async function questionExample(
  benchmark: Benchmark,
  item: BenchItem,
  record: BenchmarkItemRecord,
  logLine: number,
  run: RunRecord,
  mode: Mode,
  labels: LabelSource,
): Promise<QuestionExample | string> {
  const r = record.result;
  const label = labels === "official" ? r.official : r.worldModel;
  if (label === null) return "questions the world model holds no answer to (--labels world)";
  const answer = benchmark.answerText(item, label, mode);
  if (answer === undefined) return "labels that are not one of the question's choices";
  // The reference answer must score as correct under the official rule (when it is the official label).
  if ((labels === "official" || r.agrees) && !benchmark.judge(item, answer).correct) {
    return "reference answers the official judge does not accept";
  }
  const task = benchmark.task(item, mode);
  // A GRPO run whose policy wrote its own context (`train grpo --context self`, `self-latest`) was
  // asked another prompt in simulation mode: the export asks it too, and its reference is the written context.
  const recorded = run.params.context;
  const asked = await askedQuestion(task, mode === "simulation" && isWrittenSource(recorded) ? recorded : "world");
  // Over a compact context (simulation mode), the reply cites the line that gives the label.
  const reference = replyFor(asked, task.question, answer);
  if (reference === undefined) return "labels no line of the compact context gives (simulation mode answers by citing a line)";
  return {
    kind: "question",
    dataSource: `socialworld/${record.benchmark}`,
    ability: benchmark.ability ?? "theory_of_mind",
    // What a policy is asked in this mode (simulation: the question over the story's socialized
    // context), as the trainers and the policy agents ask it.
    prompt: asked.text,
    groundTruth: labelText(label),
    reference,
    meta: {
      id: r.id,
      index: r.index,
      benchmark: record.benchmark,
      type: r.type,
      mode,
      question: r.question,
      labelSource: labels,
      official: labelText(r.official),
      worldModel: r.worldModel === null ? null : labelText(r.worldModel),
      agrees: r.agrees,
      cause: r.cause ?? null,
      choices: task.choices ?? task.candidates ?? [],
      contextId: record.context_id,
      file: r.file,
      line: r.line ?? null,
      field: r.field ?? null,
      run: run.id,
      logLine,
    },
  };
}

function turnExamples(record: RoomEpisodeRecord, logLine: number, run: RunRecord, skip: (reason: string) => void): TurnExample[] {
  const out: TurnExample[] = [];
  for (const t of record.turns) {
    // What a fallback did, or a turn where nothing was seen or done, teaches nothing.
    if (t.source === "fallback") {
      skip("turns a fallback took (the agent failed or ran out of time)");
      continue;
    }
    if (t.observation.trim() === "") {
      skip("turns with an empty observation");
      continue;
    }
    const response = t.raw ?? t.actionText ?? (typeof t.action === "string" ? t.action : JSON.stringify(t.action));
    if (response.trim() === "" || response.trim() === "none") {
      skip("turns where the agent did nothing");
      continue;
    }
    out.push({
      kind: "turn",
      dataSource: `socialworld/room/${record.world}`,
      prompt: t.prompt ?? t.observation,
      response,
      meta: { world: record.world, agent: t.agent, timestep: t.timestep ?? null, source: t.source, run: run.id, logLine },
    });
  }
  return out;
}

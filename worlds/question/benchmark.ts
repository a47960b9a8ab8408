/**
 * What a benchmark is to the runner: items read from a file, the world model's ground truth for
 * each (its episode and its own answer), the prompt an agent sees, and the official scoring rule.
 */
import type { z } from "zod";
import type { SocializedContext } from "../core/socialized-context.js";
import type { QuestionTask } from "./world.js";

export type Mode = "vanilla" | "simulation";
export const MODES: readonly Mode[] = ["vanilla", "simulation"];

export interface BenchItem {
  readonly id: string;
  /** 0-based position in the file. */
  readonly index: number;
  readonly source: { readonly file: string; readonly line?: number; readonly field?: string };
  /** The row of the report's table this item counts in. */
  readonly type: string;
  /** Further splits of the report ("deception" -> "true"). */
  readonly splits?: Readonly<Record<string, string>>;
  readonly question: string;
  /** The official label. */
  readonly answer: string | readonly string[];
}

export interface GroundTruth {
  /** The world model's episode of the story, as a socialized context. */
  readonly context: SocializedContext;
  /** Names the story's context; questions about one story share it (the log writes it once). */
  readonly contextId: string;
  /** The world model's own answer. */
  readonly label: string | readonly string[] | undefined;
  /** Whether the official label says the same. */
  readonly agrees: boolean;
  /** Why not, as a key of the benchmark's `causes`. */
  readonly cause?: string;
  /** What else explains this item's disagreement ("generated: green_box": the label before a hand edit). */
  readonly note?: string;
}

export interface Verdict {
  readonly correct: boolean;
  /** A graded score in [0, 1] where the official evaluator has one (word F1). */
  readonly score?: number;
  /** What the answer is worth as a reward, when that is not 1/0 for correct (graded) or the score (usersim: -1 for a malformed reply). */
  readonly reward?: number;
  /** An answer written in levels (usersim's hierarchy): each level's own score in its order (null: no ground truth for it). */
  readonly levels?: readonly (number | null)[];
  readonly detail?: Readonly<Record<string, unknown>>;
}

/**
 * How a graded benchmark's report reads: `accuracy` is the mean score (not the share of correct
 * answers), and `correct` counts what `correct` means there. The words are the report's column names.
 */
export interface Graded {
  /** What `correct` counts ("well-formed"). */
  readonly correct: string;
  /** What the mean score is ("alignment"). */
  readonly score: string;
}

export interface Benchmark<I extends BenchItem = BenchItem> {
  readonly name: string;
  readonly title: string;
  /** Table rows, in order. */
  readonly types: readonly string[];
  /** Disagreement causes: key -> what it means. */
  readonly causes: Readonly<Record<string, string>>;
  /** Reads a data file; throws (or rejects with) a DataError naming the file and line or field. */
  load(file: string): I[] | Promise<I[]>;
  /** load(), giving the event loop back now and then (a server reading a large set); absent: load() it is. */
  loadInSlices?(file: string): Promise<I[]>;
  /** What the last load() found that does not stop a run but changes what it means (ToMi without its .trace). */
  readonly warnings?: readonly string[];
  task(item: I, mode: Mode): QuestionTask;
  groundTruth(item: I): Promise<GroundTruth>;
  /** The official evaluator's rule for one answer. */
  judge(item: I, answer: string): Verdict;
  /**
   * A label written as the answer this benchmark's prompt asks for in `mode`, so that a model
   * fine-tuned on it learns the format the judge reads (undefined when the label cannot be
   * written so). The exporters and trainers check every such answer with `judge`.
   */
  answerText(item: I, label: string | readonly string[], mode: Mode): string | undefined;
  /** Benchmark-level metrics beyond accuracy by type (FANToM's set scores). */
  metrics?(items: readonly I[], verdicts: readonly Verdict[]): Readonly<Record<string, number>>;
  /**
   * Where the answer is an action of the benchmark's own schema (the social world's JSON
   * reactions) rather than free text: what GRPO checks and scores. Absent: the answer is text
   * (`{answer}`), judged by `judge`.
   */
  actionAnswer?(item: I): ActionAnswer;
  /**
   * The majority-class baseline (`--agent majority:FILE`), where the benchmark defines one: fitted
   * on the labelled items of a file, it answers a question with the most frequent label among the
   * fitted items like it (the social world: of the same depth), written as the prompt asks.
   */
  majority?(fitted: readonly I[]): (task: QuestionTask) => string;
  /** A graded benchmark: every verdict has a score, and the report's accuracy is their mean. */
  readonly graded?: Graded;
  /** The modes it can be asked in (default: every mode). */
  readonly modes?: readonly Mode[];
  /** What a training row's `ability` is (default "theory_of_mind"). */
  readonly ability?: string;
  /**
   * A judge that asks a model (an LLM judge, given as the `judgeModel` option): when there is one,
   * runs take their verdicts from it; `judge` stays the offline rule, which exports check
   * reference answers with. Several answers to one item are judged together (a GRPO group: an
   * LLM judge scores them in one request).
   */
  assess?(item: I, answers: readonly string[], signal?: AbortSignal): Promise<Verdict[]>;
}

/**
 * An answer that is an action: the strict format is its zod schema (anything else gets GRPO's
 * format failure), `exact` scores a well-formed action, and the action's `text` is scored against
 * `reference` (token F1, ROUGE-L; `rougeL` replaces the shared ROUGE-L where the benchmark
 * tokenizes its own way).
 */
export interface ActionAnswer<A = unknown> {
  readonly schema: z.ZodType<A>;
  exact(action: A): number;
  text(action: A): string;
  readonly reference: string;
  rougeL?(text: string): number;
}

/** Benchmark-specific settings (the `bench` command's --context, --embedder, --aggregation, --depth, --vp-labels). */
export interface BenchmarkOptions {
  /** FANToM: the conversation given with each question, "short" (official default) or "full"; social: the prompt, "full" (default) or "short" (the profile line, the feed and a line of its deciding facts). */
  readonly context?: "short" | "full";
  /** FANToM: how free-form beliefs are judged, "lexical" or "onnx:DIR"; social: BERTScore's encoder, "onnx:DIR". */
  readonly embedder?: string;
  /** FANToM: what ALL* and ALL group by: "set", "part" or "conversation". */
  readonly aggregation?: "set" | "part" | "conversation";
  /**
   * The yes-or-no options the world's benchmark declares itself (BenchmarkEntry.flags: the social
   * prompt's facts, `--stance`...), by key. A run's parameters record each given one beside the
   * options above (`stance: true`).
   */
  readonly flags?: Readonly<Record<string, boolean | undefined>>;
  /** Social: only the tasks at this depth (0: reactions to the post, 1: to a depth-0 comment or repost). */
  readonly depth?: number;
  /** Hi-ToM: what VP entries are scored against, "cotp" (the CoTP twin's label: upstream's evaluator) or "own". */
  readonly vpLabels?: "cotp" | "own";
  /** usersim: the hierarchy file (HumanLM's layout); default: the six states of HumanLM's paper. */
  readonly hierarchy?: string;
  /** usersim: the judge's weights, "tag=weight,..." (default 1 each). */
  readonly weights?: string;
  /** usersim: only the records of this split (train, val, test...). */
  readonly split?: string;
  /** usersim: a model that judges the replies (an LLM judge) instead of the offline judge. */
  readonly judgeModel?: JudgeModel;
}

/**
 * A language model that judges answers (an LLM judge). The caller makes it (the command line from
 * `--judge llm:MODEL@URL`, through agents/llm/): a world cannot open a connection itself.
 */
export interface JudgeModel {
  /** The spec it was made from (what a run's parameters record). */
  readonly id: string;
  /**
   * The model's answer to one judging prompt, asked for as JSON that `schema` reads. Rejects when
   * the endpoint fails for good (its retries spent); an answer that does not read is the judge's to handle.
   */
  ask(prompt: string, schema: z.ZodType, opts?: { readonly signal?: AbortSignal }): Promise<string>;
}

/**
 * Options as a run's parameters record them: the flags given (`flags: { stance: true }`) beside
 * the other options (`stance: true`), in the place of `flags` among `opts`' keys. A resumed or
 * continued run compares its recorded options with these as JSON text, so key order matters:
 * runs recorded before worlds declared their flags have `stance` and `agreement` right after
 * `context`, which is where `bench` and `train grpo` put `flags`.
 */
export function recordedOptions(opts: Omit<BenchmarkOptions, "judgeModel">): Record<string, unknown> {
  return Object.fromEntries(Object.entries(opts).flatMap(([k, v]): [string, unknown][] => (k === "flags" ? Object.entries((v ?? {}) as Record<string, boolean | undefined>).filter(([, on]) => on) : [[k, v]])));
}

/** Every option's key, for the names a world's benchmark flag may not take (a run records both side by side, and commands take both as options). */
export const OPTION_KEYS = Object.keys({
  context: 0,
  embedder: 0,
  aggregation: 0,
  flags: 0,
  depth: 0,
  vpLabels: 0,
  hierarchy: 0,
  weights: 0,
  split: 0,
  judgeModel: 0,
} satisfies Record<keyof BenchmarkOptions, 0>) as readonly (keyof BenchmarkOptions)[];

/** Options whose flag is not their name's kebab case: the judge is given as a spec (`--judge llm:...`). */
const FLAGS: Partial<Record<keyof BenchmarkOptions, string>> = { judgeModel: "judge" };

/** An option's command-line flag: vpLabels -> vp-labels. */
export function flagOf(key: keyof BenchmarkOptions): string {
  return FLAGS[key] ?? key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** An option the benchmark does not take, or cannot use (an embedder folder that does not load). */
export class BenchmarkOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkOptionError";
  }
}

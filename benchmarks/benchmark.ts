/**
 * What a benchmark is to the runner: items read from a file, the world model's ground truth for
 * each (its episode and its own answer), the prompt an agent sees, and the official scoring rule.
 */
import type { SocializedContext } from "../worlds/core/socialized-context.js";
import type { QuestionTask } from "../worlds/question/world.js";

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
  readonly detail?: Readonly<Record<string, unknown>>;
}

export interface Benchmark<I extends BenchItem = BenchItem> {
  readonly name: string;
  readonly title: string;
  /** Table rows, in order. */
  readonly types: readonly string[];
  /** Disagreement causes: key -> what it means. */
  readonly causes: Readonly<Record<string, string>>;
  /** Reads a data file; throws DataError naming the file and line or field. */
  load(file: string): I[];
  task(item: I, mode: Mode): QuestionTask;
  groundTruth(item: I): Promise<GroundTruth>;
  /** The official evaluator's rule for one answer. */
  judge(item: I, answer: string): Verdict;
  /** Benchmark-level metrics beyond accuracy by type (FANToM's set scores). */
  metrics?(items: readonly I[], verdicts: readonly Verdict[]): Readonly<Record<string, number>>;
}

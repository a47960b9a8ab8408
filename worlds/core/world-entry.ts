/**
 * What a world's entry point (worlds/<name>/index.ts) gives the rest of the program: the parts it
 * has, each optional. worlds/registry.ts lists the entry points; rooms, the command line, the
 * trainers and the simulation agent find a world's parts there, never in its other files.
 */
import type { Benchmark, BenchmarkOptions } from "../question/benchmark.js";
import type { Solver } from "../question/solver.js";
import type { QuestionMaker } from "./episode-questions.js";
import type { FactSource } from "./leak-audit.js";
import type { GeneratedSet } from "./generated-set.js";

export type { GeneratedSet };
import type { ScenarioFactory } from "./scenario.js";
import type { SocializedContext } from "./socialized-context.js";
import type { CompactContext } from "./compact-context.js";
import type { TraceOrder, WrittenContext } from "./written-context.js";
import type { DecisionSet } from "./scored-decision.js";

export interface WorldEntry {
  /** The name commands, rooms and logs use ("tomi"). */
  readonly name: string;
  readonly title: string;
  /** Episodes for live rooms and for GRPO on a world's agent turns. */
  readonly scenario?: ScenarioFactory;
  /** New benchmark files (`generate`, a benchmark room's generated sets). */
  readonly generator?: Generator;
  /** Its benchmark files: reader, ground truth and official scoring (`bench`, rooms, exports, trainers). */
  readonly benchmark?: BenchmarkEntry;
  /** The simulation agent's answer to a question, from the story text alone. */
  readonly solver?: Solver;
  /**
   * What `train grpo --world <name>` learns from: the agent turns of scripted episodes of
   * `scenario` (the default), or the questions of a set `generator` writes, judged by `benchmark`
   * (the social world: its prediction tasks, scored with its reward).
   */
  readonly trainOn?: "scenario" | "generated";
  /** Decision points the world scores itself (its reward for any action), for `train grpo --world`. */
  readonly decisions?: DecisionSet;
  /** Its fact vocabulary for the information-leak audit (worlds/core/leak-audit.ts): `audit`, audited rooms, GRPO's leak penalty. */
  readonly facts?: FactSource;
  /** ToM questions about any of its episodes, labelled by its world model, in its benchmark's format (`questions`, a room's quiz). */
  readonly questions?: QuestionMaker;
  /**
   * The socialized context compacted to what its questions are answered from, as small policies
   * read it in simulation mode and answer it, by citing a line (compact-context.ts,
   * agents/policy/question-prompt.ts); without it they read the whole context, timestep by timestep.
   * `question`: what is asked, where a world narrows the context to it (Hi-ToM: to the object asked
   * about, as the whole story's lines would not fit a small policy's window).
   */
  readonly compactContext?: (ctx: SocializedContext, question: string) => CompactContext;
  /**
   * The context a policy writes itself in simulation mode with `context=self` (written-context.ts):
   * the world model's trace of what `question` asks about (what SFT teaches and replies are scored
   * against), in `order` (default the story's), the reply's grammar, and the line it is answered from.
   */
  readonly writtenContext?: (ctx: SocializedContext, question: string, order?: TraceOrder) => WrittenContext;
}

/** A yes-or-no option of a world's benchmark: its key (and flag) and help text. */
export interface BenchmarkFlag {
  readonly key: string;
  readonly help: string;
}

export interface BenchmarkEntry {
  /** The options the benchmark takes (others are an error, not silently ignored). */
  readonly options: readonly (keyof BenchmarkOptions)[];
  /**
   * Its yes-or-no options beyond BenchmarkOptions' (the social prompt's facts): `--KEY` on the
   * command line, `flags: { KEY: true }` in the options. Declared by the world, so a command that
   * takes benchmark options learns them from it (cli/benchmark-flags.ts).
   */
  readonly flags?: readonly BenchmarkFlag[];
  /** The benchmark, ready to judge (a model it judges with is loaded). */
  create(opts: BenchmarkOptions): Promise<Benchmark>;
}

export interface Generator {
  readonly describe: string;
  /** What N counts, in messages ("questions", the default; the social world's "trees", usersim's "conversation records"). */
  readonly unit?: string;
  /** The fewest questions it can write, and why (checked by `generate --n` and a room's `generate.n`). */
  readonly least?: { readonly n: number; readonly why: string };
  /** "folder": `out` names a folder its files are written into (made if missing; the recommendation world's MovieLens folder). Default: a file. */
  readonly output?: "file" | "folder";
  /** N questions from `seed`, as the files to write for `out`. */
  generate(n: number, seed: number, out: string, onProgress?: (done: number) => void): Promise<GeneratedSet>;
}


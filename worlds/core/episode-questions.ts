/**
 * Theory-of-mind questions about an episode, labelled by the world model: what a world gives
 * (worlds/<name>/episode-questions.ts, behind its index.ts) so that any logged episode of it, a
 * room's or a benchmark story's, becomes questions in its benchmark's own file format. The one
 * driver (benchmarks/episode-questions.ts) knows no world; the registry says which worlds can.
 */
import type { Episode } from "./episode.js";
import type { GeneratedSet } from "./generated-set.js";
import type { Benchmark, BenchItem } from "../question/benchmark.js";

export interface EpisodeQuestion {
  /** The benchmark's question type (a row of its report: "first_order_tom", "order_3"). */
  readonly type: string;
  /** As the benchmark file writes it. */
  readonly question: string;
  /** The world model's label. */
  readonly answer: string | readonly string[];
  /** The agents the question asks about, outermost first ([] for reality and memory). */
  readonly about: readonly string[];
}

/** One episode as a story of the benchmark, and every question the world asks about it. */
export interface EpisodeQuiz {
  /** Where the episode comes from, for messages ("room episode 3", "fb_all_val.txt line 12"). */
  readonly source: string;
  readonly questions: readonly EpisodeQuestion[];
}

export interface QuestionMaker {
  /** Every question type it asks (the benchmark's report rows). */
  readonly types: readonly string[];
  /** The data file's extension (".txt"), for files named by the program (a room's quiz). */
  readonly extension: string;
  /**
   * The questions about an episode of the world's scenario (a room's, replayed from its log) that
   * began in `initialState`. Labels come from the story the file will tell, checked against the
   * episode's own final state: a difference is an error, never a wrong label.
   */
  fromEpisode(episode: Episode, initialState: unknown, source: string): Promise<EpisodeQuiz>;
  /**
   * The questions about the stories of a benchmark file's `items` (a benchmark run's), one quiz
   * per story in file order; the items are the benchmark's own (`benchmark.load`).
   */
  fromItems(benchmark: Benchmark, items: readonly BenchItem[]): Promise<EpisodeQuiz[]>;
  /**
   * The benchmark files that ask `quizzes`' questions (each quiz as this maker returned it, its
   * `questions` possibly a subset), written for `out`; `seed` orders what the format shuffles.
   */
  write(quizzes: readonly EpisodeQuiz[], out: string, seed: number): GeneratedSet;
}

/** The story written for an episode does not end as the episode did (a world's bug, reported, never written). */
export class StoryMismatch extends Error {
  constructor(source: string, question: string, told: string, lived: string | undefined) {
    super(`${source}: "${question}": the story written for this episode answers ${told}, the episode itself ${lived ?? "nothing"}`);
    this.name = "StoryMismatch";
  }
}

/** One timestep of a played episode: what the environment said, then who did what, in agent order (the order worlds apply them). */
export interface PlayedStep<A, X> {
  readonly timestep: number;
  readonly narration: readonly X[];
  readonly actions: readonly { readonly agent: string; readonly action: A }[];
}

/** The timesteps of an episode with the actions applied (the logged turns'), no-ops left out: what a story of it tells. */
export function playedSteps<A extends { readonly type: string }, X>(episode: Episode): PlayedStep<A, X>[] {
  const acted = new Map<string, A>();
  for (const t of episode.turns) acted.set(`${t.timestep}\u0000${t.agent}`, t.action as A);
  return episode.steps.map((step) => ({
    timestep: step.timestep,
    narration: (step.exogenous ?? []) as X[],
    actions: episode.agents.flatMap((agent) => {
      const action = acted.get(`${step.timestep}\u0000${agent}`);
      return action && action.type !== "none" ? [{ agent, action }] : [];
    }),
  }));
}

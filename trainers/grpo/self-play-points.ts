/**
 * A self-play round's decision points, all from the round's own episodes and rewarded by them:
 *
 * - the room's quiz questions about each episode (server/rooms/quiz.ts writes them, labelled by the
 *   world model and checked against it, as a benchmark file in the run's folder), asked exactly as
 *   the room asked its seats (the benchmark's vanilla prompt) and rewarded by exact match with the
 *   world model's label (the benchmark's own judge of that label);
 * - the turns the policy played (turn-points.ts), rewarded by validity and the world's own rewards.
 *
 * Nothing is rewarded for doing what the story's script did.
 */
import type { AnyWorld } from "../../worlds/core/world.js";
import { BenchPoints } from "./bench-points.js";
import type { PointSource } from "./decision-point.js";
import { JoinedPoints } from "./joined-points.js";
import { TurnPoints, type PlayedTurns } from "./turn-points.js";

/** One episode a round learns from: the policy's turns, and the file of its quiz (when the room quizzes). */
export interface SelfPlayEpisode extends PlayedTurns {
  /** The benchmark file of the episode's quiz questions (every seat's). */
  readonly quizFile?: string;
}

export interface SelfPlaySources {
  /** One source per quizzed episode, in episode order. */
  readonly quizzes: readonly BenchPoints[];
  readonly turns: TurnPoints | undefined;
  /** Everything above as one source. */
  readonly all: PointSource;
}

export async function selfPlayPoints(world: AnyWorld, episodes: readonly SelfPlayEpisode[], opts: { system?: string; turns?: boolean } = {}): Promise<SelfPlaySources> {
  const system = opts.system !== undefined ? { system: opts.system } : {};
  const quizzes: BenchPoints[] = [];
  for (const e of episodes) if (e.quizFile) quizzes.push(await BenchPoints.open(world.name, e.quizFile, "vanilla", system));
  const played = opts.turns === false ? [] : episodes.filter((e) => e.turns.length > 0);
  const turns = played.length ? new TurnPoints(world, played, opts.system) : undefined;
  const sources: PointSource[] = [...quizzes, ...(turns ? [turns] : [])].filter((s) => s.size > 0);
  if (sources.length === 0) throw new Error(`nothing to learn from in ${episodes.length} episode(s) of ${world.name}: no quiz questions and no turns played by the policy`);
  const questions = quizzes.reduce((n, q) => n + q.size, 0);
  const description = `self-play on ${episodes.length} ${world.name} episode(s): ${questions} quiz questions (exact match with the world model's label), ${turns?.size ?? 0} turns (valid actions and the world's rewards)`;
  return { quizzes, turns, all: new JoinedPoints(sources, description) };
}

/**
 * A self-play pool's held-out set (the `heldOutEpisodes` option): the quiz questions of its first
 * N quizzed episodes, which no round trains on, asked to every round's policy. The same questions
 * for every round, so that the curve's points differ by what the policies learned and not by
 * which stories came up (the room's own-episode quiz draws other stories every round, and their
 * spread from block to block swamps a round's change: docs/self-play.md).
 *
 * The questions are asked exactly as the room's quiz asks a seat (server/rooms/quiz.ts): the
 * world's benchmark reads each episode's quiz file, the benchmark runner asks the agent the
 * seat's spec makes, in the vanilla prompt, and the benchmark's judge scores the answer against
 * the world model's label. A quiz file holds every seat's questions, and seats' draws overlap: a
 * question asked of several seats is scored once.
 */
import { createHash } from "node:crypto";
import { loadAgent } from "../../agents/registry.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { loadBenchmark } from "../../worlds/registry.js";
import type { Benchmark, BenchItem } from "../../worlds/question/benchmark.js";

/** How many of the held-out questions a policy answered right. */
export interface HeldOutScore {
  readonly questions: number;
  readonly correct: number;
  /** Names the question set (a hash of its question ids): every round's score names the same one. */
  readonly questionSet: string;
}

/** Questions answered at once: one batch of the engine (the policy agent batches concurrent calls). */
const CONCURRENCY = 16;

/**
 * The distinct questions of the quiz files, in file order: a question is the prompt the agent is
 * given (story and question) with its label, so one asked of several seats counts once.
 */
export async function heldOutQuestions(benchmark: Benchmark, files: readonly string[]): Promise<BenchItem[]> {
  const seen = new Set<string>();
  const kept: BenchItem[] = [];
  for (const file of files) {
    for (const item of await benchmark.load(file)) {
      const key = JSON.stringify([benchmark.task(item, "vanilla").prompt, item.answer]);
      if (seen.has(key)) continue;
      seen.add(key);
      kept.push(item);
    }
  }
  return kept;
}

/** The name of a question set: a hash of its ids, in order. */
export function questionSetOf(items: readonly BenchItem[]): string {
  return createHash("sha256")
    .update(items.map((i) => i.id).join("\n"))
    .digest("hex")
    .slice(0, 12);
}

/**
 * Asks the agent `spec` makes (a round's `policy:DIR?options`, as the room's seats are given it)
 * every held-out question of `world`'s quiz files; `signal` stops it between questions.
 */
export async function scoreHeldOut(a: {
  readonly world: string;
  readonly files: readonly string[];
  readonly spec: string;
  readonly signal?: AbortSignal;
  /** After each answer (the round's thread looks at its stop flag here). */
  readonly onAnswer?: (done: number, total: number) => void;
}): Promise<HeldOutScore> {
  const benchmark = await loadBenchmark(a.world);
  const items = await heldOutQuestions(benchmark, a.files);
  if (items.length === 0) throw new Error(`the held-out episodes' quiz files have no questions (${a.files.join(", ")})`);
  const agent = await loadAgent(a.spec);
  const results = await runBenchmark({
    benchmark,
    items,
    agent,
    mode: "vanilla",
    concurrency: CONCURRENCY,
    ...(a.signal ? { signal: a.signal } : {}),
    ...(a.onAnswer ? { onResult: (_r, done, total) => a.onAnswer!(done, total) } : {}),
  });
  return { questions: results.length, correct: results.filter((r) => r.correct).length, questionSet: questionSetOf(items) };
}

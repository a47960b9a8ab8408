/**
 * A room's quiz (the simulation room's `quiz` option): at an episode's end each seat is asked a
 * few theory-of-mind questions about the episode it just played, drawn for that seat (seeded by
 * the episode's seed and the seat), labelled by the world model. The questions are written as a
 * benchmark file of the world into the run's folder (`quiz/episode-N`, read back and checked by
 * benchmarks/episode-questions.ts) and asked as that benchmark asks them: an agent through the
 * benchmark runner, a person in the seat through the room's messages, each answer judged by the
 * benchmark's official rule.
 *
 * Who sees what: a seat's questions go to that seat's client only, and its labels only once its
 * quiz has closed; the room's state shows scores alone. The episode's own record (every agent's
 * observations and mind) is logged at the episode's end, after a `room_quiz_open` record, and
 * clients are not shown it until the quiz's `room_quiz` record closes it
 * (server/security/open-quizzes.ts), so that nobody reads the answers off the run's log meanwhile.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { selectQuestions, writeQuestions } from "../../benchmarks/episode-questions.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import type { Agent } from "../../worlds/core/agent.js";
import type { Episode } from "../../worlds/core/episode.js";
import type { EpisodeQuestion, QuestionMaker } from "../../worlds/core/episode-questions.js";
import { hashString } from "../../worlds/core/rng.js";
import type { Benchmark, BenchItem } from "../../worlds/question/benchmark.js";
import type { QuizMessage } from "../protocol.js";
import type { QuizOptions } from "./options.js";

/** One seat's questions: the benchmark's items, and the questions as the world model labelled them. */
export interface SeatQuestions {
  readonly agent: string;
  readonly items: readonly BenchItem[];
  readonly questions: readonly EpisodeQuestion[];
}

export interface PreparedQuiz {
  /** The benchmark file the questions were written to. */
  readonly file: string;
  readonly seats: readonly SeatQuestions[];
}

/** One question as asked, answered and judged (what the log keeps, and a seat's result shows). */
export interface AnsweredQuestion {
  readonly id: number;
  readonly type: string;
  readonly question: string;
  readonly label: string;
  readonly answer: string;
  readonly correct: boolean;
  /** "agent", "human", or why there is no answer: "timeout", "error". */
  readonly source: string;
}

/**
 * Writes `opts.questions` questions for each of `agents` about `episode` into `dir/quiz/`, and
 * reads them back with the benchmark. Seats the episode gives no question are left out.
 */
export async function prepareQuiz(a: {
  readonly world: string;
  readonly maker: QuestionMaker;
  readonly benchmark: Benchmark;
  readonly episode: Episode;
  readonly initialState: unknown;
  readonly number: number;
  readonly seed: number;
  readonly agents: readonly string[];
  readonly opts: QuizOptions;
  readonly dir: string;
}): Promise<PreparedQuiz | undefined> {
  const source = `episode ${a.number} (seed ${a.seed})`;
  const quiz = await a.maker.fromEpisode(a.episode, a.initialState, source);
  const perSeat = a.agents.flatMap((agent) => {
    const [mine] = selectQuestions(a.maker, [quiz], { ...(a.opts.types ? { types: a.opts.types } : {}), max: a.opts.questions, seed: hashString(`${a.seed}:${agent}`) });
    return mine ? [{ agent, quiz: mine }] : [];
  });
  if (perSeat.length === 0) return undefined;
  mkdirSync(join(a.dir, "quiz"), { recursive: true });
  const written = await writeQuestions(
    a.world,
    perSeat.map((s) => s.quiz),
    join(a.dir, "quiz", `episode-${a.number}${a.maker.extension}`),
    a.seed,
  );
  const items = await a.benchmark.load(written.set.data);
  let at = 0;
  const seats = perSeat.map(({ agent, quiz: q }) => {
    const mine = items.slice(at, at + q.questions.length);
    at += q.questions.length;
    return { agent, items: mine, questions: q.questions };
  });
  return { file: written.set.data, seats };
}

/** An agent's answers, through the benchmark runner (its prompt, its deadline, its judge). */
export async function agentAnswers(benchmark: Benchmark, seat: SeatQuestions, agent: Agent, timeoutMs: number, signal: AbortSignal): Promise<AnsweredQuestion[]> {
  const results = await runBenchmark({ benchmark, items: seat.items, agent, mode: "vanilla", turnTimeoutMs: timeoutMs, signal });
  return results.map((r, id) => answered(seat, id, r.answer, r.correct, r.failure === "timeout" ? "timeout" : r.error !== undefined ? "error" : "agent"));
}

/** A person's answers (by question id; absent: unanswered), judged by the benchmark. */
export function personAnswers(benchmark: Benchmark, seat: SeatQuestions, given: ReadonlyMap<number, string>): AnsweredQuestion[] {
  return seat.items.map((item, id) => {
    const answer = given.get(id);
    return answered(seat, id, answer ?? "", answer !== undefined && benchmark.judge(item, answer).correct, answer === undefined ? "timeout" : "human");
  });
}

function answered(seat: SeatQuestions, id: number, answer: string, correct: boolean, source: string): AnsweredQuestion {
  const q = seat.questions[id]!;
  const label = Array.isArray(q.answer) ? q.answer.join(", ") : String(q.answer);
  return { id, type: q.type, question: q.question, label, answer, correct, source };
}

/** What a person in the seat is sent: the story and its own questions, never their labels. */
export function quizMessage(benchmark: Benchmark, seat: SeatQuestions, episode: number, deadline: number): QuizMessage {
  const tasks = seat.items.map((item) => benchmark.task(item, "vanilla"));
  return {
    episode,
    agent: seat.agent,
    story: tasks[0]?.story ?? "",
    questions: tasks.map((t, id) => {
      const choices = t.choices ?? t.candidates;
      return { id, type: seat.questions[id]!.type, question: t.question, ...(choices ? { choices } : {}) };
    }),
    deadline,
  };
}


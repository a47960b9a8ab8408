/**
 * Runs a benchmark: every item's story through the world model (ground truth), its question
 * through the game loop with the agent under test in the respondent's seat, the official scorer
 * on the answer, and one append-only log line per item.
 */
import type { Agent } from "../worlds/core/agent.js";
import { runEpisode, errorMessage } from "../worlds/core/loop.js";
import { QuestionWorld, type Answer, type QuestionState } from "../worlds/question/world.js";
import type { EpisodeLog } from "../store/episode-log.js";
import { writesHeld } from "../store/write-fence.js";
import type { Episode, TurnFailure, TurnRecord } from "../worlds/core/episode.js";
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../worlds/question/benchmark.js";
import type { TraceFidelity } from "../worlds/core/written-context.js";
import { writtenFidelity } from "./written-fidelity.js";
import { isWrittenSource } from "../agents/policy/options.js";

export interface ItemResult {
  readonly id: string;
  readonly index: number;
  readonly type: string;
  readonly splits?: Readonly<Record<string, string>>;
  readonly file: string;
  readonly line?: number;
  readonly field?: string;
  readonly question: string;
  readonly official: string | readonly string[];
  readonly answer: string;
  readonly correct: boolean;
  readonly score?: number;
  readonly detail?: Readonly<Record<string, unknown>>;
  readonly worldModel: string | readonly string[] | null;
  readonly agrees: boolean;
  readonly cause?: string;
  readonly note?: string;
  /** A reply that wrote its context (`context=self`): its trace against the world model's (written-fidelity.ts). */
  readonly writtenContext?: TraceFidelity;
  /** Why the agent's own answer was not used (timeout, error); the fallback's answer counts. */
  readonly error?: string;
  /** That failure's kind: "timeout", "error" or "invalid" (an answer the question refused). */
  readonly failure?: TurnFailure;
  readonly latencyMs: number;
}

export interface RunOptions<I extends BenchItem> {
  readonly benchmark: Benchmark<I>;
  readonly items: readonly I[];
  readonly agent: Agent;
  readonly mode: Mode;
  readonly concurrency?: number;
  readonly turnTimeoutMs?: number;
  /** Where each item's record goes as soon as it is done. */
  readonly log?: EpisodeLog;
  readonly runId?: string;
  /** Context ids whose socialized context the log already holds (resume). */
  readonly loggedContexts?: Set<string>;
  /** Results already logged by an interrupted run with the same settings (resume). */
  readonly done?: ReadonlyMap<string, ItemResult>;
  readonly onResult?: (result: ItemResult, finished: number, total: number) => void;
  readonly signal?: AbortSignal;
}

export async function runBenchmark<I extends BenchItem>(opts: RunOptions<I>): Promise<ItemResult[]> {
  const { benchmark, items, mode } = opts;
  const results: (ItemResult | undefined)[] = new Array(items.length);
  let finished = 0;
  const todo: number[] = [];
  items.forEach((item, i) => {
    const prior = opts.done?.get(item.id);
    if (prior) {
      results[i] = prior;
      finished++;
    } else todo.push(i);
  });
  const byId = new Map(items.map((it) => [it.id, it]));
  const agents = { respondent: opts.agent as Agent<Answer> };
  const loggedContexts = opts.loggedContexts ?? new Set<string>();
  const world = new QuestionWorld((task, answer) => {
    const item = byId.get(task.itemId);
    return item ? rewardOf(benchmark, benchmark.judge(item, answer)) : 0;
  });

  /** Why the benchmark's judge (an LLM judge) failed for good, which stops the run. */
  let judgeError: unknown;

  const runOne = async (i: number): Promise<void> => {
    const item = items[i]!;
    const gt = await benchmark.groundTruth(item);
    const task = benchmark.task(item, mode);
    const started = performance.now();
    const episode = await runEpisode<QuestionState, Answer, never>(world, {
      seed: item.id,
      initialState: QuestionWorld.initial(task),
      agents,
      turnTimeoutMs: opts.turnTimeoutMs,
      signal: opts.signal,
    });
    // Stopped before the agent answered (not asked yet, or its turn cut off and a fallback in its
    // place): the question was not asked to the end, so it is not logged; a resumed run asks it.
    const turn = episode.turns[0];
    if (opts.signal?.aborted && (!turn || turn.error !== undefined)) return;
    const answer = episode.finalState.answer ?? "";
    let verdict: Verdict;
    if (benchmark.assess) {
      try {
        verdict = (await benchmark.assess(item, [answer], opts.signal))[0]!;
      } catch (err) {
        // Stopped while the judge was asked, or the judge failed for good: not judged, so not
        // logged; a resumed run asks it again. A failed judge stops the run (JudgeFailed).
        if (!opts.signal?.aborted) judgeError ??= err;
        return;
      }
    } else verdict = benchmark.judge(item, answer);
    // A policy that wrote the story's context itself (its reply's info says so) is scored on it too.
    const source = turn?.info?.context;
    const raw = turn?.raw;
    const written = isWrittenSource(source) && raw !== undefined ? await writtenFidelity(task, raw, source) : undefined;
    // Logged in one step next: in a server of a group, once its process is known to hold its place (store/write-fence.ts).
    await writesHeld();
    settle(i, item, gt, episode, started, answer, verdict, written);
  };

  /** Logs one judged item and reports it (synchronous: the async part is above). */
  const settle = (i: number, item: I, gt: GroundTruth, episode: Episode<QuestionState>, started: number, answer: string, verdict: Verdict, written: TraceFidelity | undefined): void => {
    const turn = episode.turns[0];
    const result = itemResult(item, gt, answer, verdict, turn, Math.round((performance.now() - started) * 1000) / 1000, written);
    opts.log?.append({
      kind: "benchmark_item",
      run: opts.runId ?? null,
      benchmark: benchmark.name,
      agent: opts.agent.id,
      mode,
      result,
      context_id: gt.contextId,
      // Each story's context is written once per log; later questions about it name it by id.
      socialized_context: loggedContexts.has(gt.contextId) ? undefined : gt.context,
      // The respondent's reward is the verdict's (an LLM judge's, when the benchmark asks one).
      turns: episode.turns.map((t) => turnLog(t, rewardOf(benchmark, verdict))),
    });
    loggedContexts.add(gt.contextId);
    results[i] = result;
    finished++;
    opts.onResult?.(result, finished, items.length);
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length && !opts.signal?.aborted && judgeError === undefined) {
      const i = todo[next++]!;
      await runOne(i);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency ?? 1, todo.length || 1));
  await Promise.all(Array.from({ length: n }, worker));
  if (judgeError !== undefined) throw new JudgeFailed(finished, items.length, judgeError);
  if (opts.signal?.aborted) throw new RunAborted(finished, items.length);
  return results as ItemResult[];
}

/** What an answer is worth as a reward: the verdict's own, else its score (graded) or 1/0. */
export function rewardOf(benchmark: Pick<Benchmark, "graded">, v: Verdict): number {
  return v.reward ?? (benchmark.graded ? (v.score ?? 0) : v.correct ? 1 : 0);
}

/** A turn as the log writes it. */
function turnLog(t: TurnRecord, reward: number): Record<string, unknown> {
  return {
    agent: t.agent,
    timestep: t.timestep,
    observation: t.observation.text,
    prompt: t.prompt,
    raw: t.raw,
    action: t.action,
    reward,
    source: t.source,
    error: t.error,
    failure: t.failure,
    latencyMs: t.latencyMs,
    info: t.info,
  };
}

/**
 * An answered item as reports and logs record it: the item, the answer and the official verdict,
 * the world model's own label and why it disagrees. Absent optional fields are left undefined
 * rather than spread in: JSON drops them the same way, and a run of thousands of questions should
 * not build a temporary object per field.
 */
export function itemResult(
  item: BenchItem,
  gt: GroundTruth,
  answer: string,
  verdict: Verdict,
  turn: Pick<TurnRecord, "error" | "failure"> | undefined,
  latencyMs: number,
  writtenContext?: TraceFidelity,
): ItemResult {
  return {
    id: item.id,
    index: item.index,
    type: item.type,
    splits: item.splits,
    file: item.source.file,
    line: item.source.line,
    field: item.source.field,
    question: item.question,
    official: item.answer,
    answer,
    correct: verdict.correct,
    score: verdict.score,
    detail: verdict.detail,
    worldModel: gt.label ?? null,
    agrees: gt.agrees,
    cause: gt.cause,
    note: gt.note,
    error: turn?.error,
    failure: turn?.failure,
    latencyMs,
    writtenContext,
  };
}

export class RunAborted extends Error {
  constructor(
    readonly finished: number,
    readonly total: number,
  ) {
    super(`interrupted after ${finished} of ${total} items`);
    this.name = "RunAborted";
  }
}

/** The benchmark's judge (an LLM judge's endpoint) failed for good: the questions judged so far are logged. */
export class JudgeFailed extends Error {
  constructor(
    readonly finished: number,
    readonly total: number,
    override readonly cause: unknown,
  ) {
    super(`the judge failed after ${finished} of ${total} items: ${errorMessage(cause)}`);
    this.name = "JudgeFailed";
  }
}

export { errorMessage };

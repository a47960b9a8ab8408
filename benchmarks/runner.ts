/**
 * Runs a benchmark: every item's story through the world model (ground truth), its question
 * through the game loop with the agent under test in the respondent's seat, the official scorer
 * on the answer, and one append-only log line per item.
 */
import type { Agent } from "../worlds/core/agent.js";
import { runEpisode, errorMessage } from "../worlds/core/loop.js";
import { QuestionWorld, type Answer, type QuestionState } from "../worlds/question/world.js";
import type { EpisodeLog } from "../store/episode-log.js";
import type { Episode, TurnFailure, TurnRecord } from "../worlds/core/episode.js";
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../worlds/question/benchmark.js";

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
    return item && benchmark.judge(item, answer).correct ? 1 : 0;
  });

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
    settle(i, item, gt, episode, started);
  };

  /** Scores one answered item, logs it and reports it (synchronous: the async part is above). */
  const settle = (i: number, item: I, gt: GroundTruth, episode: Episode<QuestionState>, started: number): void => {
    const answer = episode.finalState.answer ?? "";
    const verdict: Verdict = benchmark.judge(item, answer);
    const turn = episode.turns[0];
    const result = itemResult(item, gt, answer, verdict, turn, Math.round((performance.now() - started) * 1000) / 1000);
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
      turns: episode.turns.map(turnLog),
    });
    loggedContexts.add(gt.contextId);
    results[i] = result;
    finished++;
    opts.onResult?.(result, finished, items.length);
  };

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length && !opts.signal?.aborted) {
      const i = todo[next++]!;
      await runOne(i);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency ?? 1, todo.length || 1));
  await Promise.all(Array.from({ length: n }, worker));
  if (opts.signal?.aborted) throw new RunAborted(finished, items.length);
  return results as ItemResult[];
}

/** A turn as the log writes it. */
function turnLog(t: TurnRecord): Record<string, unknown> {
  return {
    agent: t.agent,
    timestep: t.timestep,
    observation: t.observation.text,
    prompt: t.prompt,
    raw: t.raw,
    action: t.action,
    reward: t.reward ?? 0,
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

export { errorMessage };

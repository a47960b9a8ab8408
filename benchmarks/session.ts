/**
 * A benchmark run from its registration to its report, shared by `socialworld bench` and the
 * benchmark room: register the run in the store (or take up an interrupted one, whose logged
 * questions are not asked again), open its episode log, ask the questions into it, and close it
 * with its status and its report (report.json beside the log). The command and the room only say
 * what to run, and show it.
 */
import { isAbsolute, join, resolve } from "node:path";
import { EpisodeLog, readEpisodeLog } from "../store/episode-log.js";
import { thisProcess } from "../store/owner.js";
import type { RunRecord, RunStore } from "../store/run-store.js";
import { writeFileAtomic } from "../store/write-atomic.js";
import { writesHeld } from "../store/write-fence.js";
import type { Agent } from "../worlds/core/agent.js";
import type { Benchmark, BenchItem, Mode } from "../worlds/question/benchmark.js";
import { buildReport, type BenchReport } from "./report.js";
import { runBenchmark, type ItemResult, type RunOptions } from "./runner.js";

export interface SessionOptions {
  readonly store: RunStore;
  readonly benchmark: Benchmark;
  readonly items: readonly BenchItem[];
  /** The agent's name in the run and its report ("simulation", "human:alice"). */
  readonly agentId: string;
  readonly mode: Mode;
  /** The data file as the user named it (the report's `data`). */
  readonly data: string;
  readonly limit?: number;
  /** The run's title (default: "<benchmark> · <agent> · <mode>"). */
  readonly title?: string;
  /** More of the run's parameters (a room's id, the benchmark's options). */
  readonly params?: Readonly<Record<string, unknown>>;
  /** An interrupted run to continue: it must have been run with the same benchmark, data, agent, mode and options. */
  readonly resume?: string;
}

/** A run that cannot be taken up (unknown, still running, other settings). */
export class ResumeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ResumeRefused";
  }
}

/**
 * The interrupted run `id` of `store`, to be taken up with `params`: refused (ResumeRefused) when
 * the store has no such run, when a process of this host is still running it, or when it was run
 * with other `same` parameters.
 */
export function takeUpRun(store: RunStore, id: string, params: Readonly<Record<string, unknown>>, same: readonly string[]): RunRecord {
  const run = store.get(id);
  if (!run) throw new ResumeRefused(`no run "${id}" in ${store.root}`);
  // A run another process of this host is still running would get two writers. (The store reads
  // a run whose process died as interrupted; of a process elsewhere, nobody here can tell.)
  if (run.status === "running" && run.owner?.host === thisProcess().host) {
    throw new ResumeRefused(`run ${run.id} is still running (process ${run.owner.pid}); wait for it to end or stop it first`);
  }
  for (const k of same) {
    // Runs of earlier versions recorded the data file as given, relative to where they started.
    const was = JSON.stringify(k === "data" && typeof run.params.data === "string" && typeof params.data === "string" && isAbsolute(params.data) ? resolve(run.params.data) : (run.params[k] ?? {}));
    const now = JSON.stringify(params[k] ?? {});
    if (was !== now) throw new ResumeRefused(`run ${run.id} has ${k}=${was}, not ${now}`);
  }
  return run;
}

/** What a resumed run must share with the one it continues. */
const SAME_ON_RESUME = ["benchmark", "data", "agent", "mode", "options"] as const;

export class BenchmarkSession {
  readonly startedAt = new Date();
  /** Results an interrupted run already logged (resume), by item id. */
  readonly done = new Map<string, ItemResult>();
  /** Stories whose socialized context the log already holds. */
  private readonly loggedContexts = new Set<string>();
  private closed = false;
  readonly log: EpisodeLog;

  private constructor(
    private readonly o: SessionOptions,
    readonly run: RunRecord,
  ) {
    if (o.resume) {
      // Read before the log is opened again, which sets a torn last line aside: that question
      // (the kill came mid-write) is asked again.
      const logged = readEpisodeLog<{ kind?: string; result?: ItemResult; context_id?: string; socialized_context?: unknown }>(o.store.episodesPath(run));
      for (const rec of logged.records) {
        if (rec.kind !== "benchmark_item" || !rec.result) continue;
        this.done.set(rec.result.id, rec.result);
        if (rec.context_id && rec.socialized_context) this.loggedContexts.add(rec.context_id);
      }
    }
    this.log = new EpisodeLog(o.store.episodesPath(run));
  }

  /** Registers the run (or takes up `resume`, refusing with ResumeRefused) and opens its log. */
  static async start(o: SessionOptions): Promise<BenchmarkSession> {
    const params: Record<string, unknown> = { benchmark: o.benchmark.name, data: o.data, agent: o.agentId, mode: o.mode, limit: o.limit ?? null, ...o.params };
    if (!o.resume) {
      const run = await o.store.create("bench", o.title ?? `${o.benchmark.title} · ${o.agentId} · ${o.mode}`, params);
      return new BenchmarkSession(o, run);
    }
    const run = takeUpRun(o.store, o.resume, params, SAME_ON_RESUME);
    const session = new BenchmarkSession(o, run);
    await o.store.update(run.id, { status: "running" });
    return session;
  }

  /** Asks `items` (default: all of them; a room asks one at a time) into the run's log; logged ones are not asked again. */
  ask(opts: Omit<RunOptions<BenchItem>, "benchmark" | "items" | "mode" | "log" | "runId" | "loggedContexts" | "done"> & { readonly items?: readonly BenchItem[]; readonly agent: Agent }): Promise<ItemResult[]> {
    return runBenchmark({
      ...opts,
      items: opts.items ?? this.o.items,
      benchmark: this.o.benchmark,
      mode: this.o.mode,
      log: this.log,
      runId: this.run.id,
      loggedContexts: this.loggedContexts,
      done: this.done,
    });
  }

  /**
   * Closes the log and records how the run ended: with `results`, its report (written to
   * report.json and returned) and their summary; without, the status alone (an interrupted command
   * writes its report when it is resumed and done).
   */
  async close(status: "done" | "interrupted" | "failed", outcome: { readonly results?: readonly ItemResult[]; readonly error?: string } = {}): Promise<BenchReport | undefined> {
    if (this.closed) throw new Error(`run ${this.run.id} is already closed`);
    this.closed = true;
    this.log.close();
    const finishedAt = new Date();
    const report =
      outcome.results &&
      buildReport({
        benchmark: this.o.benchmark,
        items: this.o.items,
        results: outcome.results,
        agent: this.o.agentId,
        mode: this.o.mode,
        data: this.o.data,
        runId: this.run.id,
        startedAt: this.startedAt,
        finishedAt,
      });
    if (report) {
      // Replaced in one step next: in a server of a group, once its process is known to hold its place (store/write-fence.ts).
      await writesHeld();
      writeFileAtomic(join(this.o.store.dirOf(this.run), "report.json"), reportJson(report));
    }
    await this.o.store.update(this.run.id, {
      status,
      finishedAt: report?.finishedAt ?? finishedAt.toISOString(),
      ...(report ? { summary: summaryOf(report) } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
    });
    return report;
  }
}

/** A report as report.json holds it (and `bench --json` writes it). */
export function reportJson(report: BenchReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}

/** What the store's run list shows of a report (`graded`: what a graded benchmark's accuracy is the mean of). */
export function summaryOf(r: BenchReport): { total: number; correct: number; accuracy: number; disagreements: number; graded?: string } {
  return { total: r.total, correct: r.correct, accuracy: r.accuracy, disagreements: r.disagreements.total, ...(r.graded ? { graded: r.graded.score } : {}) };
}

/**
 * The `benchmark` room: runs a benchmark file (or a generated set) question by question with the
 * agent under test in the respondent's seat, through the same runner, log and report as
 * `socialworld bench`. With `agent: "human"` a person takes the seat and answers: the run is a
 * human baseline, in the same report format. Progress and scores stream to the room's state and
 * to the socket.io `/progress` namespace.
 */
import { createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Agent } from "../../agents/agent.js";
import { createAgent } from "../../agents/registry.js";
import type { Benchmark, BenchItem, Mode } from "../../benchmarks/benchmark.js";
import { createBenchmark } from "../../benchmarks/registry.js";
import { buildReport } from "../../benchmarks/report.js";
import { RunAborted, runBenchmark, type ItemResult } from "../../benchmarks/runner.js";
import { GENERATORS } from "../../cli/commands/generate.js";
import { EpisodeLog } from "../../store/episode-log.js";
import type { RunRecord } from "../../store/run-store.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { QuestionWorld, questionTaskOf, type QuestionTask } from "../../worlds/question/world.js";
import { resolveDataPath } from "../data-path.js";
import { BaseRoom } from "./base-room.js";
import { generatedSet } from "./generated-set.js";
import { loggedRun, type LoggedRun } from "./benchmark-resume.js";
import { pause } from "./pause.js";
import { BenchmarkOptionsSchema, OptionsError, parseOptions, type BenchmarkOptions } from "./options.js";
import { SeatAgent } from "./seat-agent.js";
import { ItemOutcome, perspectiveStep, Progress, pushBounded, tickNow, TypeScore, WORLD_PERSPECTIVE, type PerspectiveStep } from "./state.js";

export const RESPONDENT = "respondent";
const RECENT = 20;

export class BenchmarkRoom extends BaseRoom {
  protected readonly roomType = "benchmark";
  private opts!: BenchmarkOptions;
  private benchmark!: Benchmark;
  private items: BenchItem[] = [];
  private data = "";
  private agentId = "";
  private controller: Agent<unknown> | undefined;
  private run: RunRecord | undefined;
  private log: EpisodeLog | undefined;
  private playing: Promise<void> | undefined;
  private readonly questionWorld = new QuestionWorld(() => 0);
  /** Questions a restored room's run answered before its server was killed. */
  private prior: LoggedRun = { done: new Map(), contexts: new Set() };
  /** Keys the opaque item ids clients see (one per room). */
  private readonly idKey = randomBytes(16);

  protected async create(raw: unknown): Promise<void> {
    const opts = parseOptions(BenchmarkOptionsSchema, raw, "benchmark room");
    this.opts = opts;
    const benchmark = createBenchmark(opts.benchmark);
    this.benchmark = benchmark;
    const human = opts.agent === "human";
    this.controller = human ? undefined : (createAgent(opts.agent) as Agent<unknown>);
    this.agentId = human ? `human${opts.participant ? `:${opts.participant}` : ""}` : this.controller!.id;

    // Bad input stops here, before a run exists: a path outside the data folders, a bad file.
    const file = opts.data !== undefined ? resolveDataPath(opts.data, this.ctx.dataRoots) : await this.generated(opts);
    // As clients may see it: from the data folder or the store, never the server's absolute path.
    this.data = this.paths.path(file);
    let items = benchmark.loadInSlices ? await benchmark.loadInSlices(file) : benchmark.load(file);
    for (const warning of benchmark.warnings ?? []) console.warn(`[room ${this.roomId}] warning: ${warning}`);
    if (opts.limit !== undefined) items = items.slice(0, opts.limit);
    if (items.length === 0) throw new OptionsError(`${file}: no questions`);
    this.items = items;

    this.setUp({
      private: opts.private,
      reconnectSeconds: opts.reconnectSeconds,
      title: opts.title ?? `${benchmark.title} · ${this.agentId} · ${opts.mode}`,
      world: "question",
      tickMs: opts.tickMs,
      turnDeadlineMs: human ? opts.turnDeadlineMs : (opts.timeoutMs ?? 0),
    });
    this.setAgents(this.questionWorld, QuestionWorld.initial(benchmark.task(items[0]!, opts.mode as Mode), RESPONDENT), [
      { agent: RESPONDENT, controller: human ? "none" : opts.agent, human },
    ]);
    this.issueSeatTokens(human ? [0] : []);
    const progress = new Progress();
    progress.benchmark = benchmark.name;
    progress.agent = this.agentId;
    progress.mode = opts.mode;
    progress.total = items.length;
    progress.done = 0;
    progress.correct = 0;
    progress.finished = false;
    this.state.progress = progress;
    this.state.episode = 1;

    this.run = (await this.reopenRun()) ?? await this.ctx.store.create("bench", this.state.title, {
      benchmark: benchmark.name,
      data: this.data,
      generate: opts.generate ?? null,
      agent: this.agentId,
      mode: opts.mode,
      limit: opts.limit ?? null,
      room: this.roomId,
      visibility: this.state.visibility,
    });
    this.state.runId = this.run.id;
    // A restored room's run goes on where its log ends (read before the log is opened again,
    // which sets a torn last line aside).
    if (this.restoring) this.prior = loggedRun(this.ctx.store.episodesPath(this.run));
    this.log = new EpisodeLog(this.ctx.store.episodesPath(this.run));
    items.forEach((item, i) => {
      const r = this.prior.done.get(item.id);
      if (r) this.tally(i + 1, r, this.sourceOf(r));
    });
    this.playing = this.play();
    this.register();
  }

  protected resolvedOptions(): Record<string, unknown> {
    return { ...this.opts };
  }

  /** A generated set, written once under the store (the same n and seed give the same file), off the event loop. */
  private async generated(opts: BenchmarkOptions): Promise<string> {
    const gen = GENERATORS[opts.benchmark];
    if (!gen) throw new OptionsError(`generate: the ${opts.benchmark} benchmark has no generator (generators: ${Object.keys(GENERATORS).join(", ")})`);
    const { n, seed } = opts.generate!;
    if (gen.least && n < gen.least.n) throw new OptionsError(`generate.n: ${gen.least.why}`);
    return generatedSet(this.ctx.store.root, opts.benchmark, n, seed);
  }

  /**
   * A question's id as clients see it while the run is live: opaque. The real one (a generated
   * file's name holds its size and seed) would let a person regenerate the set with its labels.
   */
  private opaqueId(itemId: string): string {
    return `q-${createHmac("sha256", this.idKey).update(itemId).digest("base64url").slice(0, 12)}`;
  }

  protected override shownData(data: unknown): unknown {
    const task = questionTaskOf(data);
    return task ? { ...task, itemId: this.opaqueId(task.itemId) } : data;
  }

  private async play(): Promise<void> {
    const signal = this.abort.signal;
    const results: ItemResult[] = [];
    const loggedContexts = this.prior.contexts;
    const startedAt = new Date();
    const human = this.controller === undefined;
    const host = {
      personIn: (agent: string) => this.personIn(agent),
      awaitPerson: (turn: Parameters<SeatAgent<unknown>["act"]>[0], person: string) => this.awaitPerson(turn, person),
      noop: () => this.questionWorld.noop(),
    };
    const seat = new SeatAgent<unknown>(RESPONDENT, this.controller, host, this.agentId);
    let failed: Error | undefined;
    try {
      for (let i = 0; i < this.items.length && !signal.aborted; i++) {
        const logged = this.prior.done.get(this.items[i]!.id);
        if (logged) {
          results.push(logged);
          continue;
        }
        if (human) await this.waitForPerson(signal);
        if (signal.aborted) break;
        this.setStatus("running");
        if (this.opts.tickMs > 0) await pause(this.opts.tickMs, signal);
        if (signal.aborted) break;
        const item = this.items[i]!;
        const task = this.benchmark.task(item, this.opts.mode as Mode);
        this.current = QuestionWorld.initial(task, RESPONDENT);
        const steps = this.showQuestion(i + 1, item, task);
        const timeout = human ? this.opts.turnDeadlineMs : this.opts.timeoutMs;
        const [result] = await runBenchmark({
          benchmark: this.benchmark,
          items: [item],
          agent: seat as Agent,
          mode: this.opts.mode as Mode,
          ...(timeout !== undefined ? { turnTimeoutMs: timeout } : {}),
          log: this.log!,
          runId: this.run!.id,
          loggedContexts,
          signal,
        });
        results.push(result!);
        this.showResult(i + 1, steps, result!);
      }
    } catch (err) {
      if (!(err instanceof RunAborted)) {
        failed = err as Error;
        console.error(`[room ${this.roomId}] ${failed.stack ?? String(failed)}`);
      }
    }
    this.finishRun(results, startedAt, failed);
  }

  /** A person's turn is the question's number (every question is a one-timestep episode). */
  protected override turnNumber(): number {
    return this.state.timeline.length ? this.state.timeline[this.state.timeline.length - 1]!.timestep : 1;
  }

  private async waitForPerson(signal: AbortSignal): Promise<void> {
    if (this.seatConnected(RESPONDENT)) return;
    this.setStatus("waiting", "waiting for a person to take the respondent's seat");
    while (!signal.aborted && !this.seatConnected(RESPONDENT)) await pause(200, signal);
  }

  private showQuestion(n: number, item: BenchItem, task: QuestionTask): { world: PerspectiveStep; mine: PerspectiveStep } {
    pushBounded(this.state.timeline, tickNow(n), RECENT * 5);
    const world = perspectiveStep({ timestep: n, text: item.question, sameAsState: true, data: JSON.stringify({ id: this.opaqueId(item.id), type: item.type, question: item.question, story: task.story }) });
    const mine = perspectiveStep({ timestep: n, text: task.prompt, sameAsState: false, data: JSON.stringify(this.shownData(task)) });
    pushBounded(this.state.perspectives.get(WORLD_PERSPECTIVE)?.steps, world, RECENT * 5);
    pushBounded(this.state.perspectives.get(RESPONDENT)?.steps, mine, RECENT * 5);
    this.broadcastPatch();
    return { world, mine };
  }

  /** Who answered: the agent or the person, or nobody in time ("timeout") or well ("error": the fallback answered). */
  private sourceOf(r: ItemResult): string {
    return r.error ? (r.failure === "timeout" ? "timeout" : "error") : this.controller ? "agent" : "human";
  }

  private showResult(n: number, steps: { world: PerspectiveStep; mine: PerspectiveStep }, r: ItemResult): void {
    const source = this.sourceOf(r);
    steps.mine.action = r.answer === "" ? "none" : `answers: ${r.answer}`;
    steps.mine.source = r.error ? "fallback" : source;
    steps.world.data = JSON.stringify({
      ...(JSON.parse(steps.world.data) as object),
      answer: r.answer,
      official: r.official,
      worldModel: r.worldModel,
      correct: r.correct,
      ...(r.error ? { error: r.error } : {}),
    });
    this.tally(n, r, source);
    this.broadcastPatch();
    this.ctx.hub.publish("progress", {
      ...this.progressEvent(),
      last: { index: n, type: r.type, correct: r.correct, source },
    });
  }

  /** Counts question `n`'s result in the score table. */
  private tally(n: number, r: ItemResult, source: string): void {
    const p = this.state.progress!;
    p.done++;
    if (r.correct) p.correct++;
    let ts = p.byType.get(r.type);
    if (!ts) {
      ts = new TypeScore();
      ts.type = r.type;
      ts.total = 0;
      ts.correct = 0;
      p.byType.set(r.type, ts);
    }
    ts.total++;
    if (r.correct) ts.correct++;
    const outcome = new ItemOutcome();
    outcome.index = n;
    outcome.type = r.type;
    outcome.correct = r.correct;
    outcome.source = source;
    pushBounded(p.recent, outcome, RECENT);
  }

  private progressEvent() {
    const p = this.state.progress!;
    const byType: Record<string, { total: number; correct: number; accuracy: number }> = {};
    for (const [t, s] of p.byType) byType[t] = { total: s.total, correct: s.correct, accuracy: s.total ? s.correct / s.total : 0 };
    return {
      runId: this.state.runId,
      kind: "benchmark",
      roomId: this.roomId,
      title: this.state.title,
      benchmark: p.benchmark,
      agent: p.agent,
      mode: p.mode,
      done: p.done,
      total: p.total,
      correct: p.correct,
      accuracy: p.done ? p.correct / p.done : 0,
      byType,
    };
  }

  private finalized: Promise<void> | undefined;

  private finishRun(results: ItemResult[], startedAt: Date, failed: Error | undefined): void {
    const aborted = this.abort.signal.aborted;
    const report = buildReport({
      benchmark: this.benchmark,
      items: this.items,
      results,
      agent: this.agentId,
      mode: this.opts.mode as Mode,
      data: this.data,
      runId: this.run!.id,
      startedAt,
      finishedAt: new Date(),
    });
    this.log?.close();
    const path = join(this.ctx.store.dirOf(this.run!), "report.json");
    writeFileAtomic(path, JSON.stringify(report, null, 2) + "\n");
    const status = failed ? "failed" : aborted || results.length < this.items.length ? "interrupted" : "done";
    this.state.progress!.finished = true;
    if (!aborted) this.setStatus(failed ? "failed" : "finished", failed ? failed.message : `${report.correct}/${report.total} correct`);
    this.broadcastPatch();
    const summary = { total: report.total, correct: report.correct, accuracy: report.accuracy, disagreements: report.disagreements.total };
    this.finalized = this.ctx.store
      .update(this.run!.id, { status, finishedAt: report.finishedAt, summary, ...(failed ? { error: failed.message } : {}) })
      .then(() => undefined);
    this.ctx.hub.publish("finished", { ...this.progressEvent(), status, report: summary });
    if (!aborted) this.clock.setTimeout(() => void this.disconnect(), this.opts.lingerSeconds * 1000);
  }

  protected async finish(): Promise<void> {
    await this.playing;
    await this.finalized;
  }
}

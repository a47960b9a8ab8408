/**
 * The `benchmark` room: runs a benchmark file (or a generated set) question by question with the
 * agent under test in the respondent's seat, in a run session as `socialworld bench` does
 * (benchmarks/session.ts: the same run, log and report). With `agent: "human"` a person takes the
 * seat and answers: the run is a human baseline, in the same report format. Progress and scores
 * stream to the room's state and to the socket.io `/progress` namespace. A room the server brings
 * back after a restart takes its run up where its log ends, as `bench --resume` does.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Agent } from "../../worlds/core/agent.js";
import { loadAgent } from "../../agents/registry.js";
import type { Benchmark, BenchItem, Mode } from "../../worlds/question/benchmark.js";
import { RunAborted, type ItemResult } from "../../benchmarks/runner.js";
import { BenchmarkSession, summaryOf } from "../../benchmarks/session.js";
import { personAnswerProblem } from "../../worlds/question/person-answer.js";
import { QuestionWorld, questionTaskOf, type Answer, type QuestionState, type QuestionTask } from "../../worlds/question/world.js";
import { loadBenchmark, loadGenerator } from "../../worlds/registry.js";
import { resolveDataPath } from "../data-path.js";
import { BaseRoom } from "./base-room.js";
import { generatedSet } from "./generated-set.js";
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
  private session!: BenchmarkSession;
  private playing: Promise<void> | undefined;
  private readonly questionWorld = new QuestionWorld(() => 0);
  /** Keys the opaque item ids clients see (one per room). */
  private readonly idKey = randomBytes(16);

  protected async create(raw: unknown): Promise<void> {
    const opts = parseOptions(BenchmarkOptionsSchema, raw, "benchmark room");
    this.opts = opts;
    const benchmark = await loadBenchmark(opts.benchmark).catch((err: Error) => {
      throw new OptionsError(`bad benchmark room options: benchmark: ${err.message}`);
    });
    this.benchmark = benchmark;
    const human = opts.agent === "human";
    this.controller = human ? undefined : ((await loadAgent(opts.agent)) as Agent<unknown>);
    this.agentId = human ? `human${opts.participant ? `:${opts.participant}` : ""}` : this.controller!.id;
    // An agent that cannot answer this world's questions in this mode at all (a policy told to write
    // a context the world does not define) would fail every one: refused before a run exists, as `bench` refuses it.
    const refusal = await this.controller?.refusal?.(benchmark.name, opts.mode as Mode);
    if (refusal) throw new OptionsError(`bad benchmark room options: agent: ${refusal}`);

    // Bad input stops here, before a run exists: a path outside the data folders, a bad file.
    const file = opts.data !== undefined ? resolveDataPath(opts.data, this.ctx.dataRoots) : await this.generated(opts);
    // As clients may see it: from the data folder or the store, never the server's absolute path.
    this.data = this.paths.path(file);
    let items = benchmark.loadInSlices ? await benchmark.loadInSlices(file) : await benchmark.load(file);
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

    // A restored room's run goes on where its log ends: the session takes it up as `bench --resume`
    // does (the questions logged before the server was killed are not asked again).
    const resume = this.restoring?.runId && this.ctx.store.get(this.restoring.runId) ? this.restoring.runId : undefined;
    const resumed = resume ? this.ctx.store.get(resume) : undefined;
    if (resumed) await this.takeOverRunLog(this.ctx.store.episodesPath(resumed));
    this.session = await BenchmarkSession.start({
      store: this.ctx.store,
      benchmark,
      items,
      agentId: this.agentId,
      mode: opts.mode as Mode,
      data: this.data,
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      title: this.state.title,
      params: { generate: opts.generate ?? null, room: this.roomId, visibility: this.state.visibility },
      ...(resume ? { resume } : {}),
    });
    this.state.runId = this.session.run.id;
    items.forEach((item, i) => {
      const r = this.session.done.get(item.id);
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
    const gen = await loadGenerator(opts.benchmark).catch((err: Error) => {
      throw new OptionsError(`generate: ${err.message}`);
    });
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

  /** A person's answer: not empty, and one of the question's answers when it takes only some. */
  protected override personCheck(state: unknown, _agent: string, action: unknown): string | undefined {
    return personAnswerProblem((state as QuestionState).task, (action as Answer).answer);
  }

  private async play(): Promise<void> {
    const signal = this.abort.signal;
    const results: ItemResult[] = [];
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
        const logged = this.session.done.get(this.items[i]!.id);
        if (logged) {
          results.push(logged);
          continue;
        }
        if (human) await this.waitForPerson(signal);
        if (signal.aborted) break;
        this.setStatus("running");
        // A turn of the event loop even at tickMs 0 (pause.ts): a synchronous agent would hold it.
        await pause(this.opts.tickMs, signal);
        if (signal.aborted) break;
        const item = this.items[i]!;
        const task = this.benchmark.task(item, this.opts.mode as Mode);
        this.current = QuestionWorld.initial(task, RESPONDENT);
        const steps = this.showQuestion(i + 1, item, task);
        const timeout = human ? this.opts.turnDeadlineMs : this.opts.timeoutMs;
        const [result] = await this.session.ask({
          items: [item],
          agent: seat as Agent,
          ...(timeout !== undefined ? { turnTimeoutMs: timeout } : {}),
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
    this.finishRun(results, failed);
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

  private finishRun(results: ItemResult[], failed: Error | undefined): void {
    const aborted = this.abort.signal.aborted;
    const status = failed ? "failed" : aborted || results.length < this.items.length ? "interrupted" : "done";
    const closed = this.session.close(status, { results, ...(failed ? { error: failed.message } : {}) });
    this.state.progress!.finished = true;
    this.finalized = closed.then((report) => {
      if (!aborted) this.setStatus(failed ? "failed" : "finished", failed ? failed.message : `${report!.correct}/${report!.total} correct`);
      this.broadcastPatch();
      this.ctx.hub.publish("finished", { ...this.progressEvent(), status, report: summaryOf(report!) });
      if (!aborted) this.clock.setTimeout(() => void this.disconnect(), this.opts.lingerSeconds * 1000);
    });
  }

  protected async finish(): Promise<void> {
    await this.playing;
    await this.finalized;
  }
}

/**
 * The `benchmark` room: runs a benchmark file (or a generated set) question by question with the
 * agent under test in the respondent's seat, in a run session as `socialworld bench` does
 * (benchmarks/session.ts: the same run, log and report). With `agent: "human"` a person takes the
 * seat and answers: the run is a human baseline, in the same report format. Progress and scores stream to the room's state and
 * to the socket.io `/progress` namespace.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Agent } from "../../worlds/core/agent.js";
import { loadAgent } from "../../agents/registry.js";
import type { Benchmark, BenchItem, Mode } from "../../worlds/question/benchmark.js";
import { RunAborted, type ItemResult } from "../../benchmarks/runner.js";
import { BenchmarkSession, summaryOf } from "../../benchmarks/session.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { QuestionWorld, type QuestionTask } from "../../worlds/question/world.js";
import { loadBenchmark, loadGenerator } from "../../worlds/registry.js";
import { resolveDataPath } from "../data-path.js";
import { BaseRoom } from "./base-room.js";
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

    // Bad input stops here, before a run exists: a path outside the data folders, a bad file.
    const file = opts.data !== undefined ? resolveDataPath(opts.data, this.ctx.dataRoots) : await this.generated(opts);
    this.data = opts.data ?? file;
    let items = benchmark.load(file);
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

    this.session = await BenchmarkSession.start({
      store: this.ctx.store,
      benchmark,
      items,
      agentId: this.agentId,
      mode: opts.mode as Mode,
      data: this.data,
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      title: this.state.title,
      params: { room: this.roomId, visibility: this.state.visibility },
    });
    this.state.runId = this.session.run.id;
    this.playing = this.play();
    this.register();
  }

  /** A generated set, written once under the store (the same n and seed give the same file). */
  private async generated(opts: BenchmarkOptions): Promise<string> {
    const gen = await loadGenerator(opts.benchmark).catch((err: Error) => {
      throw new OptionsError(`generate: ${err.message}`);
    });
    const { n, seed } = opts.generate!;
    if (gen.least && n < gen.least.n) throw new OptionsError(`generate.n: ${gen.least.why}`);
    const dir = join(this.ctx.store.root, "generated");
    mkdirSync(dir, { recursive: true });
    const out = join(dir, `${opts.benchmark}-n${n}-seed${seed}.txt`);
    if (existsSync(out)) return out;
    const set = await gen.generate(n, seed, out);
    for (const file of set.files) writeFileAtomic(file.path, file.text);
    return set.data;
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
    const world = perspectiveStep({ timestep: n, text: item.question, sameAsState: true, data: JSON.stringify({ id: item.id, type: item.type, question: item.question, story: task.story }) });
    const mine = perspectiveStep({ timestep: n, text: task.prompt, sameAsState: false, data: JSON.stringify(task) });
    pushBounded(this.state.perspectives.get(WORLD_PERSPECTIVE)?.steps, world, RECENT * 5);
    pushBounded(this.state.perspectives.get(RESPONDENT)?.steps, mine, RECENT * 5);
    this.broadcastPatch();
    return { world, mine };
  }

  private showResult(n: number, steps: { world: PerspectiveStep; mine: PerspectiveStep }, r: ItemResult): void {
    // Unanswered: past the deadline ("timeout") or the agent failed ("error"); the loop's fallback answered.
    const source = r.error ? (r.failure === "timeout" ? "timeout" : "error") : this.controller ? "agent" : "human";
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
    this.broadcastPatch();
    this.ctx.hub.publish("progress", {
      ...this.progressEvent(),
      last: { index: n, type: r.type, correct: r.correct, source },
    });
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

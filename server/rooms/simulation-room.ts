/**
 * The `simulation` room: plays episodes of any registered world live through the game loop. Each
 * seat is played by its controller (a story's script or a registry agent) unless a person holds
 * it; a person's turn has a deadline, after which the controller acts. Every episode is logged to
 * the run's append-only log as its socialized context and turns, when it ends or is interrupted.
 */
import type { Agent } from "../../worlds/core/agent.js";
import { loadAgent } from "../../agents/registry.js";
import type { FactSource } from "../../worlds/core/leak-audit.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { EpisodeRoom, type EpisodeLoopOptions, type EpisodePlan } from "./episode-room.js";
import { LiveAudit } from "./live-audit.js";
import { describeIssues, OptionsError, parseOptions, QuizAnswerMessageSchema, SimulationOptionsSchema, type SimulationOptions } from "./options.js";
import type { PlayedEpisode, SeatQuizScore, SelfPlayPool } from "../self-play/pool.js";
import type { Scenario, ScenarioFactory } from "../../worlds/core/scenario.js";
import { loadBenchmark, loadScenario, loadWorld } from "../../worlds/registry.js";
import type { QuestionMaker } from "../../worlds/core/episode-questions.js";
import type { Episode } from "../../worlds/core/episode.js";
import type { Benchmark } from "../../worlds/question/benchmark.js";
import { SeatAgent } from "./seat-agent.js";
import { checkSeatNames, isHumanSeat } from "./seat-names.js";
import { personAnswerProblem } from "../../worlds/question/person-answer.js";
import { agentAnswers, personAnswers, prepareQuiz, quizMessage, type AnsweredQuestion, type SeatQuestions } from "./quiz.js";
import { S2C, type QuizAnswerResultMessage, type QuizResultMessage } from "../protocol.js";
import { QuizScore, pushBounded } from "./state.js";
import { quizOpenRecord } from "../security/open-quizzes.js";
import { writesHeld } from "../../store/write-fence.js";
import { sameSecret } from "../secret.js";
import { relative } from "node:path";
import type { Client } from "@colyseus/core";

/** A person's quiz in progress: their questions, the answers so far, and who waits for the last one. */
interface OpenQuiz {
  readonly episode: number;
  readonly deadline: number;
  /** The seat token of the person asked: only they are sent the quiz again when they come back. */
  readonly token: string;
  readonly seat: SeatQuestions;
  readonly given: Map<number, string>;
  readonly done: () => void;
}

/** Quiz scores kept in the room's state (the log keeps them all). */
const MAX_QUIZ_SCORES = 200;

export class SimulationRoom extends EpisodeRoom {
  protected readonly roomType = "simulation";
  protected readonly episodeNoun = "story";
  private opts!: SimulationOptions;
  private scenarios!: ScenarioFactory;
  /** The world's fact vocabulary, for a room with `audit: true` (none: nothing to audit with). */
  private facts: FactSource | undefined;
  private pool: SelfPlayPool | undefined;
  private selfPlayPool = "";
  private unlisten: (() => void) | undefined;
  /** The world's settings, parsed by its scenario factory's schema (undefined: its defaults). */
  private worldOptions: unknown;
  /** With the `quiz` option: the world's question maker and its benchmark (which asks and judges). */
  private quizzer: { maker: QuestionMaker; benchmark: Benchmark } | undefined;
  private readonly openQuizzes = new Map<string, OpenQuiz>();

  protected async create(raw: unknown): Promise<void> {
    const opts = parseOptions(SimulationOptionsSchema, raw, "simulation room");
    this.opts = opts;
    const selfPlaySpec = opts.selfPlay ? trainedSpec(opts) : undefined;
    const world = await loadWorld(opts.world);
    this.facts = world.facts;
    this.scenarios = await loadScenario(opts.world).catch((err: Error) => {
      throw new OptionsError(`bad simulation room options: world: ${err.message}`);
    });
    this.worldOptions = worldOptionsOf(opts, this.scenarios);
    if (opts.quiz) this.quizzer = await quizzerOf(world, opts.quiz.types);
    this.setUp({
      private: opts.private,
      reconnectSeconds: opts.reconnectSeconds,
      title: opts.title ?? `${world.title} room`,
      world: opts.world,
      tickMs: opts.tickMs,
      turnDeadlineMs: opts.turnDeadlineMs,
    });
    // A room restored after its server was killed takes its run up where its log ends.
    const { seed: firstSeed, over } = await this.takeUp(opts.seed);
    // The first scenario now, so that seats exist (and private seat tokens can be handed out) at creation.
    const first = await this.scenarios.create(firstSeed, this.worldOptions);
    checkSeatNames(opts, first.world.agents(first.initialState), "simulation room", "story");
    const controllers = await this.beginEpisode(first, firstSeed);
    await this.startRun({ world: opts.world, seed: opts.seed, loop: opts.loop });
    if (selfPlaySpec) this.joinSelfPlay(opts, selfPlaySpec);
    this.startPlaying(over ? undefined : { scenario: first, controllers }, firstSeed);
    this.register();
  }

  protected resolvedOptions(): Record<string, unknown> {
    return { ...this.opts };
  }

  /**
   * Self-play: the room's `policy:DIR` seats train their policy on its episodes (with the other
   * rooms of its pool) and play each new round from the next episode on (round 0 is the spec itself).
   */
  private joinSelfPlay(opts: SimulationOptions, spec: string): void {
    this.selfPlayPool = opts.selfPlay!.pool ?? this.roomId;
    try {
      this.pool = this.ctx.selfPlay.join(this.selfPlayPool, this.roomId, opts.world, spec, opts.selfPlay!, { private: opts.private });
    } catch (err) {
      this.log?.close();
      throw new OptionsError(`bad simulation room options: selfPlay: ${(err as Error).message}`);
    }
    this.unlisten = this.pool.listen((note) => {
      this.state.note = note;
    });
  }

  private seatsFor(scenario: Scenario): { agent: string; controller: string; human: boolean }[] {
    const names = scenario.world.agents(scenario.initialState);
    const hs = this.opts.humanSeats;
    return names.map((agent, i) => ({
      agent,
      controller: this.pool?.specFor(this.opts.agents[agent] ?? this.opts.defaultAgent) ?? this.opts.agents[agent] ?? this.opts.defaultAgent,
      human: isHumanSeat(hs, agent, i),
    }));
  }

  /** The seats of a new episode, and their controllers (a policy's checkpoint loads here, the first time). */
  private async beginEpisode(scenario: Scenario, seed: number): Promise<Map<string, Agent<unknown> | undefined>> {
    const seats = this.seatsFor(scenario);
    this.seatEpisode(scenario, seats, seed);
    const controllers = new Map<string, Agent<unknown> | undefined>();
    for (const s of seats) {
      controllers.set(
        s.agent,
        s.controller === "scripted" ? scenario.scripted[s.agent] : s.controller === "none" ? undefined : await loadAgent(s.controller),
      );
    }
    return controllers;
  }

  protected loopOptions(): EpisodeLoopOptions {
    return this.opts;
  }

  protected async nextEpisode(seed: number): Promise<EpisodePlan> {
    const scenario = await this.scenarios.create(seed, this.worldOptions);
    return { scenario, controllers: await this.beginEpisode(scenario, seed) };
  }

  protected seatAgent(agent: string, controller: Agent<unknown> | undefined, { scenario }: EpisodePlan): Agent<unknown> {
    return new SeatAgent(agent, controller, {
      personIn: (a) => this.personIn(a),
      awaitPerson: (turn, person) => this.awaitPerson(turn, person),
      noop: (a) => scenario.world.noop(this.current, a),
    });
  }

  protected async playEpisode(plan: EpisodePlan, seed: number): Promise<void> {
    const { scenario, controllers } = plan;
    const world = scenario.world;
    const names = [...controllers.keys()];
    const audit = this.opts.audit ? LiveAudit.of(this.facts, names, scenario.initialState) : undefined;
    // The state before each timestep (self-play rewards a reply in the state its agent acted in).
    const states: unknown[] = [scenario.initialState];
    const episode = await this.runPlan(plan, seed, {
      onTimestep: (rec, next) => {
        if (this.pool) states.push(next);
        this.recordTimestep(rec, this.sourcesAt(rec.timestep, names), audit?.step(rec) ?? "", world.view?.(next));
      },
    });
    // The policy seats' own turns (not a person's), taken before the quiz: a person may take a seat meanwhile.
    const trained = new Set(names.filter((n) => controllers.get(n)?.id.startsWith("policy:") && !this.state.seats.get(n)?.occupant));
    // The episode's record holds every mind (the quiz's answers): the quiz is logged open first, so
    // that clients are not shown the record until it closes, and the record is logged now, so that
    // a server killed mid-quiz loses nothing (server/security/open-quizzes.ts).
    const quizDeadline = this.quizzer && episode.end !== "aborted" ? Date.now() + this.opts.quiz!.deadlineMs : undefined;
    if (quizDeadline !== undefined) this.log?.append(quizOpenRecord({ run: this.run?.id ?? null, room: this.roomId, episode: this.state.episode, deadline: quizDeadline }));
    const context = toSocializedContext(episode);
    this.logEpisode({
      episode,
      world: world.name,
      title: scenario.title,
      seed,
      seats: Object.fromEntries(
        names.map((n) => [n, { controller: this.state.seats.get(n)?.controller ?? "", person: this.state.seats.get(n)?.occupant || null }]),
      ),
      socialized_context: context,
      ...(audit ? { audit: audit.final(context, episode) } : {}),
      observations: true,
    });
    if (quizDeadline !== undefined) {
      const number = this.state.episode;
      // Closed whatever happens: an open quiz keeps the episode from clients for as long as this server runs.
      const closed = await this.askQuiz(episode, scenario, seed, controllers, quizDeadline).catch((err: Error) => ({
        record: { kind: "room_quiz", run: this.run?.id ?? null, room: this.roomId, world: world.name, seed, episode: number, error: this.paths.text(err.message) } as Record<string, unknown>,
        file: undefined,
        scores: [],
      }));
      await writesHeld();
      this.log?.append(closed.record);
      if (this.pool && episode.end !== "aborted") this.pool.record(this.played(episode, scenario, seed, states, trained, closed));
    } else if (this.pool && episode.end !== "aborted") this.pool.record(this.played(episode, scenario, seed, states, trained));
  }

  /**
   * What self-play learns from an episode: the policy seats' turns in the states they acted in,
   * the file of the episode's quiz, and how the pool's policy answered it.
   */
  private played(
    episode: Episode,
    scenario: Scenario,
    seed: number,
    states: readonly unknown[],
    trained: ReadonlySet<string>,
    quiz?: { file: string | undefined; scores: readonly SeatQuizScore[] },
  ): PlayedEpisode {
    const joint = new Map<number, Record<string, unknown>>();
    for (const t of episode.turns) joint.set(t.timestep, { ...joint.get(t.timestep), [t.agent]: t.action });
    return {
      roomId: this.roomId,
      ...(this.worldOptions !== undefined ? { worldOptions: this.worldOptions } : {}),
      seed,
      title: scenario.title,
      context: toSocializedContext(episode, { mentalStates: false }),
      turns: episode.turns
        .filter((t) => trained.has(t.agent) && states[t.timestep - 1] !== undefined)
        .map((t) => ({
          agent: t.agent,
          timestep: t.timestep,
          observation: t.observation.text,
          state: states[t.timestep - 1],
          joint: joint.get(t.timestep) ?? {},
          exogenous: episode.steps[t.timestep - 1]?.exogenous ?? [],
        })),
      ...(quiz?.file ? { quizFile: quiz.file } : {}),
      ...(quiz ? { quizScores: quiz.scores } : {}),
    };
  }

  /**
   * Asks each seat its quiz questions about the episode just played (server/rooms/quiz.ts): a
   * person in the seat through messages to that seat alone, its controller otherwise (a scripted
   * seat's questions go to the symbolic agent, which reads the story as the world model does);
   * scores each seat in the room's state and returns the record the run's log keeps.
   */
  private async askQuiz(
    episode: Episode,
    scenario: Scenario,
    seed: number,
    controllers: Map<string, Agent<unknown> | undefined>,
    deadline: number,
  ): Promise<{ record: Record<string, unknown>; file: string | undefined; scores: SeatQuizScore[] }> {
    const { maker, benchmark } = this.quizzer!;
    const opts = this.opts.quiz!;
    const number = this.state.episode;
    const base = { kind: "room_quiz", run: this.run?.id ?? null, room: this.roomId, world: this.opts.world, seed, episode: number };
    this.setStatus("quiz", `quiz on episode ${number}`);
    let prepared;
    try {
      prepared = await prepareQuiz({
        world: this.opts.world,
        maker,
        benchmark,
        episode,
        initialState: scenario.initialState,
        number,
        seed,
        agents: [...controllers.keys()],
        opts,
        dir: this.ctx.store.dirOf(this.run!),
      });
    } catch (err) {
      // An episode no story of the benchmark can tell is logged as such; the room goes on.
      return { record: { ...base, error: this.paths.text((err as Error).message) }, file: undefined, scores: [] };
    }
    if (!prepared) return { record: { ...base, error: "the episode gives no question of the types asked" }, file: undefined, scores: [] };
    const signal = this.abort.signal;
    const seats = await Promise.all(
      prepared.seats.map(async (seat) => {
        const person = this.personIn(seat.agent);
        const controller = this.state.seats.get(seat.agent)?.controller ?? "";
        if (person !== undefined && this.seatConnected(seat.agent)) {
          return { seat, answeredBy: `human:${person}`, answers: await this.personQuiz(seat, number, deadline) };
        }
        const agent = controller === "scripted" ? await loadAgent("simulation") : controllers.get(seat.agent);
        if (!agent || controller === "none") return undefined;
        const answeredBy = controller === "scripted" ? "simulation" : controller;
        return { seat, answeredBy, answers: await agentAnswers(benchmark, seat, agent, opts.deadlineMs, signal).catch(() => undefined) };
      }),
    );
    const logged: Record<string, unknown> = {};
    const scores: SeatQuizScore[] = [];
    for (const s of seats) {
      if (!s?.answers) continue;
      const correct = s.answers.filter((a) => a.correct).length;
      if (!s.answeredBy.startsWith("human:")) scores.push({ controller: s.answeredBy, asked: s.answers.length, correct });
      const score = new QuizScore();
      score.episode = number;
      score.agent = s.seat.agent;
      score.answeredBy = s.answeredBy;
      score.asked = s.answers.length;
      score.correct = correct;
      pushBounded(this.state.quiz, score, MAX_QUIZ_SCORES);
      const result: QuizResultMessage = { episode: number, agent: s.seat.agent, asked: s.answers.length, correct, questions: s.answers };
      if (s.answeredBy.startsWith("human:")) this.sendToSeat(s.seat.agent, S2C.quizResult, result);
      logged[s.seat.agent] = { answeredBy: s.answeredBy, asked: s.answers.length, correct, questions: s.answers };
    }
    return { record: { ...base, file: relative(this.ctx.store.dirOf(this.run!), prepared.file), seats: logged }, file: prepared.file, scores };
  }

  /** Sends a person its questions and waits for its answers, or the deadline. */
  private personQuiz(seat: SeatQuestions, episode: number, deadline: number): Promise<AnsweredQuestion[]> {
    const { benchmark } = this.quizzer!;
    return new Promise((resolve) => {
      const given = new Map<number, string>();
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        timer.clear();
        this.openQuizzes.delete(seat.agent);
        resolve(personAnswers(benchmark, seat, given));
      };
      const timer = this.clock.setTimeout(close, Math.max(0, deadline - Date.now()));
      if (this.abort.signal.aborted) return close();
      this.abort.signal.addEventListener("abort", close, { once: true });
      this.openQuizzes.set(seat.agent, { episode, deadline, token: this.holderOf(seat.agent)?.token ?? "", seat, given, done: close });
      this.sendToSeat(seat.agent, S2C.quiz, quizMessage(benchmark, seat, episode, deadline));
    });
  }

  /** The person asked, back in the seat before the quiz closed (a dropped connection): its quiz again. */
  protected override seatBack(agent: string, token: string): void {
    const open = this.openQuizzes.get(agent);
    if (!open || !open.token || !sameSecret(open.token, token)) return;
    this.sendToSeat(agent, S2C.quiz, quizMessage(this.quizzer!.benchmark, open.seat, open.episode, open.deadline));
  }

  /** One answer of a seated person to one of its own open quiz questions; the first answer counts. */
  protected override onQuizAnswer(client: Client, message: unknown): void {
    const reply = (r: QuizAnswerResultMessage) => client.send(S2C.quizAnswerResult, r);
    const agent = this.seatAgentOf(client);
    if (agent === undefined) return reply({ ok: false, error: "only a seated client answers a quiz (join with the seat option)" });
    const parsed = QuizAnswerMessageSchema.safeParse(message);
    if (!parsed.success) return reply({ ok: false, error: `bad quiz_answer message: ${describeIssues(parsed.error)}` });
    const { episode, id, answer } = parsed.data;
    const open = this.openQuizzes.get(agent);
    if (!open || open.episode !== episode) return reply({ ok: false, id, error: `your seat has no open quiz for episode ${episode}` });
    if (id >= open.seat.items.length) return reply({ ok: false, id, error: `no question ${id} in your quiz (it has ${open.seat.items.length})` });
    if (open.given.has(id)) return reply({ ok: false, id, error: `question ${id} is already answered` });
    // As in a benchmark room's seat: a slip (empty, a container the story has not) is refused with
    // the reason while the quiz is open, not scored wrong without a word.
    const problem = personAnswerProblem(this.quizzer!.benchmark.task(open.seat.items[id]!, "vanilla"), answer);
    if (problem) return reply({ ok: false, id, error: problem });
    open.given.set(id, answer);
    reply({ ok: true, id });
    if (open.given.size === open.seat.items.length) open.done();
  }

  protected override async finish(): Promise<void> {
    await super.finish();
    if (this.pool) {
      this.unlisten?.();
      this.ctx.selfPlay.leave(this.selfPlayPool, this.roomId);
    }
  }
}

/** The world's question maker and benchmark, for a room with `quiz`; an OptionsError when the world asks none or a type is not its own. */
async function quizzerOf(world: { name: string; questions?: QuestionMaker; benchmark?: unknown }, types: readonly string[] | undefined): Promise<{ maker: QuestionMaker; benchmark: Benchmark }> {
  const maker = world.questions;
  if (!maker || !world.benchmark) throw new OptionsError(`bad simulation room options: quiz: the ${world.name} world asks no questions about its episodes`);
  const unknown = (types ?? []).filter((t) => !maker.types.includes(t));
  if (unknown.length) throw new OptionsError(`bad simulation room options: quiz.types: ${unknown.join(", ")} (the ${world.name} world asks ${maker.types.join(", ")})`);
  return { maker, benchmark: await loadBenchmark(world.name) };
}

/** The one `policy:DIR` spec a self-play room's seats play (what its schedule trains). */
function trainedSpec(opts: SimulationOptions): string {
  const specs = new Set([opts.defaultAgent, ...Object.values(opts.agents)].filter((c) => c.startsWith("policy:")));
  if (specs.size !== 1) {
    throw new OptionsError(
      `bad simulation room options: selfPlay: the seats must be played by one policy:DIR agent to train (found ${specs.size === 0 ? "none" : [...specs].join(", ")})`,
    );
  }
  return [...specs][0]!;
}

/** A room's worldOptions parsed by its world's schema; an OptionsError naming the field at fault, or a world that takes none. */
function worldOptionsOf(opts: SimulationOptions, factory: ScenarioFactory): unknown {
  if (opts.worldOptions === undefined) return undefined;
  if (!factory.options) throw new OptionsError(`bad simulation room options: worldOptions: the ${opts.world} world takes none`);
  const parsed = factory.options.safeParse(opts.worldOptions);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new OptionsError(`bad simulation room options: ${["worldOptions", ...issue.path].join(".")}: ${issue.message}`);
}

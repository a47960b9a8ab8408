/**
 * The `simulation` room: plays episodes of any registered world live through the game loop. Each
 * seat is played by its controller (a story's script or a registry agent) unless a person holds
 * it; a person's turn has a deadline, after which the controller acts. Every episode is logged to
 * the run's append-only log as its socialized context and turns, when it ends or is interrupted.
 */
import type { Agent } from "../../worlds/core/agent.js";
import { loadAgent } from "../../agents/registry.js";
import { auditContext, LeakAuditor, type FactSource } from "../../worlds/core/leak-audit.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { EpisodeRoom, type EpisodeLoopOptions, type EpisodePlan } from "./episode-room.js";
import { pause } from "./pause.js";
import { OptionsError, parseOptions, SimulationOptionsSchema, type SimulationOptions } from "./options.js";
import type { SelfPlayPool } from "../self-play/pool.js";
import type { Scenario, ScenarioFactory } from "../../worlds/core/scenario.js";
import { loadScenario, loadWorld } from "../../worlds/registry.js";
import { ControllerFallback, SeatAgent } from "./seat-agent.js";
import { checkSeatNames, isHumanSeat } from "./seat-names.js";

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

  protected async create(raw: unknown): Promise<void> {
    const opts = parseOptions(SimulationOptionsSchema, raw, "simulation room");
    this.opts = opts;
    const selfPlaySpec = opts.selfPlay ? trainedSpec(opts) : undefined;
    const world = await loadWorld(opts.world);
    this.facts = world.facts;
    this.scenarios = await loadScenario(opts.world).catch((err: Error) => {
      throw new OptionsError(`bad simulation room options: world: ${err.message}`);
    });
    this.setUp({
      private: opts.private,
      reconnectSeconds: opts.reconnectSeconds,
      title: opts.title ?? `${world.title} room`,
      world: opts.world,
      tickMs: opts.tickMs,
      turnDeadlineMs: opts.turnDeadlineMs,
    });
    // A room restored after its server was killed plays the episode it was in again, from its start.
    const restored = this.restoring?.episode;
    const firstSeed = restored?.seed ?? opts.seed;
    if (restored) this.episodes = restored.number - 1;
    // The first scenario now, so that seats exist (and private seat tokens can be handed out) at creation.
    const first = await this.scenarios.create(firstSeed);
    checkSeatNames(opts, first.world.agents(first.initialState), "simulation room", "story");
    const controllers = await this.beginEpisode(first, firstSeed);
    await this.startRun({ world: opts.world, seed: opts.seed, loop: opts.loop });
    if (selfPlaySpec) this.joinSelfPlay(opts, selfPlaySpec);
    this.startPlaying({ scenario: first, controllers }, firstSeed);
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
      this.pool = this.ctx.selfPlay.join(this.selfPlayPool, this.roomId, opts.world, spec, opts.selfPlay!);
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
    const scenario = await this.scenarios.create(seed);
    return { scenario, controllers: await this.beginEpisode(scenario, seed) };
  }

  protected async playEpisode({ scenario, controllers }: EpisodePlan, seed: number): Promise<void> {
    const world = scenario.world;
    const host = {
      personIn: (agent: string) => this.personIn(agent),
      awaitPerson: (turn: Parameters<SeatAgent<unknown>["act"]>[0], person: string) => this.awaitPerson(turn, person),
      noop: (agent: string) => world.noop(this.current, agent),
    };
    const agents: Record<string, Agent<unknown>> = {};
    for (const [name, controller] of controllers) agents[name] = new SeatAgent(name, controller, host);
    const names = [...controllers.keys()];
    const signal = this.abort.signal;
    // The live audit reads each timestep as it is recorded (names and truths from the initial state).
    const facts = this.opts.audit ? this.facts?.forEpisode({ agents_names: names, socialized_context: [] }, scenario.initialState) : undefined;
    const auditor = facts ? new LeakAuditor(names, facts.vocabulary, facts.initialTruths) : undefined;
    const episode = await runEpisode(world, {
      seed,
      initialState: scenario.initialState,
      agents,
      ...(scenario.director ? { director: scenario.director } : {}),
      turnTimeoutMs: this.opts.turnDeadlineMs,
      maxSteps: Math.min(this.opts.maxSteps, scenario.maxSteps ?? Infinity),
      fallback: new ControllerFallback(controllers, (agent) => world.noop(this.current, agent)),
      signal,
      onTimestep: async (rec, next) => {
        this.current = next;
        const leaks = auditor?.step(toSocializedContext({ agents: names, steps: [rec] }, { mentalStates: false }).socialized_context[0]!) ?? [];
        this.recordTimestep(rec, this.sourcesAt(rec.timestep, names), leaks.length ? JSON.stringify(leaks) : "");
        await pause(this.opts.tickMs, signal);
      },
    });
    this.turns?.closeAll();
    if (this.pool && episode.end !== "aborted") {
      // The policy seats' own turns (not a person's), with what each agent observed.
      const trained = new Set(names.filter((n) => controllers.get(n)?.id.startsWith("policy:") && !this.state.seats.get(n)?.occupant));
      this.pool.record({
        roomId: this.roomId,
        seed,
        turns: episode.turns.filter((t) => trained.has(t.agent)).map((t) => ({ agent: t.agent, timestep: t.timestep, observation: t.observation.text })),
      });
    }
    const context = toSocializedContext(episode);
    // Logged with the structured actions and raw replies the live audit did not have.
    const audit = facts
      ? auditContext(context, facts.vocabulary, {
          initialTruths: facts.initialTruths,
          turns: episode.turns.map((t) => ({ agent: t.agent, timestep: t.timestep, action: t.action, actionText: t.actionText, ...(t.raw ? { raw: t.raw } : {}) })),
        })
      : undefined;
    this.logEpisode({
      episode,
      world: world.name,
      title: scenario.title,
      seed,
      seats: Object.fromEntries(
        names.map((n) => [n, { controller: this.state.seats.get(n)?.controller ?? "", person: this.state.seats.get(n)?.occupant || null }]),
      ),
      socialized_context: context,
      ...(audit ? { audit } : {}),
      observations: true,
    });
  }

  protected override async finish(): Promise<void> {
    await super.finish();
    if (this.pool) {
      this.unlisten?.();
      this.ctx.selfPlay.leave(this.selfPlayPool, this.roomId);
    }
  }
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

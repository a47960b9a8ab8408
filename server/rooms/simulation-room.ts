/**
 * The `simulation` room: plays episodes of any registered world live through the game loop. Each
 * seat is played by its controller (a story's script or a registry agent) unless a person holds
 * it; a person's turn has a deadline, after which the controller acts. Every episode is logged to
 * the run's append-only log as its socialized context and turns, when it ends or is interrupted.
 */
import type { Agent } from "../../worlds/core/agent.js";
import { loadAgent } from "../../agents/registry.js";
import { EpisodeLog } from "../../store/episode-log.js";
import type { RunRecord } from "../../store/run-store.js";
import { auditContext, LeakAuditor, type FactSource } from "../../worlds/core/leak-audit.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { BaseRoom } from "./base-room.js";
import { pause } from "./pause.js";
import { OptionsError, parseOptions, SimulationOptionsSchema, type SimulationOptions } from "./options.js";
import type { SelfPlayPool } from "../self-play/pool.js";
import type { Scenario, ScenarioFactory } from "../../worlds/core/scenario.js";
import { loadScenario, loadWorld } from "../../worlds/registry.js";
import { ControllerFallback, SeatAgent } from "./seat-agent.js";

export class SimulationRoom extends BaseRoom {
  protected readonly roomType = "simulation";
  private opts!: SimulationOptions;
  private scenarios!: ScenarioFactory;
  /** The world's fact vocabulary, for a room with `audit: true` (none: nothing to audit with). */
  private facts: FactSource | undefined;
  private run: RunRecord | undefined;
  private log: EpisodeLog | undefined;
  private playing: Promise<void> | undefined;
  private episodes = 0;
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
    checkSeatNames(opts, first.world.agents(first.initialState));
    const controllers = await this.beginEpisode(first, firstSeed);
    this.run = (await this.reopenRun()) ?? (await this.ctx.store.create("room", this.state.title, {
      room: this.roomId,
      type: "simulation",
      world: opts.world,
      seed: opts.seed,
      loop: opts.loop,
      visibility: this.state.visibility,
    }));
    this.state.runId = this.run.id;
    this.log = new EpisodeLog(this.ctx.store.episodesPath(this.run));
    if (selfPlaySpec) this.joinSelfPlay(opts, selfPlaySpec);
    this.playing = this.play(first, firstSeed, controllers);
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
      human: hs === "all" ? true : hs === "none" ? false : hs.some((s) => s === agent || seatPosition(s) === i),
    }));
  }

  /** The seats of a new episode, and their controllers (a policy's checkpoint loads here, the first time). */
  private async beginEpisode(scenario: Scenario, seed: number): Promise<Map<string, Agent<unknown> | undefined>> {
    const seats = this.seatsFor(scenario);
    this.setAgents(scenario.world, scenario.initialState, seats);
    this.issueSeatTokens(seats.flatMap((s, i) => (s.human ? [i] : [])));
    this.state.episode = ++this.episodes;
    this.ctx.persisted.episode(this.roomId, this.episodes, seed);
    // Withheld while the run is live (a seated client could replay the stories offline and read
    // the other agents' minds); published when it ends.
    this.state.seed = "";
    const controllers = new Map<string, Agent<unknown> | undefined>();
    for (const s of seats) {
      controllers.set(
        s.agent,
        s.controller === "scripted" ? scenario.scripted[s.agent] : s.controller === "none" ? undefined : await loadAgent(s.controller),
      );
    }
    return controllers;
  }

  private async play(first: Scenario, firstSeed: number, firstControllers: Map<string, Agent<unknown> | undefined>): Promise<void> {
    let scenario = first;
    let seed = firstSeed;
    let controllers = firstControllers;
    const signal = this.abort.signal;
    try {
      for (;;) {
        this.setStatus("running");
        await this.playEpisode(scenario, seed, controllers);
        if (!this.opts.loop || signal.aborted) break;
        this.setStatus("between", `next story in ${Math.round(this.opts.pauseMs / 1000)} s`);
        await pause(this.opts.pauseMs, signal);
        if (signal.aborted) break;
        seed = (seed + 1) >>> 0;
        scenario = await this.scenarios.create(seed);
        controllers = await this.beginEpisode(scenario, seed);
      }
      if (!signal.aborted) {
        this.state.seed = String(this.opts.seed);
        this.setStatus("finished", `${this.episodes} episode${this.episodes === 1 ? "" : "s"} played`);
        await this.closeRun("done");
        // A finished room stays open for viewing, then closes.
        this.clock.setTimeout(() => void this.disconnect(), this.opts.lingerSeconds * 1000);
      }
    } catch (err) {
      this.setStatus("failed", (err as Error).message);
      console.error(`[room ${this.roomId}] ${(err as Error).stack ?? String(err)}`);
      await this.closeRun("failed", (err as Error).message);
    }
  }

  private runClosed = false;

  /** Flushes the log and records how the run ended (once). */
  private async closeRun(status: "done" | "failed" | "interrupted", error?: string): Promise<void> {
    if (this.runClosed) return;
    this.runClosed = true;
    this.log?.close();
    if (this.run) {
      await this.ctx.store.update(this.run.id, {
        status,
        finishedAt: new Date().toISOString(),
        summary: { episodes: this.episodes },
        ...(error ? { error } : {}),
      });
    }
  }

  private async playEpisode(scenario: Scenario, seed: number, controllers: Map<string, Agent<unknown> | undefined>): Promise<void> {
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
    this.log?.append({
      kind: "room_episode",
      run: this.run?.id ?? null,
      room: this.roomId,
      world: world.name,
      title: scenario.title,
      seed,
      episode: this.state.episode,
      end: episode.end,
      seats: Object.fromEntries(
        names.map((n) => [n, { controller: this.state.seats.get(n)?.controller ?? "", person: this.state.seats.get(n)?.occupant || null }]),
      ),
      socialized_context: context,
      ...(audit ? { audit } : {}),
      turns: episode.turns.map((t) => ({
        agent: t.agent,
        timestep: t.timestep,
        observation: t.observation.text,
        action: t.action,
        actionText: t.actionText,
        source: t.source,
        ...(t.raw ? { raw: t.raw } : {}),
        ...(t.error ? { error: t.error } : {}),
        latencyMs: Math.round(t.latencyMs * 1000) / 1000,
        ...(t.info ? { info: t.info } : {}),
      })),
    });
  }

  protected async finish(): Promise<void> {
    // The loop sees the abort at its next timestep and logs the episode as aborted.
    await this.playing;
    await this.closeRun("interrupted");
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

/** A seat by position: a number, or a string of digits (as `seat: "0"` joins). Names are never digits. */
function seatPosition(seat: string | number): number | undefined {
  return typeof seat === "number" ? seat : /^\d+$/.test(seat) ? Number(seat) : undefined;
}

/**
 * Seats named in the options must be seats of the story: a misspelt name used to be accepted and
 * leave no seat open (or its controller unused). Names are checked against the first story's
 * agents; a looping room's later stories have other names, which positions follow.
 */
function checkSeatNames(opts: SimulationOptions, names: readonly string[]): void {
  const known = `the story's agents: ${names.map((n, i) => `${i} ${n}`).join(", ")}`;
  if (Array.isArray(opts.humanSeats)) {
    for (const s of opts.humanSeats) {
      const at = seatPosition(s);
      if (at !== undefined ? at >= names.length : !names.includes(s as string)) throw new OptionsError(`bad simulation room options: humanSeats: no seat ${JSON.stringify(s)} (${known})`);
    }
  }
  for (const name of Object.keys(opts.agents)) {
    if (!names.includes(name)) throw new OptionsError(`bad simulation room options: agents.${name}: no such seat (${known})`);
  }
}

/**
 * A room that plays episodes one after another (once, or looping on the next seed) and logs them
 * to its run: the simulation room and the social room. It owns the run's lifecycle: the status
 * between episodes, the seed published when the run ends, the run's record closed once (done,
 * failed or interrupted), the finished room lingering for viewers.
 */
import type { Agent } from "../../worlds/core/agent.js";
import type { Episode, TimestepRecord } from "../../worlds/core/episode.js";
import { runEpisode } from "../../worlds/core/loop.js";
import type { Scenario } from "../../worlds/core/scenario.js";
import { EpisodeLog } from "../../store/episode-log.js";
import { writesHeld } from "../../store/write-fence.js";
import { readLogPage } from "../../store/log-index.js";
import type { RunRecord } from "../../store/run-store.js";
import { quizLeftOpen } from "../security/open-quizzes.js";
import { BaseRoom } from "./base-room.js";
import { pause } from "./pause.js";
import { ControllerFallback } from "./seat-agent.js";

/** What an episode is played with: its scenario and each seat's controller (undefined: nobody). */
export interface EpisodePlan<S extends Scenario = Scenario> {
  readonly scenario: S;
  readonly controllers: Map<string, Agent<unknown> | undefined>;
}

export interface EpisodeLoopOptions {
  readonly seed: number;
  readonly loop: boolean;
  readonly pauseMs: number;
  readonly lingerSeconds: number;
  /** The pause after each timestep. */
  readonly tickMs: number;
  /** How long a seat's turn may take; past it, the seat's controller acts. */
  readonly turnDeadlineMs: number;
  readonly maxSteps: number;
}

/** What a room does with each timestep the loop records (before the room's tick). */
export interface PlanHooks {
  /** Record each seat's mental state every timestep (a thousand users' would be too many). */
  readonly mentalStates?: boolean;
  onTimestep(record: TimestepRecord, next: unknown): void;
}

export abstract class EpisodeRoom<S extends Scenario = Scenario> extends BaseRoom {
  protected run: RunRecord | undefined;
  protected log: EpisodeLog | undefined;
  protected episodes = 0;
  private playing: Promise<void> | undefined;
  private runClosed = false;

  protected abstract loopOptions(): EpisodeLoopOptions;
  /** The next episode's scenario and seats (a looping room's next seed). */
  protected abstract nextEpisode(seed: number): Promise<EpisodePlan<S>>;
  protected abstract playEpisode(plan: EpisodePlan<S>, seed: number): Promise<void>;
  /** The agent the game loop sees in a seat: its person when one holds it, else its controller. */
  protected abstract seatAgent(agent: string, controller: Agent<unknown> | undefined, plan: EpisodePlan<S>): Agent<unknown>;
  /** What an episode is called in the status ("story", "cascade"). */
  protected abstract readonly episodeNoun: string;

  /**
   * Seats a new episode: the agents and who may sit where, its number, and its seed, which is
   * withheld while the run is live (a seated client could replay the episode offline and read the
   * other agents' minds) and published when it ends.
   */
  protected seatEpisode(scenario: S, seats: readonly { agent: string; controller: string; human: boolean }[], seed: number): void {
    this.setAgents(scenario.world, scenario.initialState, seats);
    this.issueSeatTokens(seats.flatMap((s, i) => (s.human ? [i] : [])));
    this.state.episode = ++this.episodes;
    this.ctx.persisted.episode(this.roomId, this.episodes, seed);
    this.state.seed = "";
  }

  /** Opens the run's record (or a restored room's) and its log. */
  protected async startRun(details: Record<string, unknown>): Promise<void> {
    this.run = (await this.reopenRun()) ?? (await this.ctx.store.create("room", this.state.title, { room: this.roomId, type: this.roomType, ...details, visibility: this.state.visibility }));
    this.state.runId = this.run.id;
    this.log = new EpisodeLog(this.ctx.store.episodesPath(this.run));
  }

  /**
   * Where a room recreated after its server died takes its run up (`seed` when it is not one):
   * the episode it was in, played again from its start. When the run's log holds that episode
   * already (the server died in the pause after it, or before the next one's number reached the
   * room registry), the next one instead, or nothing more for a room that plays one episode:
   * played again, it was in the log twice (the same story, told twice). Sets the count of
   * episodes played before it.
   */
  protected async takeUp(seed: number): Promise<{ seed: number; over: boolean }> {
    if (!this.restoring) return { seed, over: false };
    // No episode noted: the registry has it from the second one on (the first starts before the room is kept).
    const at = this.restoring.episode ?? { number: 1, seed };
    const logged = await this.lastLoggedEpisode();
    const over = logged >= at.number && !this.loopOptions().loop;
    const next = logged >= at.number && !over ? logged + 1 : at.number;
    this.episodes = next - 1;
    // Seeds follow one another from episode to episode, as play() draws them.
    return { seed: (at.seed + next - at.number) >>> 0, over };
  }

  /**
   * The number of the last episode a restored room's log holds whole (0 when there is none). An
   * episode whose quiz was opened and never closed is not: the room plays it again, its quiz with
   * it (server/security/open-quizzes.ts).
   */
  private async lastLoggedEpisode(): Promise<number> {
    const run = this.restoring?.runId ? this.ctx.store.get(this.restoring.runId) : undefined;
    if (!run) return 0;
    const path = this.ctx.store.episodesPath(run);
    await this.takeOverRunLog(path);
    // The last episode's record is within the log's last few (its quiz's close follows it).
    const { total } = readLogPage(path, 0, 0, { resolve: false });
    const tail = readLogPage<{ kind?: string; episode?: unknown; context_id?: string }>(path, Math.max(0, total - 8), 8, { resolve: false }).records;
    const last = tail.findLast((r) => r.kind === "room_episode" && typeof r.episode === "number");
    if (!last) return 0;
    const n = last.episode as number;
    return quizLeftOpen(path, n) ? n - 1 : n;
  }

  /**
   * Plays from `first` on, in the background (finish() waits for it); with no `first` (a restored
   * room whose one episode was logged before), the room only ends.
   */
  protected startPlaying(first: EpisodePlan<S> | undefined, firstSeed: number): void {
    this.playing = this.play(first, firstSeed);
  }

  private async play(first: EpisodePlan<S> | undefined, firstSeed: number): Promise<void> {
    const opts = this.loopOptions();
    let plan = first;
    let seed = firstSeed;
    const signal = this.abort.signal;
    try {
      while (plan) {
        this.setStatus("running");
        await this.playEpisode(plan, seed);
        if (!opts.loop || signal.aborted) break;
        this.setStatus("between", `next ${this.episodeNoun} in ${Math.round(opts.pauseMs / 1000)} s`);
        await pause(opts.pauseMs, signal);
        if (signal.aborted) break;
        seed = (seed + 1) >>> 0;
        plan = await this.nextEpisode(seed);
      }
      if (!signal.aborted) {
        this.state.seed = String(opts.seed);
        this.setStatus("finished", `${this.episodes} episode${this.episodes === 1 ? "" : "s"} played`);
        await this.closeRun("done");
        // A finished room stays open for viewing, then closes.
        this.clock.setTimeout(() => void this.disconnect(), opts.lingerSeconds * 1000);
      }
    } catch (err) {
      this.setStatus("failed", (err as Error).message);
      console.error(`[room ${this.roomId}] ${(err as Error).stack ?? String(err)}`);
      await this.closeRun("failed", (err as Error).message);
    }
  }

  /**
   * Plays a plan's episode through the game loop, set up the same way in every room: each seat
   * played by its seatAgent, the seat's controller as the fallback when a person or an agent fails
   * (the world's no-op where there is none), the room's turn deadline, step limit (the scenario's
   * when lower) and abort signal. After each timestep the room's state moves on, `onTimestep`
   * records it, and the room waits its tick.
   */
  protected async runPlan(plan: EpisodePlan<S>, seed: number, hooks: PlanHooks): Promise<Episode> {
    const { scenario, controllers } = plan;
    const world = scenario.world;
    const opts = this.loopOptions();
    const agents: Record<string, Agent<unknown>> = {};
    for (const [name, controller] of controllers) agents[name] = this.seatAgent(name, controller, plan);
    const signal = this.abort.signal;
    const episode = await runEpisode(world, {
      seed,
      initialState: scenario.initialState,
      agents,
      ...(scenario.director ? { director: scenario.director } : {}),
      turnTimeoutMs: opts.turnDeadlineMs,
      maxSteps: Math.min(opts.maxSteps, scenario.maxSteps ?? Infinity),
      fallback: new ControllerFallback(controllers, (agent) => world.noop(this.current, agent)),
      signal,
      ...(hooks.mentalStates === false ? { mentalStates: false } : {}),
      onTimestep: async (rec, next) => {
        this.current = next;
        hooks.onTimestep(rec, next);
        await pause(opts.tickMs, signal);
      },
    });
    this.turns?.closeAll();
    // The episode is logged next, in one step: in a group, only once this process is known to hold
    // its place (at once, unless it was paused past its lease: store/write-fence.ts).
    await writesHeld();
    return episode;
  }

  /**
   * Appends a played episode to the run's log: who held which seat, its socialized context, an
   * audit where there is one, and the turns (with what each agent observed, where `observations`).
   */
  protected logEpisode(e: {
    readonly episode: Episode;
    readonly world: string;
    readonly title: string;
    readonly seed: number;
    readonly seats: Record<string, { controller: string; person: string | null }>;
    readonly socialized_context: unknown;
    readonly audit?: unknown;
    readonly observations: boolean;
  }): void {
    this.log?.append({
      kind: "room_episode",
      run: this.run?.id ?? null,
      room: this.roomId,
      world: e.world,
      title: e.title,
      seed: e.seed,
      episode: this.state.episode,
      end: e.episode.end,
      seats: e.seats,
      socialized_context: e.socialized_context,
      ...(e.audit ? { audit: e.audit } : {}),
      turns: e.episode.turns.map((t) => ({
        agent: t.agent,
        timestep: t.timestep,
        ...(e.observations ? { observation: t.observation.text } : {}),
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

  /** The loop sees the abort at its next timestep and logs the episode as aborted. */
  protected async finish(): Promise<void> {
    await this.playing;
    await this.closeRun("interrupted");
  }
}

/**
 * A self-play pool: the rooms that play one policy and train it together. Rooms report every
 * episode they finish; on the schedule (every N new episodes, or every T minutes when there are
 * new ones) the pool runs a GRPO round on the decision points of the most recent episodes (its
 * policy seats' turns, with the observations they actually had, the story's script as the
 * reference), writes the round's checkpoint to <store>/selfplay/<pool>/round-K/, and from then on
 * hands rooms the new policy when they start their next episode: nobody is disconnected, and no
 * episode changes policy halfway. Each round is a store run (kind "grpo") with its rollouts, and its
 * metrics go to the training board (the dashboard and the socket.io stream).
 */
import { join, resolve } from "node:path";
import { releasePolicy } from "../../agents/policy/agents.js";
import { parseAgentTarget } from "../../agents/policy/options.js";
import type { RunStore } from "../../store/run-store.js";
import { runGrpoSession } from "../../trainers/grpo/session.js";
import { WorldPoints, type EpisodeSpec } from "../../trainers/grpo/world-points.js";
import type { TrainingBoard } from "../training-board.js";
import { roundConfig, type SelfPlayOptions } from "./options.js";

/** A finished episode, as far as training needs it. */
export interface PlayedEpisode extends EpisodeSpec {
  readonly roomId: string;
}

export class SelfPlayPool {
  private readonly rooms = new Set<string>();
  private readonly episodes: PlayedEpisode[] = [];
  private fresh = 0;
  private current: string;
  private readonly baseDir: string;
  private readonly query: string;
  /** The system message of the seats' spec: every round's policy is asked with it. */
  private readonly system: string | undefined;
  private training: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** Each finished round's checkpoint folder, in order (round K is dirs[K - 1]). */
  private readonly dirs: string[] = [];
  private readonly listeners = new Set<(note: string) => void>();

  constructor(
    readonly name: string,
    readonly world: string,
    /** The spec the seats were given (`policy:DIR?options`): what the pool trains. */
    readonly baseSpec: string,
    readonly options: SelfPlayOptions,
    private readonly store: RunStore,
    private readonly board: TrainingBoard,
  ) {
    const target = baseSpec.slice("policy:".length);
    const q = target.indexOf("?");
    const parsed = parseAgentTarget("policy", target);
    this.baseDir = resolve(parsed.dir);
    this.system = parsed.options.system;
    // Kept as written, so that each round's spec is the base spec with only the folder changed.
    this.query = q < 0 ? "" : target.slice(q);
    this.current = baseSpec;
    if (options.everyMinutes !== undefined) {
      this.timer = setInterval(() => this.maybeTrain(true), options.everyMinutes * 60_000);
      this.timer.unref();
    }
  }

  /** Notes for the pool's rooms (their status line): a round starts, ends or fails. */
  listen(fn: (note: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private note(text: string): void {
    for (const fn of this.listeners) fn(text);
  }

  join(roomId: string): void {
    this.rooms.add(roomId);
  }

  /** Returns true when the pool has no rooms left. */
  leave(roomId: string): boolean {
    this.rooms.delete(roomId);
    return this.rooms.size === 0;
  }

  /** The controller a seat given `spec` plays with now: the latest round's policy for the pool's own. */
  specFor(spec: string): string {
    return spec === this.baseSpec ? this.current : spec;
  }

  /** A room finished an episode. */
  record(episode: PlayedEpisode): void {
    if (episode.turns && episode.turns.length === 0) return;
    this.episodes.push(episode);
    if (this.episodes.length > this.options.recentEpisodes) this.episodes.splice(0, this.episodes.length - this.options.recentEpisodes);
    this.fresh++;
    this.maybeTrain(false);
  }

  private maybeTrain(onTimer: boolean): void {
    if (this.training || this.abort.signal.aborted || this.fresh === 0) return;
    const due = onTimer || (this.options.everyEpisodes !== undefined && this.fresh >= this.options.everyEpisodes);
    if (!due) return;
    this.training = this.trainRound().finally(() => {
      this.training = undefined;
      // Episodes that came in during the round may already be due.
      this.maybeTrain(false);
    });
  }

  private async trainRound(): Promise<void> {
    const round = this.dirs.length + 1;
    const specs = this.episodes.slice();
    this.fresh = 0;
    const out = join(this.store.root, "selfplay", this.name, `round-${round}`);
    const config = roundConfig(this.options);
    const title = `Self-play ${this.name}: round ${round}`;
    this.note(`self-play: training round ${round} on ${specs.length} episode(s)`);
    let runId: string | null = null;
    try {
      const source = await WorldPoints.fromEpisodes(this.world, specs, this.system);
      const currentDir = this.dirs.at(-1) ?? this.baseDir;
      const r = await runGrpoSession({
        out,
        model: currentDir,
        referenceModel: this.baseDir,
        source,
        config,
        saveEvery: config.steps,
        keep: 1,
        store: this.store,
        title,
        signal: this.abort.signal,
        onStart: (info) => {
          runId = info.runId;
        },
        onStep: (m) => this.board.step({ runId: runId ?? out, title, source: source.description, steps: config.steps, roomIds: [...this.rooms], round }, m),
      });
      if (r.interrupted) {
        this.board.finish(runId ?? out, "interrupted");
        return;
      }
      this.dirs.push(out);
      this.current = `policy:${out}${this.query}`;
      this.board.finish(runId ?? out, "done", { checkpoint: out });
      this.note(`self-play: round ${round} done; rooms play it from their next episode`);
      // Rounds before the previous one are no longer played by any room.
      const stale = this.dirs.length >= 3 ? this.dirs[this.dirs.length - 3] : undefined;
      if (stale) releasePolicy(stale);
    } catch (err) {
      if (runId) this.board.finish(runId, "failed");
      this.note(`self-play: round ${round} failed: ${(err as Error).message}`);
      console.error(`[self-play ${this.name}] round ${round}: ${(err as Error).stack ?? String(err)}`);
    }
  }

  /** Stops the schedule; a round in progress ends at its next step with a checkpoint. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.abort.abort();
    await this.training;
  }
}

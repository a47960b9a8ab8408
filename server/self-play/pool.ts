/**
 * A self-play pool: the rooms that play one policy and train it together. Rooms report every
 * episode they finish (after its quiz, when they quiz); on the schedule (every N new episodes, or
 * every T minutes when there are new ones) the pool runs a GRPO round on the most recent episodes,
 * rewarded by the episodes themselves (trainers/grpo/self-play-points.ts): their quiz questions,
 * by exact match with the world model's labels, and the policy seats' turns, by validity and the
 * world's own rewards; never by imitating the story's script. It writes the round's checkpoint
 * to <store>/selfplay/<pool>/round-K/ (with the `lora` option: the round's adapter of the base
 * policy, continuing the previous round's), and from then on hands rooms the new policy when they start their next episode: nobody is disconnected, and no
 * episode changes policy halfway. Each round is a store run (kind "grpo") with its rollouts, and its
 * metrics go to the training board (the dashboard and the socket.io stream).
 *
 * With `heldOutEpisodes: N`, the pool's first N quizzed episodes are held out: no round trains on
 * them (or starts before they are played), and their quiz questions are the fixed set every
 * round's policy, and the starting one, is scored on in the round's thread (held-out.ts): the
 * board's `heldOutAccuracy`, the same questions round after round.
 *
 * In a group of processes (docs/scale.md) the rooms of one pool may live in several processes, each
 * with a pool of that name; one of them trains (PoolPeers: a lease in Redis), the others pass it
 * their episodes, and every round it finishes is played by the rooms of every process.
 *
 * The pool's rounds, held-out set and scores outlive the process (pool-state.ts): a pool made again
 * under the same name, after a restart or in another process of the group, plays its last round
 * and goes on with the next.
 */
import { existsSync, renameSync } from "node:fs";
import { join, resolve } from "node:path";
import { releasePolicy } from "../../agents/policy/agents.js";
import { parseAgentTarget } from "../../agents/policy/options.js";
import type { RunStore } from "../../store/run-store.js";
import { checkWrite, PlaceLost, writesHeld } from "../../store/write-fence.js";
import type { SelfPlayEpisode } from "../../trainers/grpo/self-play-points.js";
import { wilsonInterval } from "../../benchmarks/wilson-interval.js";
import type { HeldOutPoint, QuizAccuracyPoint, TrainingBoard } from "../training-board.js";
import type { HeldOutScore } from "./held-out.js";
import { listCheckpoints } from "../../trainers/common/checkpoint-folders.js";
import { readPoolState, writePoolState } from "./pool-state.js";
import { roundConfig, type SelfPlayOptions } from "./options.js";
import { runRoundThread, type HeldOutReport } from "./round-thread.js";

/** How a seat played by the pool's policy answered an episode's quiz. */
export interface SeatQuizScore {
  /** The controller spec that answered (which round's policy). */
  readonly controller: string;
  readonly asked: number;
  readonly correct: number;
}

/** A finished episode, as far as training needs it. */
export interface PlayedEpisode extends SelfPlayEpisode {
  readonly roomId: string;
  /** The room's world options (its scenarios' `create`): the round's thread makes the world again from them. */
  readonly worldOptions?: unknown;
  /** The quiz answers of the seats the pool's policy played (none when the room does not quiz). */
  readonly quizScores?: readonly SeatQuizScore[];
}

/**
 * The pool's counterparts in the other processes of a group (server/group/pool-peers.ts): which
 * process trains, the episodes played elsewhere, the rounds trained elsewhere.
 */
export interface PoolPeers {
  /** Whether this process trains the pool now. */
  trains(): boolean;
  /** An episode played here, for the process that trains. */
  forward(episode: PlayedEpisode): void;
  /** Every round's checkpoint so far (a round finished here): the other processes' rooms play the last one. */
  announce(dirs: readonly string[]): void;
  close(): Promise<void>;
}

/** The pool's side of its peers: what they hand it. */
export interface PoolOfPeers {
  readonly name: string;
  readonly world: string;
  /** An episode played in another process (this process trains). */
  received(episode: PlayedEpisode): void;
  /** The rounds trained in another process, in order. */
  adoptRounds(dirs: readonly string[]): void;
  /** This process now trains (true) or no longer does. */
  trainerChanged(trains: boolean): void;
}

/** A room of the pool, as far as the board may name it. */
interface PoolRoom {
  readonly private: boolean;
}

export class SelfPlayPool implements PoolOfPeers {
  private readonly rooms = new Map<string, PoolRoom>();
  private readonly episodes: PlayedEpisode[] = [];
  private readonly peers: PoolPeers | undefined;
  /** Quiz answers by the round whose policy gave them (every episode, kept for the whole curve). */
  private readonly quiz = new Map<number, { episodes: number; questions: number; correct: number }>();
  /** The held-out episodes' quiz files (`heldOutEpisodes`): the first quizzed episodes, never trained on. */
  private readonly heldOut: string[] = [];
  /** Each round's policy on the held-out questions (round 0: the starting policy). */
  private readonly heldOutScores = new Map<number, HeldOutScore>();
  /** The board run of the latest round (where the quiz accuracy curve is shown). */
  private lastRunId: string | undefined;
  private fresh = 0;
  private current: string;
  private readonly baseDir: string;
  /** <store>/selfplay/<pool>: its rounds' checkpoints and its saved state. */
  private readonly dir: string;
  private readonly query: string;
  /** The system message of the seats' spec: every round's policy is asked with it. */
  private readonly system: string | undefined;
  private training: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** Each finished round's checkpoint folder, in order (round K is dirs[K - 1]). */
  private dirs: string[] = [];
  private readonly listeners = new Set<(note: string) => void>();

  constructor(
    readonly name: string,
    readonly world: string,
    /** The spec the seats were given (`policy:DIR?options`): what the pool trains. */
    readonly baseSpec: string,
    readonly options: SelfPlayOptions,
    private readonly store: RunStore,
    private readonly board: TrainingBoard,
    peers?: (pool: PoolOfPeers) => PoolPeers,
  ) {
    const target = baseSpec.slice("policy:".length);
    const q = target.indexOf("?");
    const parsed = parseAgentTarget("policy", target);
    this.baseDir = resolve(parsed.dir);
    this.system = parsed.options.system;
    // Kept as written, so that each round's spec is the base spec with only the folder changed.
    this.query = q < 0 ? "" : target.slice(q);
    this.current = baseSpec;
    this.dir = join(store.root, "selfplay", name);
    this.restore();
    this.peers = peers?.(this);
    if (options.everyMinutes !== undefined) {
      this.timer = setInterval(() => this.maybeTrain(true), options.everyMinutes * 60_000);
      this.timer.unref();
    }
  }

  /** Takes up the pool's saved state: its rounds (the rooms play the last), held-out set and scores. */
  private restore(): void {
    const saved = readPoolState(this.dir, this.store.root);
    if (!saved) return;
    const file = join(this.dir, "pool.json");
    if (saved.world !== this.world || saved.baseSpec !== this.baseSpec) {
      throw new Error(`self-play pool "${this.name}": ${file} is the pool of ${saved.world} seats played by ${saved.baseSpec}, not ${this.world} by ${this.baseSpec}; name another pool (selfPlay.pool), or move that folder away`);
    }
    for (const dir of saved.rounds) if (!existsSync(join(dir, "config.json"))) throw new Error(`self-play pool "${this.name}": ${file} names round ${saved.rounds.indexOf(dir) + 1} at ${dir}, which holds no checkpoint`);
    this.dirs = [...saved.rounds];
    if (this.dirs.length) this.current = `policy:${this.dirs.at(-1)}${this.query}`;
    this.heldOut.push(...saved.heldOut.slice(0, this.options.heldOutEpisodes ?? 0));
    // Scores on another held-out set (the option changed) would not compare with the rounds to come.
    if (saved.heldOut.length === this.options.heldOutEpisodes) for (const { round, ...score } of saved.heldOutScores) this.heldOutScores.set(round, score);
    for (const { round, ...q } of saved.quiz) this.quiz.set(round, q);
  }

  /**
   * The quiz curve changes with every episode: it is saved within seconds rather than flushed to
   * disk on the event loop each time (a kill loses at most those seconds of it).
   */
  private saveSoon(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => this.save(), 2000);
    this.saveTimer.unref();
  }

  private saveTimer: NodeJS.Timeout | undefined;

  /** Saves the pool's state; in a group only the process that trains writes it (it has every episode's scores). */
  private save(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (this.peers && !this.peers.trains()) return;
    try {
      writePoolState(this.dir, this.store.root, {
        format: 1,
        world: this.world,
        baseSpec: this.baseSpec,
        rounds: this.dirs,
        heldOut: this.heldOut,
        heldOutScores: [...this.heldOutScores.entries()].map(([round, s]) => ({ round, ...s })),
        quiz: [...this.quiz.entries()].map(([round, q]) => ({ round, ...q })),
      });
    } catch (err) {
      // Not known to hold its place in the group (store/write-fence.ts): saved again once it is, or never if it is dead.
      if (err instanceof PlaceLost) return void writesHeld().then(() => this.saveSoon(), () => undefined);
      // The rooms play on; what was not saved is the curves since the last save.
      console.error(`[self-play ${this.name}] saving its state: ${(err as Error).message}`);
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

  join(roomId: string, opts: { private?: boolean } = {}): void {
    this.rooms.set(roomId, { private: opts.private ?? false });
    if (roomId === this.name && opts.private) this.namedForPrivateRoom = true;
  }

  /** Whether the pool is named for a private room (the default pool of a private room): the board does not show its name. */
  private namedForPrivateRoom = false;

  private get shownName(): string {
    return this.namedForPrivateRoom ? "(a private room)" : this.name;
  }

  private get anyPrivate(): boolean {
    return [...this.rooms.values()].some((r) => r.private);
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

  /** The round whose policy `spec` is (0: the starting one), or undefined for another controller. */
  roundOf(spec: string): number | undefined {
    if (spec === this.baseSpec) return 0;
    const i = this.dirs.findIndex((d) => spec === `policy:${d}${this.query}`);
    return i < 0 ? undefined : i + 1;
  }

  /** The quiz accuracy of each round's policy on the episodes it played (new to it: a round trains on earlier ones). */
  quizAccuracy(): QuizAccuracyPoint[] {
    return [...this.quiz.entries()]
      .sort(([a], [b]) => a - b)
      .map(([round, q]) => ({ round, episodes: q.episodes, questions: q.questions, correct: q.correct, accuracy: q.questions ? q.correct / q.questions : 0 }));
  }

  /** Each round's accuracy on the held-out questions, with its 95% Wilson interval (empty without `heldOutEpisodes`). */
  heldOutAccuracy(): HeldOutPoint[] {
    return [...this.heldOutScores.entries()]
      .sort(([a], [b]) => a - b)
      .map(([round, s]) => ({ round, questions: s.questions, correct: s.correct, accuracy: s.questions ? s.correct / s.questions : 0, ...wilsonInterval(s.correct, s.questions), questionSet: s.questionSet }));
  }

  /** The quiz files of the held-out episodes, once all are played (undefined before, and without `heldOutEpisodes`). */
  heldOutFiles(): string[] | undefined {
    const n = this.options.heldOutEpisodes;
    return n !== undefined && this.heldOut.length === n ? [...this.heldOut] : undefined;
  }

  /** Whether rounds wait for held-out episodes still to be played. */
  private get holdingOut(): boolean {
    return this.options.heldOutEpisodes !== undefined && this.heldOut.length < this.options.heldOutEpisodes;
  }

  /** A room finished an episode (and its quiz, when the room quizzes). */
  record(episode: PlayedEpisode): void {
    // Kept here too: if the trainer dies, this process may take the pool over with them.
    if (this.peers && !this.peers.trains()) this.peers.forward(episode);
    this.keep(episode);
  }

  received(episode: PlayedEpisode): void {
    this.keep(episode);
  }

  adoptRounds(dirs: readonly string[]): void {
    if (dirs.length <= this.dirs.length) return;
    this.dirs = [...dirs];
    this.current = `policy:${dirs.at(-1)}${this.query}`;
    this.note(`self-play: round ${dirs.length} done (trained by another process); rooms play it from their next episode`);
    const stale = this.dirs.length >= 3 ? this.dirs[this.dirs.length - 3] : undefined;
    if (stale) releasePolicy(stale);
  }

  trainerChanged(trains: boolean): void {
    if (trains) this.maybeTrain(false);
  }

  private keep(episode: PlayedEpisode): void {
    this.countQuiz(episode.quizScores ?? []);
    if (episode.turns.length === 0 && !episode.quizFile) return;
    if (episode.quizFile && this.holdingOut) {
      // Held out whole (its turns too): no round learns from it.
      this.heldOut.push(episode.quizFile);
      this.save();
      this.note(`self-play: episode held out (${this.heldOut.length} of ${this.options.heldOutEpisodes}): every round is scored on its quiz, none trains on it`);
      if (!this.holdingOut) this.maybeTrain(false);
      return;
    }
    this.episodes.push(episode);
    if (this.episodes.length > this.options.recentEpisodes) this.episodes.splice(0, this.episodes.length - this.options.recentEpisodes);
    this.fresh++;
    this.maybeTrain(false);
  }

  private countQuiz(scores: readonly SeatQuizScore[]): void {
    const byRound = new Map<number, { questions: number; correct: number }>();
    for (const s of scores) {
      const round = this.roundOf(s.controller);
      if (round === undefined || s.asked === 0) continue;
      const r = byRound.get(round) ?? { questions: 0, correct: 0 };
      r.questions += s.asked;
      r.correct += s.correct;
      byRound.set(round, r);
    }
    if (byRound.size === 0) return;
    for (const [round, r] of byRound) {
      const q = this.quiz.get(round) ?? { episodes: 0, questions: 0, correct: 0 };
      this.quiz.set(round, { episodes: q.episodes + 1, questions: q.questions + r.questions, correct: q.correct + r.correct });
    }
    this.saveSoon();
    if (this.lastRunId) this.board.quizAccuracy(this.lastRunId, this.quizAccuracy());
  }

  private maybeTrain(onTimer: boolean): void {
    if (this.training || this.abort.signal.aborted || this.fresh === 0 || this.holdingOut) return;
    if (this.peers && !this.peers.trains()) return;
    const due = onTimer || (this.options.everyEpisodes !== undefined && this.fresh >= this.options.everyEpisodes);
    if (!due) return;
    this.training = this.trainRound().then(
      () => {
        this.training = undefined;
        // Episodes that came in during the round may already be due.
        this.maybeTrain(false);
      },
      (err: unknown) => {
        this.training = undefined;
        // Not begun (its process not known to hold its place in its group): the episodes wait for the next round, asked for by the next episode.
        console.error(`[self-play ${this.name}] round not started: ${(err as Error).message}; its episodes are kept for the next one`);
      },
    );
  }

  /** Trains the next round; rejects, the episodes kept for the next one, when it could not begin. */
  private async trainRound(): Promise<void> {
    // Its first write (a stopped round set aside) once this process is known to hold its place (store/write-fence.ts).
    await writesHeld();
    const round = this.dirs.length + 1;
    const specs = this.episodes.slice();
    const fresh = this.fresh;
    this.fresh = 0;
    const out = join(this.dir, `round-${round}`);
    // A round stopped before it finished (the server closed, or was killed): its partial checkpoint
    // is kept beside, and this round starts afresh on the episodes played since.
    if (existsSync(out)) {
      try {
        checkWrite(out);
        renameSync(out, `${out}.stopped-${new Date().toISOString().replace(/[:.]/g, "-")}`);
      } catch (err) {
        this.fresh += fresh;
        throw err;
      }
    }
    const trained = `policy:${out}${this.query}`;
    const heldOutFiles = this.heldOutFiles();
    const config = roundConfig(this.options);
    const title = `Self-play ${this.shownName}: round ${round}`;
    const rooms = [...this.rooms.entries()];
    const roomIds = rooms.filter(([, r]) => !r.private).map(([id]) => id);
    const privateRoomIds = rooms.filter(([, r]) => r.private).map(([id]) => id);
    this.note(`self-play: training round ${round} on ${specs.length} episode(s)`);
    let runId: string | null = null;
    let source = "";
    // A continuing round's steps are numbered on from the previous round's.
    let steps = config.steps;
    try {
      const currentDir = this.dirs.at(-1) ?? this.baseDir;
      const continueFrom = this.options.continueTraining ? this.previousTrainer(round) : undefined;
      const first = specs[0]!;
      // The round runs in a thread of its own: minutes of rollouts and updates on the event loop
      // would freeze every room, socket and request of the server for all of them.
      const r = await runRoundThread(
        {
          world: { name: this.world, seed: first.seed, ...(first.worldOptions !== undefined ? { options: first.worldOptions } : {}) },
          episodes: specs.map((e) => ({ seed: e.seed, title: e.title, context: e.context, turns: e.turns, ...(e.quizFile ? { quizFile: e.quizFile } : {}) })),
          ...(this.system !== undefined ? { system: this.system } : {}),
          turns: this.options.turns,
          store: this.store.root,
          out,
          // A LoRA pool trains an adapter of the base, from the previous round's; the base is then
          // the reference itself.
          ...(this.options.lora !== undefined
            ? { model: this.baseDir, lora: this.options.lora, ...(this.dirs.length > 0 && !continueFrom ? { loraFrom: currentDir } : {}) }
            : { model: currentDir, referenceModel: this.baseDir }),
          ...(continueFrom ? { continueFrom } : {}),
          config,
          title,
          // A private room's episodes are in the round's rollouts.
          ...(this.anyPrivate ? { runParams: { visibility: "private" } } : {}),
          // Scored in the round's thread: the round's policy once trained, the starting one first if it has no score yet.
          ...(heldOutFiles ? { heldOut: { files: heldOutFiles, round, trained, ...(this.heldOutScores.has(0) ? {} : { start: this.baseSpec }) } } : {}),
        },
        {
          signal: this.abort.signal,
          onStart: (info) => {
            runId = info.runId;
            source = info.source;
            steps = info.startStep + config.steps;
            this.lastRunId = runId ?? out;
          },
          onStep: (m) => this.board.step({ runId: runId ?? out, title, source, steps, roomIds, privateRoomIds, round, ...this.curves() }, m),
          onHeldOut: (r) => this.heldOutScored(r),
        },
      );
      if (r.interrupted) {
        await this.closeStoreRun(runId, "interrupted");
        this.board.finish(runId ?? out, "interrupted");
        return;
      }
      this.dirs.push(out);
      this.current = trained;
      this.save();
      this.board.finish(runId ?? out, "done", { checkpoint: out });
      this.peers?.announce(this.dirs);
      this.note(`self-play: round ${round} done; rooms play it from their next episode`);
      // Rounds before the previous one are no longer played by any room.
      const stale = this.dirs.length >= 3 ? this.dirs[this.dirs.length - 3] : undefined;
      if (stale) releasePolicy(stale);
    } catch (err) {
      const message = (err as Error).message;
      await this.closeStoreRun(runId, "failed", message);
      // On the board even when the round failed before its first step (its run shows why).
      this.board.fail({ runId: runId ?? out, title, source, steps, roomIds, privateRoomIds, round, ...this.curves() }, message);
      this.note(`self-play: round ${round} failed: ${message}`);
      console.error(`[self-play ${this.name}] round ${round}: ${(err as Error).stack ?? String(err)}`);
    }
  }

  /**
   * The trainer state round `round` goes on from (`continueTraining`): the previous round's last
   * checkpoint, kept in its folder beside its policy (after a restart too: the pool's state names
   * the folder). Round 1 starts from the starting policy with a new optimizer.
   */
  private previousTrainer(round: number): string | undefined {
    const previous = this.dirs.at(-1);
    if (!previous) return undefined;
    const dir = listCheckpoints(previous).at(-1)?.dir;
    if (!dir) throw new Error(`continueTraining: round ${round - 1} (${previous}) holds no trainer checkpoint (checkpoint-N/ with optimizer.safetensors) to go on from`);
    return dir;
  }

  /** What a round's run shows of the pool's curves. */
  private curves(): { quizAccuracy: QuizAccuracyPoint[]; heldOutAccuracy?: HeldOutPoint[] } {
    const held = this.heldOutAccuracy();
    return { quizAccuracy: this.quizAccuracy(), ...(held.length ? { heldOutAccuracy: held } : {}) };
  }

  /** A policy's held-out score from a round's thread: on the board now (the starting policy's may come before the round's first step, which then brings it). */
  private heldOutScored(r: HeldOutReport): void {
    if (r.type === "heldOutFailed") {
      this.note(`self-play: round ${r.round}'s policy could not be scored on the held-out questions: ${r.message}`);
      console.error(`[self-play ${this.name}] held-out score of round ${r.round}: ${r.message}`);
      return;
    }
    this.heldOutScores.set(r.round, { questions: r.questions, correct: r.correct, questionSet: r.questionSet });
    this.save();
    if (this.lastRunId) this.board.heldOutAccuracy(this.lastRunId, this.heldOutAccuracy());
  }

  /** A round whose thread was stopped or died leaves its store run "running": it is closed as what it was. */
  private async closeStoreRun(runId: string | null, status: "interrupted" | "failed", error?: string): Promise<void> {
    if (!runId || this.store.get(runId)?.status !== "running") return;
    await this.store.update(runId, { status, finishedAt: new Date().toISOString(), ...(error !== undefined ? { error } : {}) }).catch((err: Error) => {
      console.error(`[self-play ${this.name}] ${runId}: ${err.message}`);
    });
  }

  /** Stops the schedule; a round in progress ends at its next step with a checkpoint. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.abort.abort();
    await this.training;
    if (this.saveTimer) this.save();
    await this.peers?.close();
  }
}

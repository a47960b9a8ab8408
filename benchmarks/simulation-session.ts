/**
 * A simulation run from its registration to its report (`socialworld simulate`): register the run
 * in the store (or take up an interrupted one, whose logged timesteps the world replays), append
 * each timestep's `episode_step` record to the episode log as it ends (a stopped run loses at most
 * the timestep in progress), and close it with its status, its summary in the store's list and,
 * when done, its report (report.json beside the log). The world steps (a SteppedRun,
 * worlds/core/episode-step.ts); the command only says what to run, and shows it.
 */
import { join } from "node:path";
import { EpisodeLog, readEpisodeLog } from "../store/episode-log.js";
import type { RunRecord, RunStore } from "../store/run-store.js";
import { writeFileAtomic } from "../store/write-atomic.js";
import { EpisodeStepRecordSchema, type EpisodeStepRecord, type SteppedRun } from "../worlds/core/episode-step.js";
import { DataError } from "../worlds/core/errors.js";
import { ResumeRefused, takeUpRun } from "./session.js";

export const SIMULATE_RUN = "simulate";

export interface SimulationSessionOptions {
  readonly store: RunStore;
  /** The world's run, at its start (a resumed run's logged timesteps are replayed into it). */
  readonly sim: SteppedRun;
  readonly title: string;
  /** The run's parameters (the store's record); `sameOnResume` name those a resumed run must share. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly sameOnResume: readonly string[];
  /** An interrupted run to take up. */
  readonly resume?: string;
}

export class SimulationSession {
  private readonly log: EpisodeLog;
  private closed = false;

  private constructor(
    private readonly o: SimulationSessionOptions,
    readonly run: RunRecord,
  ) {
    this.log = new EpisodeLog(o.store.episodesPath(run));
  }

  /** Registers the run, or takes up `resume` and replays its log (ResumeRefused: not that run, or nothing left; DataError: a log that is not the run's). */
  static async start(o: SimulationSessionOptions): Promise<SimulationSession> {
    const params = { world: o.sim.world, ...o.params };
    if (!o.resume) return new SimulationSession(o, await o.store.create(SIMULATE_RUN, o.title, params));
    const was = o.store.get(o.resume);
    if (was && was.kind !== SIMULATE_RUN) throw new ResumeRefused(`run ${was.id} is not a simulation (it is a ${was.kind} run)`);
    if (was?.status === "done") throw new ResumeRefused(`run ${was.id} is done: there is nothing to take up`);
    const run = takeUpRun(o.store, o.resume, params, ["world", ...o.sameOnResume]);
    replayLog(o.store.episodesPath(run), o.sim);
    const session = new SimulationSession(o, run);
    await o.store.update(run.id, { status: "running" });
    return session;
  }

  /** Runs and logs the next timestep; its record. */
  async step(): Promise<EpisodeStepRecord> {
    if (this.closed) throw new Error(`run ${this.run.id} is closed`);
    const record = { ...(await this.o.sim.step()), run: this.run.id };
    this.log.append(record);
    return record;
  }

  /** Closes the log and records how the run ended; a finished run's report goes to report.json. */
  async close(status: "done" | "interrupted" | "failed", error?: string): Promise<Record<string, unknown>> {
    if (this.closed) throw new Error(`run ${this.run.id} is already closed`);
    this.closed = true;
    this.log.close();
    const report = { run: this.run.id, ...this.o.sim.report() };
    if (status === "done") writeFileAtomic(join(this.o.store.dirOf(this.run), "report.json"), JSON.stringify(report, null, 2) + "\n");
    await this.o.store.update(this.run.id, {
      status,
      finishedAt: new Date().toISOString(),
      summary: this.o.sim.summary(),
      ...(error !== undefined ? { error } : {}),
    });
    return report;
  }
}

/** Replays a run's logged timesteps into `sim`: each must be the next one (a DataError names the line that is not). */
function replayLog(path: string, sim: SteppedRun): void {
  readEpisodeLog(path).records.forEach((raw, i) => {
    const line = i + 1;
    const parsed = EpisodeStepRecordSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DataError(path, { line }, `episode_step record: ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    }
    try {
      sim.replay(parsed.data);
    } catch (err) {
      throw new DataError(path, { line }, `cannot replay this step: ${(err as Error).message}`);
    }
  });
}

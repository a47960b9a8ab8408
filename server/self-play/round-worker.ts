/**
 * One self-play round in a worker thread of its own (round-thread.ts starts it): the rollouts and
 * updates of a GRPO round are minutes of work on the CPU, and on the server's event loop they
 * would freeze every room, socket and request for all of it. The native addon is a Node-API
 * addon with per-environment state (native/src/addon.cpp), loaded here as in the main thread; the
 * two share the process's kernel thread pool.
 *
 * The thread rebuilds what it needs from plain data: the world from its name, seed and options,
 * the round's points from the episodes' turns and quiz files, the store from its folder (db.json
 * is written under its lock, so the main thread's copy and this one agree). It reports the run's
 * start, each step's metrics and the outcome as messages; the stop flag ends the round after its
 * current step, with a checkpoint.
 *
 * With a held-out set (the pool's `heldOutEpisodes`), the thread also asks the round's policy every
 * held-out question once it is trained (held-out.ts), and the starting policy before the first
 * round trains: a bench of a thousand questions is seconds to a minute of the CPU, which the
 * event loop must not spend either.
 */
import { parentPort, workerData } from "node:worker_threads";
import { parseLoraOption } from "../../models/lora-settings.js";
import { RunStore } from "../../store/run-store.js";
import { fenceWithLease } from "../../store/write-fence.js";
import type { GrpoConfig } from "../../trainers/grpo/config.js";
import type { StepMetrics } from "../../trainers/grpo/metrics.js";
import { selfPlayPoints, type SelfPlayEpisode } from "../../trainers/grpo/self-play-points.js";
import { runGrpoSession } from "../../trainers/grpo/session.js";
import { loadScenario } from "../../worlds/registry.js";
import { scoreHeldOut } from "./held-out.js";

/** What a round needs, as plain data (a worker's `workerData` is a structured clone). */
export interface RoundJob {
  /** The world of the episodes, rebuilt as the first episode's scenario made it. */
  readonly world: { readonly name: string; readonly seed: number; readonly options?: unknown };
  readonly episodes: readonly SelfPlayEpisode[];
  /** The system message every round's policy is asked with. */
  readonly system?: string;
  readonly turns: boolean;
  /** The store's folder (the round is a store run there). */
  readonly store: string;
  readonly out: string;
  /** The checkpoint the round starts from (a LoRA pool: the base). */
  readonly model: string;
  /** The KL's reference (a full-weight pool: the pool's starting policy). */
  readonly referenceModel?: string;
  /** A LoRA pool: `--lora`'s text, and the previous round's adapter. */
  readonly lora?: string;
  readonly loraFrom?: string;
  /** The previous round's trainer checkpoint this round goes on from (the pool's `continueTraining`). */
  readonly continueFrom?: string;
  readonly config: GrpoConfig;
  readonly title: string;
  readonly runParams?: Record<string, unknown>;
  /** The pool's held-out set: what to score, once the round is trained. */
  readonly heldOut?: HeldOutJob;
  /**
   * One Int32 the event loop sets to 1 to stop the round. Read between steps: a round's steps are
   * native calls back to back, so a message would wait in this thread's queue until the round ends.
   */
  readonly stop: SharedArrayBuffer;
  /** The server's write lease in a group (store/write-fence.ts): the round's writes check it as the server's do. */
  readonly lease?: SharedArrayBuffer;
}

/** The held-out episodes' quiz files, and the policies to ask their questions. */
export interface HeldOutJob {
  readonly files: readonly string[];
  /** The round's number, and its policy as the seats are given it (`policy:OUT?options`). */
  readonly round: number;
  readonly trained: string;
  /** The starting policy's spec when round 0 has no score yet: asked before the round trains. */
  readonly start?: string;
}

export type FromRound =
  | { readonly type: "start"; readonly runId: string | null; readonly source: string; readonly startStep: number }
  | { readonly type: "step"; readonly metrics: StepMetrics }
  | { readonly type: "heldOut"; readonly round: number; readonly questions: number; readonly correct: number; readonly questionSet: string }
  | { readonly type: "heldOutFailed"; readonly round: number; readonly message: string }
  | { readonly type: "done"; readonly interrupted: boolean }
  | { readonly type: "failed"; readonly message: string; readonly stack?: string };

const port = parentPort;
if (!port) throw new Error("server/self-play/round-worker.ts runs as a worker thread (round-thread.ts starts it)");
const job = workerData as RoundJob;
const post = (msg: FromRound) => port.postMessage(msg);
const stop = new Int32Array(job.stop);
// Paused with its server past the lease, a round writes no checkpoint into a folder that the pool's new trainer now writes.
// A write waiting for the lease gives up once the server stops the round (the stop flag).
if (job.lease) fenceWithLease(job.lease, { stop: job.stop });
const abort = new AbortController();

/** Scores `spec` on the held-out questions; a failure is reported and costs the round nothing (its checkpoint stands). */
async function heldOut(held: HeldOutJob, round: number, spec: string): Promise<void> {
  try {
    const s = await scoreHeldOut({
      world: job.world.name,
      files: held.files,
      spec,
      signal: abort.signal,
      // A bench is native calls back to back too: the stop flag is read between answers.
      onAnswer: () => {
        if (Atomics.load(stop, 0) === 1) abort.abort();
      },
    });
    post({ type: "heldOut", round, ...s });
  } catch (err) {
    // Stopped: the server is closing, and no score is better than one on part of the set.
    if (!abort.signal.aborted) post({ type: "heldOutFailed", round, message: (err as Error).message ?? String(err) });
  }
}

async function round(): Promise<boolean> {
  if (job.heldOut?.start !== undefined) {
    await heldOut(job.heldOut, 0, job.heldOut.start);
    // Stopped while the starting policy was asked: nothing trained, nothing to keep.
    if (abort.signal.aborted) return true;
  }
  const scenario = await (await loadScenario(job.world.name)).create(job.world.seed, job.world.options);
  const { all: source } = await selfPlayPoints(scenario.world, job.episodes, { ...(job.system !== undefined ? { system: job.system } : {}), turns: job.turns });
  const store = await RunStore.open(job.store);
  const lora = job.lora !== undefined ? parseLoraOption(job.lora) : undefined;
  const r = await runGrpoSession({
    out: job.out,
    model: job.model,
    ...(job.referenceModel !== undefined ? { referenceModel: job.referenceModel } : {}),
    ...(lora ? { lora } : {}),
    ...(job.loraFrom !== undefined ? { loraFrom: job.loraFrom } : {}),
    ...(job.continueFrom !== undefined ? { continueFrom: job.continueFrom } : {}),
    source,
    config: job.config,
    saveEvery: job.config.steps,
    keep: 1,
    store,
    title: job.title,
    ...(job.runParams ? { runParams: job.runParams } : {}),
    signal: abort.signal,
    onStart: (info) => post({ type: "start", runId: info.runId, source: source.description, startStep: info.startStep }),
    onStep: (metrics) => {
      post({ type: "step", metrics });
      // The trainer looks at the signal before each step: set it now, and the next step is not taken.
      if (Atomics.load(stop, 0) === 1) abort.abort();
    },
  });
  if (!r.interrupted && job.heldOut) await heldOut(job.heldOut, job.heldOut.round, job.heldOut.trained);
  return r.interrupted;
}

round().then(
  (interrupted) => {
    post({ type: "done", interrupted });
    port.close();
  },
  (err: Error) => {
    post({ type: "failed", message: err.message ?? String(err), ...(err.stack ? { stack: err.stack } : {}) });
    port.close();
  },
);

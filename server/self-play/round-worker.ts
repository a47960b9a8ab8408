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
 */
import { parentPort, workerData } from "node:worker_threads";
import { parseLoraOption } from "../../models/lora-settings.js";
import { RunStore } from "../../store/run-store.js";
import type { GrpoConfig } from "../../trainers/grpo/config.js";
import type { StepMetrics } from "../../trainers/grpo/metrics.js";
import { selfPlayPoints, type SelfPlayEpisode } from "../../trainers/grpo/self-play-points.js";
import { runGrpoSession } from "../../trainers/grpo/session.js";
import { loadScenario } from "../../worlds/registry.js";

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
  readonly config: GrpoConfig;
  readonly title: string;
  readonly runParams?: Record<string, unknown>;
  /**
   * One Int32 the event loop sets to 1 to stop the round. Read between steps: a round's steps are
   * native calls back to back, so a message would wait in this thread's queue until the round ends.
   */
  readonly stop: SharedArrayBuffer;
}

export type FromRound =
  | { readonly type: "start"; readonly runId: string | null; readonly source: string }
  | { readonly type: "step"; readonly metrics: StepMetrics }
  | { readonly type: "done"; readonly interrupted: boolean }
  | { readonly type: "failed"; readonly message: string; readonly stack?: string };

const port = parentPort;
if (!port) throw new Error("server/self-play/round-worker.ts runs as a worker thread (round-thread.ts starts it)");
const job = workerData as RoundJob;
const post = (msg: FromRound) => port.postMessage(msg);
const stop = new Int32Array(job.stop);
const abort = new AbortController();

async function round(): Promise<boolean> {
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
    source,
    config: job.config,
    saveEvery: job.config.steps,
    keep: 1,
    store,
    title: job.title,
    ...(job.runParams ? { runParams: job.runParams } : {}),
    signal: abort.signal,
    onStart: (info) => post({ type: "start", runId: info.runId, source: source.description }),
    onStep: (metrics) => {
      post({ type: "step", metrics });
      // The trainer looks at the signal before each step: set it now, and the next step is not taken.
      if (Atomics.load(stop, 0) === 1) abort.abort();
    },
  });
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

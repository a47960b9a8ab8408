/**
 * The event loop's handle on a self-play round's worker thread (round-worker.ts): it starts the
 * thread, forwards the run's start and each step to the pool, and settles with the outcome. A
 * round that fails, a thread that throws or dies, all reject with an error naming what happened;
 * none of it reaches the server's own loop. Aborting asks the round to end after its current step
 * (with a checkpoint); a thread still busy `graceMs` later is terminated.
 */
import { startModuleWorker } from "../module-worker.js";
import { writeLeaseBuffer } from "../../store/write-fence.js";
import type { StepMetrics } from "../../trainers/grpo/metrics.js";
import type { FromRound, RoundJob } from "./round-worker.js";

export type HeldOutReport = Extract<FromRound, { type: "heldOut" | "heldOutFailed" }>;

export interface RoundHooks {
  /** The round's run began (`startStep`: the steps of the rounds it continues, 0 for a round of its own). */
  readonly onStart?: (info: { runId: string | null; source: string; startStep: number }) => void;
  readonly onStep?: (m: StepMetrics) => void;
  /** A policy's score on the pool's held-out questions (round 0: the starting policy), or why it has none. */
  readonly onHeldOut?: (score: HeldOutReport) => void;
  readonly signal?: AbortSignal;
  /** How long an aborted round may take to reach its next step before its thread is terminated. */
  readonly graceMs?: number;
}

/** How long a round may take, once aborted, before its thread is stopped: one step on a loaded CPU. */
export const ROUND_ABORT_GRACE_MS = 30_000;

/** Runs the round in a new worker thread; resolves with whether it was interrupted. */
export function runRoundThread(job: Omit<RoundJob, "stop" | "lease">, hooks: RoundHooks = {}): Promise<{ interrupted: boolean }> {
  return new Promise((resolve, reject) => {
    const stop = new SharedArrayBuffer(4);
    const lease = writeLeaseBuffer();
    const worker = startModuleWorker("server/self-play/round-worker", { workerData: { ...job, stop, ...(lease ? { lease } : {}) } satisfies RoundJob, name: `self-play round: ${job.title}` });
    let settled = false;
    let terminated = false;
    let grace: NodeJS.Timeout | undefined;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (grace) clearTimeout(grace);
      hooks.signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const onAbort = () => {
      const flag = new Int32Array(stop);
      Atomics.store(flag, 0, 1);
      // A write of the round waiting for the server's lease sleeps on the flag (store/write-fence.ts).
      Atomics.notify(flag, 0);
      grace = setTimeout(() => {
        terminated = true;
        void worker.terminate();
      }, hooks.graceMs ?? ROUND_ABORT_GRACE_MS);
      grace.unref();
    };
    if (hooks.signal?.aborted) onAbort();
    else hooks.signal?.addEventListener("abort", onAbort, { once: true });

    worker.on("message", (msg: FromRound) => {
      try {
        if (msg.type === "start") hooks.onStart?.({ runId: msg.runId, source: msg.source, startStep: msg.startStep });
        else if (msg.type === "step") hooks.onStep?.(msg.metrics);
        else if (msg.type === "heldOut" || msg.type === "heldOutFailed") hooks.onHeldOut?.(msg);
        else if (msg.type === "done") settle(() => resolve({ interrupted: msg.interrupted }));
        else settle(() => reject(Object.assign(new Error(msg.message), msg.stack ? { stack: msg.stack } : {})));
      } catch (err) {
        // A hook's own failure is the round's, not the event loop's.
        settle(() => reject(err as Error));
        void worker.terminate();
      }
    });
    worker.on("error", (err) => settle(() => reject(new Error(`the round's thread failed: ${err.message}`, { cause: err }))));
    worker.on("exit", (code) => {
      if (terminated) settle(() => resolve({ interrupted: true }));
      else settle(() => reject(new Error(`the round's thread exited (code ${code}) before the round ended`)));
    });
  });
}

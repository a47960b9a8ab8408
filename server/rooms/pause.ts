/** Waits `ms`, or less if the room is stopped (the caller checks the signal). */
import { setTimeout as sleep } from "node:timers/promises";

export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    // Aborted.
  }
}

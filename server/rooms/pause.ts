/**
 * Waits `ms`, or less if the room is stopped (the caller checks the signal). Always a turn of the
 * event loop, even for 0 ms: a room whose agents answer synchronously would otherwise play on in
 * promise callbacks alone, and the server would answer nothing else (a looping room with `tickMs`
 * and `pauseMs` 0 held it for good).
 */
import { setImmediate as yieldToLoop, setTimeout as sleep } from "node:timers/promises";

export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) {
    await yieldToLoop();
    return;
  }
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    // Aborted.
  }
}

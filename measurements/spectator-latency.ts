/**
 * How late a watching spectator sees each timestep: the time from when the timestep was due (the
 * previous one's recording plus the room's tick; scripted seats act at once) to the moment the
 * spectator has decoded it. A server whose event loop stalls records its timesteps late, or sends
 * them late; either shows here. Used by measurements/attack-server.ts and the server's tests.
 */
import type { Room as SdkRoom } from "@colyseus/sdk";

export interface LatencyWatch {
  /** Latencies (ms) of the timesteps received since the watch started (clear it to start a new window). */
  readonly values: number[];
  p99(): number;
  max(): number;
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

export function watchLatency(room: SdkRoom, tickMs: number): LatencyWatch {
  const values: number[] = [];
  let prevAt = 0;
  let prevStep = -1;
  room.onStateChange((state) => {
    const timeline = (state as unknown as { timeline: ArrayLike<{ timestep: number; at: number }> }).timeline;
    const last = timeline.length ? timeline[timeline.length - 1] : undefined;
    if (!last || (last.at === prevAt && last.timestep === prevStep)) return;
    const now = Date.now();
    // The first state on joining is not a patch; a new episode's first step follows a pause of its own.
    if (prevAt !== 0 && last.timestep === prevStep + 1) values.push(Math.max(0, now - (prevAt + tickMs)));
    prevAt = last.at;
    prevStep = last.timestep;
  });
  return { values, p99: () => quantile(values, 0.99), max: () => Math.max(...values) };
}

/**
 * How long to wait before retrying a request: the server's own word when it gives one
 * (`retry-after-ms`, OpenAI's; or `retry-after`, seconds or an HTTP date), else exponential
 * backoff with "equal jitter" (half the delay fixed, half drawn from a seeded stream, so that
 * clients retrying together spread out and a run is reproducible).
 */
import { Rng } from "../../worlds/core/rng.js";

export interface BackoffOptions {
  /** Milliseconds before the first retry. */
  readonly initialMs: number;
  readonly maxMs: number;
}

export class Backoff {
  private readonly rng: Rng;

  constructor(
    private readonly opts: BackoffOptions,
    seed: number | string = 0,
  ) {
    this.rng = Rng.seeded(`backoff:${seed}`);
  }

  /** The wait before retry number `retry` (1 for the first). */
  delay(retry: number): number {
    const full = Math.min(this.opts.maxMs, this.opts.initialMs * 2 ** (retry - 1));
    return Math.round(full / 2 + (this.rng.next() * full) / 2);
  }
}

/** The server's requested wait in milliseconds, if its headers give one. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = headers.get("retry-after");
  if (ra === null || ra.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

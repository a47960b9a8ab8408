/**
 * A request rate kept on this side: at most `perMinute` requests start in any minute, evenly
 * spaced, so that a rate-limited endpoint (OpenAI's requests-per-minute tiers) is not driven into
 * 429s that cost a backoff each. Starts are granted in call order.
 */
export class Pacer {
  private next = 0;
  private readonly gapMs: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(perMinute > 0)) throw new Error(`a rate must be positive (got ${perMinute} a minute)`);
    this.gapMs = 60_000 / perMinute;
  }

  /** Milliseconds until this request may start (its start is booked now). */
  book(): number {
    const now = this.now();
    const at = Math.max(now, this.next);
    this.next = at + this.gapMs;
    return at - now;
  }

  /** Waits for this request's turn; resolves early (the caller sees the abort) when `signal` aborts. */
  async wait(signal?: AbortSignal): Promise<void> {
    const ms = this.book();
    if (ms > 0) await sleep(ms, signal);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks which). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The server's limits on what one client may ask for, by key (a client's address, a seat token):
 *
 * - TokenBuckets: a rate with a burst. Each key's bucket holds up to `burst` tokens and refills at
 *   `perSecond`; a request takes one or is refused with how long until one is there.
 * - PenaltyBox: back-off for keys that keep hitting a limit. Each offence blocks the key for twice
 *   as long as the one before (1 s, 2 s, 4 s... up to `maxMs`); a key that stays clean for
 *   `forgetMs` starts again from the shortest block.
 * - Concurrency: at most `max` requests of one key in progress at once.
 *
 * Every state lives in the server, keyed by what the client cannot shed by reconnecting, and
 * takes no timers: idle entries are dropped as new keys arrive, so a flood of keys costs memory
 * only in proportion to the keys still active.
 */

export interface Verdict {
  readonly ok: boolean;
  /** When refused: milliseconds until the key may try again. */
  readonly retryAfterMs: number;
}

const OK: Verdict = { ok: true, retryAfterMs: 0 };

/** Drops entries of `map` that `idle` says may go, once it has grown past `limit` (oldest first). */
function prune<K, V>(map: Map<K, V>, limit: number, idle: (v: V) => boolean): void {
  if (map.size <= limit) return;
  for (const [k, v] of map) {
    if (idle(v)) map.delete(k);
    if (map.size <= limit / 2) return;
  }
}

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly burst: number,
    readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes `cost` tokens from `key`'s bucket, or says how long until it could. */
  take(key: string, cost = 1): Verdict {
    const t = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      prune(this.buckets, 10_000, (x) => x.tokens + ((t - x.at) / 1000) * this.perSecond >= this.burst);
      b = { tokens: this.burst, at: t };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    if (b.tokens >= cost) {
      b.tokens -= cost;
      return OK;
    }
    return { ok: false, retryAfterMs: Math.ceil(((cost - b.tokens) / this.perSecond) * 1000) };
  }
}

export class PenaltyBox {
  private readonly entries = new Map<string, { offences: number; until: number; last: number }>();

  constructor(
    readonly firstMs = 1000,
    readonly maxMs = 5 * 60_000,
    readonly forgetMs = 10 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Blocks each key for the next, longer, back-off; returns how long (ms). */
  block(...keys: string[]): number {
    const t = this.now();
    let longest = 0;
    for (const key of keys) {
      let e = this.entries.get(key);
      if (!e || t - e.last > this.forgetMs) {
        prune(this.entries, 10_000, (x) => t - x.last > this.forgetMs);
        e = { offences: 0, until: 0, last: t };
        this.entries.set(key, e);
      }
      const ms = Math.min(this.maxMs, this.firstMs * 2 ** e.offences);
      e.offences++;
      e.until = Math.max(e.until, t + ms);
      e.last = t;
      longest = Math.max(longest, e.until - t);
    }
    return longest;
  }

  /** Whether any of the keys is blocked now, and for how much longer. */
  check(...keys: string[]): Verdict {
    const t = this.now();
    let wait = 0;
    for (const key of keys) {
      const e = this.entries.get(key);
      if (e && e.until > t) wait = Math.max(wait, e.until - t);
    }
    return wait > 0 ? { ok: false, retryAfterMs: wait } : OK;
  }
}

export class Concurrency {
  private readonly active = new Map<string, number>();

  constructor(readonly max: number) {}

  /** A slot for `key`, or undefined when it has `max` in progress; call the release function once when done. */
  acquire(key: string): (() => void) | undefined {
    const n = this.active.get(key) ?? 0;
    if (n >= this.max) return undefined;
    this.active.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.active.get(key) ?? 1) - 1;
      if (left <= 0) this.active.delete(key);
      else this.active.set(key, left);
    };
  }

  inProgress(key: string): number {
    return this.active.get(key) ?? 0;
  }
}

/**
 * A concurrency limit: at most `max` holders at once, the rest wait in arrival order. A waiter
 * whose signal aborts (its turn's deadline passed) leaves the queue without taking a slot.
 */
export class Limiter {
  private active = 0;
  private readonly queue: { grant: () => void; fail: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void }[] = [];
  /** The most holders there ever were at once. */
  peak = 0;

  constructor(readonly max: number) {}

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
    if (this.active < this.max) return Promise.resolve(this.take());
    return new Promise((resolve, reject) => {
      const entry: (typeof this.queue)[number] = {
        grant: () => resolve(this.take()),
        fail: reject,
        ...(signal ? { signal } : {}),
      };
      if (signal) {
        entry.onAbort = () => {
          const i = this.queue.indexOf(entry);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason ?? new Error("aborted"));
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.queue.push(entry);
    });
  }

  private take(): () => void {
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const next = this.queue.shift();
      if (next) {
        if (next.signal && next.onAbort) next.signal.removeEventListener("abort", next.onAbort);
        next.grant();
      }
    };
  }
}

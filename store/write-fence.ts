/**
 * Whether this process still holds its place among the processes that write one store (a group of
 * servers, docs/scale.md), asked before each write of what they share: a run's episode log, the
 * registries, a self-play pool's files and checkpoints. A process of a group holds its place for a
 * while after each heartbeat that Redis answered (a lease: the group declares it dead only once its
 * heartbeat key expired, later than the lease ends); one paused past its lease (SIGSTOP, a frozen
 * VM, a network cut) may have been declared dead and its rooms recreated elsewhere, so when it wakes
 * it writes nothing until a new heartbeat says it is still a member, and exits if it is not.
 *
 * The lease is read on the process's clocks alone, synchronously, so a write checks it in the same
 * step as it writes, before anything that woke with it could learn otherwise: the check needs no
 * answer from Redis. It lives in shared memory, so a worker thread (a self-play round) checks the
 * same lease as the thread that renews it. A process alone (no group), and every command that
 * opens a store without a server, installs no fence: every write passes.
 */

/** A write refused: this process is not known to hold its place in the group now. */
export class PlaceLost extends Error {
  constructor(what: string, why: string) {
    super(`${what}: not written: ${why}`);
    this.name = "PlaceLost";
  }
}

const MONO_NS = 0;
const WALL_MS = 1;
const REVOKED = 2;

/**
 * The lease, in shared memory: until when this process holds its place, on both the monotonic clock
 * (process.hrtime, the same in every thread, running on while the process is stopped) and the wall
 * clock (which a VM resumed after a freeze may find moved on while its monotonic clock did not); and
 * whether it was revoked for good (the process was declared dead).
 */
export class WriteLease {
  private readonly cells: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(3 * 8)) {
    this.cells = new BigInt64Array(buffer);
  }

  /** Held for `ms` from `sent` (when the heartbeat that Redis answered was sent, on both clocks). */
  extend(sent: { mono: bigint; wall: number }, ms: number): void {
    Atomics.store(this.cells, MONO_NS, sent.mono + BigInt(Math.round(ms * 1e6)));
    Atomics.store(this.cells, WALL_MS, BigInt(Math.round(sent.wall + ms)));
  }

  revoke(): void {
    Atomics.store(this.cells, REVOKED, 1n);
  }

  get revoked(): boolean {
    return Atomics.load(this.cells, REVOKED) === 1n;
  }

  holds(): boolean {
    return !this.revoked && process.hrtime.bigint() < Atomics.load(this.cells, MONO_NS) && BigInt(Date.now()) < Atomics.load(this.cells, WALL_MS);
  }
}

/** The two clocks now, as a heartbeat is sent. */
export function clocksNow(): { mono: bigint; wall: number } {
  return { mono: process.hrtime.bigint(), wall: Date.now() };
}

/** What a process's writes ask. */
export interface WriteFence {
  readonly lease: WriteLease;
  /** Throws PlaceLost unless the place is held now (for writes that cannot wait: called just before them). */
  check(what: string): void;
  /** Resolves once the place is held (now, or after the next heartbeat answered); rejects with PlaceLost if it is lost. */
  held(): Promise<void>;
}

let fence: WriteFence | undefined;

/** This process's fence from now on (undefined: none, every write passes). */
export function fenceWrites(f: WriteFence | undefined): void {
  fence = f;
}

/** Throws PlaceLost when this process is not known to hold its place now; `what` names the write. */
export function checkWrite(what: string): void {
  fence?.check(what);
}

/** Resolves once this process holds its place (at once without a fence). */
export function writesHeld(): Promise<void> {
  return fence ? fence.held() : Promise.resolve();
}

/** The lease's shared memory, for a worker thread to fence its writes with (fenceWithLease); undefined without a fence. */
export function writeLeaseBuffer(): SharedArrayBuffer | undefined {
  return fence?.lease.buffer;
}

/** How often a thread that only reads the lease looks at it again while it waits. */
const POLL_MS = 100;

/**
 * Fences this thread's writes with a lease another thread renews (a worker thread: the server's
 * lease). A write that finds the lease lapsed blocks this thread until it is renewed (a thread of
 * its own may wait: the server's next heartbeat, sent at once, decides), for at most `waitMs`, and
 * is refused once it is revoked (the process was declared dead, and exits).
 */
export function fenceWithLease(buffer: SharedArrayBuffer, waitMs = Infinity): void {
  const lease = new WriteLease(buffer);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const lost = (what: string) => new PlaceLost(what, "this process may have been declared dead by its group (no heartbeat answered within its lease)");
  fenceWrites({
    lease,
    check(what) {
      const end = Date.now() + waitMs;
      while (!lease.holds()) {
        if (lease.revoked || Date.now() >= end) throw lost(what);
        Atomics.wait(sleeper, 0, 0, Math.min(POLL_MS, end - Date.now()));
      }
    },
    held: () =>
      new Promise<void>((done, fail) => {
        const look = () => (lease.holds() ? done() : lease.revoked ? fail(lost("a write")) : setTimeout(look, POLL_MS));
        look();
      }),
  });
}

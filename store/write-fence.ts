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

import { isMainThread } from "node:worker_threads";

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
 *
 * The monotonic clock measures the lease; the wall clock, which NTP may also step forward, only
 * catches a freeze that the monotonic clock missed, and is given longer (`wallMs`: the heartbeat
 * gives it most of the margin between the lease and the key's expiry): a step forward refuses
 * writes only when it is larger than what the lease had left plus that margin, and a VM resumed
 * from a freeze still writes nothing once its group could have declared it dead.
 */
export class WriteLease {
  private readonly cells: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(3 * 8)) {
    this.cells = new BigInt64Array(buffer);
  }

  /** Held for `ms` from `sent` (when the heartbeat that Redis answered was sent, on both clocks), `wallMs` on the wall clock. */
  extend(sent: { mono: bigint; wall: number }, ms: number, wallMs = ms): void {
    Atomics.store(this.cells, MONO_NS, sent.mono + BigInt(Math.round(ms * 1e6)));
    Atomics.store(this.cells, WALL_MS, BigInt(Math.round(sent.wall + wallMs)));
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

/**
 * This process's fence from now on (undefined: none, every write passes). One at a time: a second
 * server of the same process would otherwise fence the first one's writes with its own lease.
 */
export function fenceWrites(f: WriteFence | undefined): void {
  if (f && fence && f !== fence) throw new Error("a write fence is installed already: one server of a group per process");
  fence = f;
}

/** Whether this process's writes are fenced (a server of a group): a process alone writes as it always did. */
export function fenced(): boolean {
  return fence !== undefined;
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
 * How long a worker thread's write waits for the lease by default: the server's heartbeats renew
 * it within seconds of Redis answering again, so this only ends a wait for a Redis gone for good
 * (the write is refused, and the round fails), never one for a heartbeat late or a Redis restarting.
 */
export const WORKER_WAIT_MS = 10 * 60_000;

export interface LeaseWaitOptions {
  /** The longest a write waits for the lease to be renewed (WORKER_WAIT_MS by default). */
  readonly waitMs?: number;
  /**
   * One Int32 the thread's owner sets to non-zero (and notifies) when the server stops: a write
   * waiting for the lease is refused then rather than holding up the server's shutdown.
   */
  readonly stop?: SharedArrayBuffer;
}

/**
 * Fences this worker thread's writes with a lease another thread renews (the server's lease). A
 * write that finds the lease lapsed blocks this thread until it is renewed (a thread of its own may
 * wait: the server's next heartbeat, sent at once, decides), for at most `waitMs` and never past
 * `stop`; it is refused once the lease is revoked (the process was declared dead, and exits).
 * Not on the main thread: blocking it would block the heartbeat that renews the lease.
 */
export function fenceWithLease(buffer: SharedArrayBuffer, opts: LeaseWaitOptions = {}): void {
  if (isMainThread) throw new Error("fenceWithLease is for worker threads: the main thread's fence is the group's (server/group/fence.ts)");
  const lease = new WriteLease(buffer);
  const waitMs = opts.waitMs ?? WORKER_WAIT_MS;
  // Slept on: the stop flag when there is one (its owner notifies it), else a cell nobody wakes.
  const sleeper = new Int32Array(opts.stop ?? new SharedArrayBuffer(4));
  const refused = (what: string): PlaceLost | undefined => {
    if (lease.revoked) return new PlaceLost(what, "this process was declared dead by its group");
    if (Atomics.load(sleeper, 0) !== 0) return new PlaceLost(what, "the server is stopping and its lease has lapsed");
    return undefined;
  };
  const late = (what: string) => new PlaceLost(what, `no heartbeat of this process was answered for ${Math.round(waitMs / 1000)} s past its lease`);
  fenceWrites({
    lease,
    check(what) {
      const end = Date.now() + waitMs;
      while (!lease.holds()) {
        const no = refused(what) ?? (Date.now() >= end ? late(what) : undefined);
        if (no) throw no;
        Atomics.wait(sleeper, 0, 0, Math.min(POLL_MS, end - Date.now()));
      }
    },
    held: () =>
      new Promise<void>((done, fail) => {
        const end = Date.now() + waitMs;
        const look = () => {
          if (lease.holds()) return done();
          const no = refused("a write") ?? (Date.now() >= end ? late("a write") : undefined);
          if (no) fail(no);
          else setTimeout(look, POLL_MS);
        };
        look();
      }),
  });
}

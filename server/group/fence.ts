/**
 * This process's fencing in the group: what it writes into what the group shares, Redis and the
 * store, only while it holds its place. A process declared dead (paused past its heartbeat's life:
 * SIGSTOP, a frozen VM, a network cut) has had its rooms recreated by another process, which set
 * its tombstone in Redis (process-heartbeat.ts) before touching them. When it wakes, its event loop
 * runs what piled up (clients that left, a room's timers, Colyseus's sweep, a self-play round's
 * thread) before its first heartbeat can learn that it is dead. Two guards:
 *
 * - Redis: every write of this process into the group's keys (Colyseus's driver and presence,
 *   publications included, the per-address counts, the trainer leases, socket.io's adapter) is one
 *   Lua step that checks the tombstone first (`run`, `script`): once it is set, nothing lands. Each
 *   step is sent by its SHA (EVALSHA), its text only when Redis lacks it (`evalScript`).
 * - The store and this process's clocks: the write lease (store/write-fence.ts), held for a while
 *   after each heartbeat that Redis answered and checked synchronously by every write of the store
 *   (an episode log's line, a registry's rename, a pool's file, a round's checkpoint). A process
 *   that wakes past its lease writes nothing until a heartbeat renews it; a disk write cannot wait
 *   for an answer from Redis, and this check needs none.
 *
 * The first write refused, or the heartbeat finding the tombstone, trips the fence: the process
 * stops (`onTrip`, server/main.ts).
 *
 * A server stopping while Redis does not answer gives Redis up (`giveUpRedis`, process-group.ts):
 * its Redis commands waiting on the connection end unanswered, new ones are not sent, and its
 * store writes no longer wait for a heartbeat, so that the shutdown ends without Redis.
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { PlaceLost, WriteLease, type WriteFence } from "../../store/write-fence.js";

/** Run before the guarded commands: KEYS[1] is the tombstone. */
const CHECK = `local taker = redis.call("get", KEYS[1])
if taker then return {0, taker} end
`;

// ARGV: the commands, each as its length then its words ("3", "set", KEY, VALUE, "3", "publish"...).
// {1, their replies} when run; {0, the taker's id} when this process was declared dead.
const FENCED_COMMANDS = `${CHECK}local replies, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  replies[#replies + 1] = redis.call(unpack(ARGV, i + 1, i + n))
  i = i + n + 1
end
return {1, replies}`;

const GAVE_UP = "the server is stopping, and no heartbeat renewed its lease in the time it was given";

/** A fenced Lua step of `script`, by its body (so that the text of each is made once). */
const STEPS = new Map<string, string>();
/** The ioredis command each Lua step is defined as on a connection, by its text. */
const COMMANDS = new Map<string, string>();

/**
 * Runs `lua` on `redis` as a command defined on it (ioredis' defineCommand): EVALSHA, the script's
 * text sent only where Redis lacks it (the connection's first use of it, as after a Redis restart,
 * which empties its script cache; EVAL again on NOSCRIPT, after a SCRIPT FLUSH). The same step
 * sent as EVAL would carry its text with every write.
 */
function evalScript(redis: Redis, lua: string, numKeys: number, args: readonly (string | Buffer)[]): Promise<[number, unknown]> {
  let name = COMMANDS.get(lua);
  if (name === undefined) COMMANDS.set(lua, (name = `fenced_${createHash("sha1").update(lua).digest("hex")}`));
  if (!(name in redis)) redis.defineCommand(name, { lua });
  return (redis as unknown as Record<string, (...a: unknown[]) => Promise<[number, unknown]>>)[name]!(numKeys, ...args);
}

export type FencedCommand = readonly (string | Buffer)[];

/** A write waiting for the lease: woken by each renewal that holds, failed when the place is lost or the wait given up. */
interface Waiter {
  readonly done: () => void;
  readonly fail: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

export class Fence implements WriteFence {
  readonly lease = new WriteLease();
  private taker: string | undefined;
  /** False until the first heartbeat: the lease counts from then (the process was no member before). */
  private armed = false;
  private readonly listeners: ((by: string) => void)[] = [];
  private readonly waiting = new Set<Waiter>();
  private lapsed: (() => void) | undefined;
  /** Why writes no longer wait for the lease (the heartbeat stopped), once they do not. */
  private ended: string | undefined;
  /** Until when (performance.now()) a write waits for the lease: for ever, but once the server is stopping (stopping()). */
  private giveUpAt = Infinity;
  /** Why this process gave Redis up (giveUpRedis), once it has. */
  private redisGone: string | undefined;
  /** Redis commands sent and not answered yet (send): each ends, not written, when Redis is given up. */
  private readonly inFlight = new Set<() => void>();

  /** `tombstone`: this process's tombstone key (tombstoneKey in process-heartbeat.ts). */
  constructor(readonly tombstone: string) {}

  /** Whether this process is known to have been declared dead. */
  get tripped(): boolean {
    return this.taker !== undefined;
  }

  /** `fn` is called once, with the taker's id, when this process learns that it was declared dead. */
  onTrip(fn: (by: string) => void): void {
    if (this.taker !== undefined) fn(this.taker);
    else this.listeners.push(fn);
  }

  /** This process was declared dead, `by` taking its rooms over (its heartbeat found out, or a write). */
  trip(by: string): void {
    if (this.taker !== undefined) return;
    this.taker = by;
    this.lease.revoke();
    for (const fn of this.listeners.splice(0)) fn(by);
    this.failWaiting(this.deadWhy());
  }

  /**
   * A heartbeat sent at `sent` was answered: the place is held for `ms` from then (`wallMs` on the
   * wall clock: WriteLease). A reply that
   * comes later than that (the event loop was blocked, Redis was away) renews a lease already
   * over: the writes waiting go on waiting, and the heartbeat is asked to beat again at once.
   */
  renewed(sent: { mono: bigint; wall: number }, ms: number, wallMs = ms): void {
    if (this.tripped) return;
    this.lease.extend(sent, ms, wallMs);
    this.armed = true;
    if (!this.lease.holds()) return this.lapsed?.();
    for (const w of this.takeWaiting()) w.done();
  }

  /** `fn` (the heartbeat) is asked to beat at once when a write finds the lease lapsed. */
  onLapse(fn: () => void): void {
    this.lapsed = fn;
  }

  /**
   * The server is stopping: writes that find the lease lapsed wait for a heartbeat for `ms` from
   * now in all (those waiting already too), then are refused. With Redis away, a shutdown ends
   * rather than waiting for it; what the rooms did not write, their next home plays again.
   */
  stopping(ms: number): void {
    this.giveUpAt = Math.min(this.giveUpAt, performance.now() + ms);
    for (const w of this.waiting) this.giveUpLater(w);
  }

  /** The heartbeat stopped: no renewal will come, so no write waits for one any more. */
  stopped(): void {
    this.ended ??= "its heartbeat stopped (the server is stopping)";
    this.failWaiting(this.ended);
  }

  /**
   * The server is stopping and Redis has not answered for the time it was given: this process goes
   * on without it. Its commands waiting for Redis end unanswered, as not written (their connections
   * queue them until Redis comes back: for ever, as far as a shutdown is concerned; one already
   * sent may still land if that Redis comes back, its tombstone checked there first), later ones
   * are not sent, and writes waiting for the lease are refused (no heartbeat will renew it). What
   * its rooms did not write, their next home plays again, as after a kill.
   */
  giveUpRedis(why: string): void {
    if (this.redisGone !== undefined) return;
    this.redisGone = why;
    for (const end of this.inFlight) end();
    this.inFlight.clear();
    this.ended ??= why;
    this.failWaiting(why);
  }

  /** Why Redis was given up (giveUpRedis), if it was. */
  get redisGivenUp(): string | undefined {
    return this.redisGone;
  }

  /**
   * `command` (one of this process's Redis commands), unless Redis was given up (giveUpRedis): then
   * undefined, at once or as soon as it is given up while the command waits on its connection.
   */
  send<T>(command: () => Promise<T>): Promise<T | undefined> {
    if (this.redisGone !== undefined) return Promise.resolve(undefined);
    return new Promise<T | undefined>((done, fail) => {
      const end = () => done(undefined);
      this.inFlight.add(end);
      const settled = () => this.inFlight.delete(end);
      command().then(
        (reply) => (settled(), done(reply)),
        (err: unknown) => (settled(), this.redisGone === undefined ? fail(err) : done(undefined)),
      );
    });
  }

  /** Whether this process holds its place now (on its own clocks: no question to Redis). */
  holds(): boolean {
    return !this.tripped && (!this.armed || this.lease.holds());
  }

  check(what: string): void {
    if (this.holds()) return;
    this.lapsed?.();
    throw new PlaceLost(what, this.tripped ? this.deadWhy() : "no heartbeat of this process was answered within its lease: it may have been declared dead by its group");
  }

  /**
   * Resolves once the place is held: at once, or once a heartbeat renews the lease (one is sent
   * at once). Rejects with PlaceLost when the process was declared dead, its heartbeat stopped, or
   * (the server stopping) no heartbeat renewed it in time.
   */
  async held(): Promise<void> {
    // A waiter is woken only by a renewal that holds, but whatever ran before it resumed may have taken long enough for the lease to lapse again.
    while (!this.holds()) {
      if (this.tripped) throw new PlaceLost("a write", this.deadWhy());
      if (this.ended) throw new PlaceLost("a write", this.ended);
      if (performance.now() >= this.giveUpAt) throw new PlaceLost("a write", GAVE_UP);
      const wait = new Promise<void>((done, fail) => {
        const w: Waiter = { done, fail };
        this.waiting.add(w);
        if (this.giveUpAt !== Infinity) this.giveUpLater(w);
      });
      this.lapsed?.();
      await wait;
    }
  }

  /**
   * Runs `commands` on `redis` in one step, unless this process was declared dead (or gave Redis
   * up): then undefined, and nothing is written. Past its lease, it first waits for a heartbeat to renew it.
   */
  async run(redis: Redis, ...commands: FencedCommand[]): Promise<unknown[] | undefined> {
    if (!(await this.heldNow())) return undefined;
    const argv = commands.flatMap((c) => [String(c.length), ...c]);
    return this.settle(await this.send(() => evalScript(redis, FENCED_COMMANDS, 1, [this.tombstone, ...argv]))) as unknown[] | undefined;
  }

  /** One command, fenced (run); its reply. */
  async write(redis: Redis, ...command: FencedCommand): Promise<unknown> {
    return (await this.run(redis, command))?.[0];
  }

  /**
   * A Lua step of this process's own, fenced: `body` runs only if this process's tombstone is not
   * set; its KEYS are `keys` from KEYS[2] on (KEYS[1] is the tombstone). Its reply, or undefined.
   */
  async script(redis: Redis, body: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    if (!(await this.heldNow())) return undefined;
    let lua = STEPS.get(body);
    if (lua === undefined) STEPS.set(body, (lua = `${CHECK}return {1, (function() ${body} end)()}`));
    return this.settle(await this.send(() => evalScript(redis, lua, 1 + keys.length, [this.tombstone, ...keys, ...args])));
  }

  private async heldNow(): Promise<boolean> {
    if (this.tripped) return false;
    if (this.holds()) return true;
    return this.held().then(
      () => true,
      () => false,
    );
  }

  private deadWhy(): string {
    return `this process was declared dead by its group; its rooms are recreated by ${this.taker}`;
  }

  private takeWaiting(): Waiter[] {
    const all = [...this.waiting];
    this.waiting.clear();
    for (const w of all) clearTimeout(w.timer);
    return all;
  }

  private failWaiting(why: string): void {
    for (const w of this.takeWaiting()) w.fail(new PlaceLost("a write", why));
  }

  private giveUpLater(w: Waiter): void {
    if (w.timer) return;
    w.timer = setTimeout(
      () => {
        if (this.waiting.delete(w)) w.fail(new PlaceLost("a write", GAVE_UP));
      },
      Math.max(0, this.giveUpAt - performance.now()),
    );
    w.timer.unref();
  }

  /** A fenced step's reply: what its commands answered; undefined when nothing was written (declared dead: the fence trips; Redis given up). */
  private settle(answer: [number, unknown] | undefined): unknown {
    if (answer === undefined) return undefined;
    const [written, reply] = answer;
    if (written === 1) return reply;
    this.trip(String(reply));
    return undefined;
  }
}

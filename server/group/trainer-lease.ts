/**
 * A lease in the group's Redis that says which process trains a self-play pool: one key per pool,
 * holding the process's id, with an expiry. The holder renews it (every third of its life); a
 * holder that dies stops renewing, the key expires, and the next process to ask takes it over.
 * Renewing and releasing check that the key is still this process's (a Lua script: one atomic
 * step in Redis), so a holder that lost its lease (Redis restarted empty, or a pause longer than
 * the lease) never extends or deletes the lease of the process that took it. Every step is fenced
 * (fence.ts): a process declared dead takes no lease, even one free when it wakes.
 */
import type { Redis } from "ioredis";
import type { Fence } from "./fence.js";
import { KEY_PREFIX } from "./redis.js";

/** How long a lease lives without renewal: a dead trainer's pool is taken over within this. */
export const LEASE_MS = 6000;

// Fenced (fence.ts): KEYS[2] is the lease. ARGV: this process, the lease's life in ms. 1: held.
// Taking a lease that is already this process's renews it: a renewal refused by an error left the
// key its own, and refusing it would leave the pool without a trainer until the key expired.
const TAKE = `local holder = redis.call("get", KEYS[2])
if holder == ARGV[1] then return redis.call("pexpire", KEYS[2], ARGV[2]) end
if holder then return 0 end
redis.call("set", KEYS[2], ARGV[1], "PX", ARGV[2])
return 1`;
const RENEW = `if redis.call("get", KEYS[2]) == ARGV[1] then return redis.call("pexpire", KEYS[2], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("get", KEYS[2]) == ARGV[1] then return redis.call("del", KEYS[2]) else return 0 end`;

export class TrainerLease {
  private held = false;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** A step (taking or renewing) waiting for Redis's answer. */
  private asking = false;
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    private readonly fence: Fence,
    pool: string,
    /** This process (Colyseus's process id). */
    private readonly holder: string,
    /** Called when this process gains (true) or loses (false) the lease. */
    private readonly changed: (held: boolean) => void,
    private readonly leaseMs = LEASE_MS,
  ) {
    this.key = `${KEY_PREFIX}selfplay:${pool}:trainer`;
    this.timer = setInterval(() => void this.tick(), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
    void this.tick();
  }

  /** Whether this process holds the lease (as of its last renewal). */
  get holds(): boolean {
    return this.held;
  }

  /** The process holding the lease now, if any. */
  async holderNow(): Promise<string | undefined> {
    return (await this.redis.get(this.key)) ?? undefined;
  }

  private async tick(): Promise<void> {
    // One step at a time: while Redis is away (restarting), the steps of several ticks would wait
    // on the connection, each chosen before the others' answers, and run in a row once it is
    // back: a process taking a lease lost with Redis's data would take it, then hear its next
    // TAKE refused and believe it lost it, its key standing with no trainer until it expired.
    if (this.closed || this.asking) return;
    this.asking = true;
    let held: boolean;
    try {
      held = (await this.fence.script(this.redis, this.held ? RENEW : TAKE, [this.key], [this.holder, String(this.leaseMs)])) === 1;
    } catch {
      // Redis away: the lease cannot be renewed, so it is not ours to trust (it expires there meanwhile).
      held = false;
    } finally {
      this.asking = false;
    }
    if (this.closed || held === this.held) return;
    this.held = held;
    this.changed(held);
  }

  /** Gives the lease up (the pool closes here): another process may take it at once. */
  async release(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    if (!this.held) return;
    this.held = false;
    await this.fence.script(this.redis, RELEASE, [this.key], [this.holder]).catch(() => undefined);
  }
}

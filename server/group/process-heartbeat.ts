/**
 * Which processes of the group are alive, wherever they run: each process refreshes a key of its
 * own in Redis (`socialworld:process:<host>/<pid>/<start>:alive`, expiring after HEARTBEAT_TTL_MS,
 * refreshed every HEARTBEAT_MS) and is named in the group's members (a hash). A member whose key
 * expired is dead, on whatever machine it ran: a pid tells that only on its own machine
 * (store/owner.ts), so this is how the processes of other machines learn it; and a pid says only
 * that a process exists, so this is also how those of its own machine learn that it stopped
 * answering (paused, its event loop blocked), where a pid that is gone tells them sooner.
 *
 * The rooms of a dead member are recreated once, by one survivor: the first to set the member's
 * tombstone (`...:dead`, holding the taker's id) takes them over; another survivor may take the
 * tombstone only if its taker died in turn (its own key expired) before finishing. The tombstone
 * also fences the dead member: a process that was only paused (SIGSTOP, a VM frozen, a network
 * cut) finds it at its next heartbeat, knows that its rooms now live elsewhere, and must stop
 * without writing anything; until it does, the tombstone refuses its writes to Redis (fence.ts).
 * Each heartbeat answered also renews the process's write lease (store/write-fence.ts) for
 * LEASE_SHARE of the key's life, counted from when it was sent: the key outlives the lease, so a
 * process is never declared dead while it still writes its store, and one that wakes past its
 * lease writes nothing before a heartbeat renews it.
 *
 * Two ways a tombstone could mislead, closed here. A Redis restarted from a snapshot (persistence
 * on) holds keys as they were when it was saved, some alive keys expired that were renewed since:
 * a process takes others over only once its own heartbeat has been answered without a gap for a
 * whole key's life (`steady`), by when every live member has beaten again. And a Redis restarted
 * without persistence has lost the tombstones: a process whose lease lapsed (paused) asks the
 * store, whose room registry is the group's durable record of a take-over (each room's owner),
 * before it beats again (`takenOver`); a room of its own registered to another process means it
 * was declared dead, and it stops. Membership tells "expired" from "never here": after a Redis
 * restart without persistence the members are gone too, and nobody is declared dead until the live
 * ones have named themselves again.
 */
import type { Redis } from "ioredis";
import { ownerKey, thisProcess, type Owner } from "../../store/owner.js";
import { clocksNow } from "../../store/write-fence.js";
import type { Fence } from "./fence.js";
import { KEY_PREFIX } from "./redis.js";

export const HEARTBEAT_MS = 2000;
/** A process silent this long is dead: its rooms are recreated elsewhere within about this. */
export const HEARTBEAT_TTL_MS = 10_000;
/**
 * The share of its key's life a heartbeat renews the write lease for. The rest is the margin
 * between the lease's end, on this machine's clocks, and the key's expiry, on Redis's: clocks that
 * run at rates a fifth apart over ten seconds are broken clocks.
 */
const LEASE_SHARE = 0.8;
/**
 * The share of its key's life the wall clock is given (WriteLease in store/write-fence.ts): it
 * only catches a frozen VM whose monotonic clock stood still, so it refuses writes halfway between
 * the lease's end and the key's expiry, and an NTP step forward refuses them later than it would
 * at the lease's end.
 */
const WALL_LEASE_SHARE = 0.9;
/** How long a tombstone is kept (a paused process that wakes later than this is not fenced). */
const TOMBSTONE_S = 7 * 24 * 3600;

const MEMBERS = `${KEY_PREFIX}processes`;
const PROCESS = `${KEY_PREFIX}process:`;
const ALIVE = ":alive";
const DEAD = ":dead";

// KEYS: alive, dead, members. ARGV: id, ttl ms, Colyseus's process id. 0: fenced (declared dead), 1: refreshed.
const BEAT = `
if redis.call("exists", KEYS[2]) == 1 then return 0 end
redis.call("set", KEYS[1], "1", "PX", ARGV[2])
redis.call("hset", KEYS[3], ARGV[1], ARGV[3])
return 1`;

// Fenced (fence.ts: KEYS[1], the taker's own tombstone). KEYS: the member's alive key, its tombstone, members.
// ARGV: member id, taker id, prefix, alive suffix, tombstone ttl s. 1: this process takes the member's rooms over.
const TAKE_OVER = `
if redis.call("hexists", KEYS[4], ARGV[1]) == 0 then return 0 end
if redis.call("exists", KEYS[2]) == 1 then return 0 end
local taker = redis.call("get", KEYS[3])
if taker and taker ~= ARGV[2] and redis.call("exists", ARGV[3] .. taker .. ARGV[4]) == 1 then return 0 end
redis.call("set", KEYS[3], ARGV[2], "EX", ARGV[5])
return 1`;

/** The tombstone of the process `id` (ownerKey): set by its taker once it is declared dead (this process's: fence.ts). */
export function tombstoneKey(id: string): string {
  return PROCESS + id + DEAD;
}

/** Colyseus's ids of the group's members (live, or dead and not yet taken over). */
export async function groupProcessIds(redis: Redis): Promise<string[]> {
  return redis.hvals(MEMBERS);
}

export interface HeartbeatOptions {
  readonly everyMs?: number;
  readonly ttlMs?: number;
  /**
   * The process that took this one over, as the store records it (a room this process plays,
   * registered to another: PersistedRooms.takenBy), asked before a heartbeat that follows a lapsed
   * lease; undefined when none did.
   */
  readonly takenOver?: () => string | undefined;
}

export class ProcessHeartbeat {
  readonly id = ownerKey(thisProcess());
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  /** A beat waiting on Redis (away: commands wait for it to come back) is not doubled... */
  private beating = false;
  /** ...but one asked for meanwhile (its answer came too late to renew the lease) follows it at once. */
  private again = false;
  private readonly leaseMs: number;
  private readonly wallLeaseMs: number;
  /** When the first heartbeat of the current run of answered ones, none further than a lease apart, was sent; and the last. */
  private steadySince: bigint | undefined;
  private lastAnswered: bigint | undefined;

  private constructor(
    private readonly redis: Redis,
    /** Colyseus's id of this process (its room listings name it). */
    private readonly processId: string,
    private readonly fence: Fence,
    private readonly everyMs: number,
    private readonly ttlMs: number,
    private readonly takenOver: (() => string | undefined) | undefined,
  ) {
    this.leaseMs = Math.floor(ttlMs * LEASE_SHARE);
    this.wallLeaseMs = Math.floor(ttlMs * WALL_LEASE_SHARE);
    this.timer = setInterval(() => this.beatNow(), everyMs);
    this.timer.unref();
    fence.onLapse(() => this.beatNow());
  }

  /**
   * Names this process in the group and keeps it alive, renewing `fence`'s lease with each beat
   * answered (and tripping it when declared dead); resolves after the first beat (before any room
   * is registered).
   */
  static async start(redis: Redis, processId: string, fence: Fence, opts: HeartbeatOptions = {}): Promise<ProcessHeartbeat> {
    const hb = new ProcessHeartbeat(redis, processId, fence, opts.everyMs ?? HEARTBEAT_MS, opts.ttlMs ?? HEARTBEAT_TTL_MS, opts.takenOver);
    await hb.beat();
    return hb;
  }

  /**
   * Beats now, or as soon as the beat waiting on Redis is answered (a write that found the lease
   * lapsed asks this, and the fence when an answer came too late to renew it).
   */
  beatNow(): void {
    if (this.beating) {
      this.again = true;
      return;
    }
    this.beating = true;
    this.again = false;
    void this.beat()
      .catch(() => {
        // Redis away: the run of answered beats is broken (see steady).
        this.steadySince = undefined;
      })
      .finally(() => {
        this.beating = false;
        if (this.again) this.beatNow();
      });
  }

  private async beat(): Promise<void> {
    if (this.stopped || this.fence.tripped) return;
    // Past its lease, this process may have been declared dead, and the tombstone saying so lost with a Redis restarted empty.
    if (!this.fence.holds()) {
      const by = this.takenOver?.();
      if (by) return this.fenced(by);
    }
    const sent = clocksNow();
    const ok = await this.redis.eval(BEAT, 3, PROCESS + this.id + ALIVE, tombstoneKey(this.id), MEMBERS, this.id, String(this.ttlMs), this.processId);
    if (this.stopped) return;
    if (ok !== 1) return this.fenced((await this.redis.get(tombstoneKey(this.id)).catch(() => null)) ?? "another process");
    if (this.lastAnswered === undefined || this.steadySince === undefined || sent.mono - this.lastAnswered > BigInt(this.leaseMs) * 1_000_000n) this.steadySince = sent.mono;
    this.lastAnswered = sent.mono;
    this.fence.renewed(sent, this.leaseMs, this.wallLeaseMs);
  }

  private fenced(by: string): void {
    clearInterval(this.timer);
    this.fence.trip(by);
  }

  /**
   * Whether this process's heartbeats have been answered, none further than a lease apart, for a
   * whole key's life: then every member that was alive meanwhile has beaten too, and a key that
   * expired is a member that stopped, not a Redis that lost or rolled back its keys.
   */
  private get steady(): boolean {
    return this.steadySince !== undefined && this.lastAnswered !== undefined && this.lastAnswered - this.steadySince >= BigInt(this.ttlMs) * 1_000_000n;
  }

  /**
   * Of these owners, the members whose heartbeat stopped and whose rooms this process now takes
   * over (one taker per dead process), on any machine, this one included.
   */
  async takeOver(owners: readonly Owner[]): Promise<Owner[]> {
    if (this.stopped || this.fence.tripped || !this.steady) return [];
    const taken: Owner[] = [];
    const seen = new Set<string>([this.id]);
    for (const owner of owners) {
      const id = ownerKey(owner);
      if (seen.has(id)) continue;
      seen.add(id);
      const got = await this.fence.script(this.redis, TAKE_OVER, [PROCESS + id + ALIVE, tombstoneKey(id), MEMBERS], [id, this.id, PROCESS, ALIVE, String(TOMBSTONE_S)]);
      if (got === 1) taken.push(owner);
    }
    return taken;
  }

  /**
   * The rooms of these dead owners are claimed by this process: they leave the members (their
   * tombstones stay, to fence them). Returns Colyseus's process ids of those that had one.
   */
  async tookOver(owners: readonly Owner[]): Promise<string[]> {
    const ids = [...new Set(owners.map(ownerKey))];
    if (!ids.length) return [];
    const processIds = await this.redis.hmget(MEMBERS, ...ids);
    await this.fence.write(this.redis, "hdel", MEMBERS, ...ids);
    return processIds.filter((p): p is string => typeof p === "string" && p !== this.processId);
  }

  /**
   * This process stops: its key goes at once, so that the processes of other machines take its
   * rooms over now (as those of its own machine do when its pid is gone), not a TTL later; unless
   * it gave Redis up (fence.ts): then they take them over once the key expires.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // No renewal comes any more: a write still waiting for one is refused rather than waiting for ever.
    this.fence.stopped();
    if (!this.fence.tripped) await this.fence.send(() => this.redis.del(PROCESS + this.id + ALIVE)).catch(() => undefined);
  }
}

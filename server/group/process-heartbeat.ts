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
 * without writing anything (`onFenced`); until it does, the tombstone refuses its writes to the
 * group's hashes (fence.ts). Membership tells "expired" from "never here": after a
 * Redis restart without persistence the members are gone too, and nobody is declared dead until
 * the live ones have named themselves again.
 */
import type { Redis } from "ioredis";
import { ownerKey, thisProcess, type Owner } from "../../store/owner.js";
import { KEY_PREFIX } from "./redis.js";

export const HEARTBEAT_MS = 2000;
/** A process silent this long is dead: its rooms are recreated elsewhere within about this. */
export const HEARTBEAT_TTL_MS = 10_000;
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

// KEYS: the member's alive key, its tombstone, members. ARGV: member id, taker id, prefix, alive suffix, tombstone ttl s.
// 1: this process takes the member's rooms over.
const TAKE_OVER = `
if redis.call("hexists", KEYS[3], ARGV[1]) == 0 then return 0 end
if redis.call("exists", KEYS[1]) == 1 then return 0 end
local taker = redis.call("get", KEYS[2])
if taker and taker ~= ARGV[2] and redis.call("exists", ARGV[3] .. taker .. ARGV[4]) == 1 then return 0 end
redis.call("set", KEYS[2], ARGV[2], "EX", ARGV[5])
return 1`;

/** The tombstone of the process `id` (ownerKey): set by its taker once it is declared dead (this process's: fence.ts). */
export function tombstoneKey(id: string): string {
  return PROCESS + id + DEAD;
}

/** Colyseus's ids of the group's members (live, or dead and not yet taken over). */
export async function groupProcessIds(redis: Redis): Promise<string[]> {
  return redis.hvals(MEMBERS);
}

export class ProcessHeartbeat {
  readonly id = ownerKey(thisProcess());
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  private fenced = false;
  /** A beat waiting on Redis (away: commands wait for it to come back) is not doubled. */
  private beating = false;

  private constructor(
    private readonly redis: Redis,
    /** Colyseus's id of this process (its room listings name it). */
    private readonly processId: string,
    private readonly onFenced: (by: string) => void,
    private readonly everyMs: number,
    private readonly ttlMs: number,
  ) {
    this.timer = setInterval(() => {
      if (this.beating) return;
      this.beating = true;
      void this.beat()
        .catch(() => undefined)
        .finally(() => (this.beating = false));
    }, everyMs);
    this.timer.unref();
  }

  /** Names this process in the group and keeps it alive; resolves after the first beat (before any room is registered). */
  static async start(redis: Redis, processId: string, onFenced: (by: string) => void, opts: { everyMs?: number; ttlMs?: number } = {}): Promise<ProcessHeartbeat> {
    const hb = new ProcessHeartbeat(redis, processId, onFenced, opts.everyMs ?? HEARTBEAT_MS, opts.ttlMs ?? HEARTBEAT_TTL_MS);
    await hb.beat();
    return hb;
  }

  private async beat(): Promise<void> {
    if (this.stopped || this.fenced) return;
    const ok = await this.redis.eval(BEAT, 3, PROCESS + this.id + ALIVE, tombstoneKey(this.id), MEMBERS, this.id, String(this.ttlMs), this.processId);
    if (ok === 1 || this.stopped) return;
    this.fenced = true;
    clearInterval(this.timer);
    this.onFenced((await this.redis.get(tombstoneKey(this.id)).catch(() => null)) ?? "another process");
  }

  /**
   * Of these owners, the members whose heartbeat stopped and whose rooms this process now takes
   * over (one taker per dead process), on any machine, this one included.
   */
  async takeOver(owners: readonly Owner[]): Promise<Owner[]> {
    if (this.stopped || this.fenced) return [];
    const taken: Owner[] = [];
    const seen = new Set<string>([this.id]);
    for (const owner of owners) {
      const id = ownerKey(owner);
      if (seen.has(id)) continue;
      seen.add(id);
      const got = await this.redis.eval(TAKE_OVER, 3, PROCESS + id + ALIVE, tombstoneKey(id), MEMBERS, id, this.id, PROCESS, ALIVE, String(TOMBSTONE_S));
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
    await this.redis.hdel(MEMBERS, ...ids);
    return processIds.filter((p): p is string => typeof p === "string" && p !== this.processId);
  }

  /**
   * This process stops: its key goes at once, so that the processes of other machines take its
   * rooms over now (as those of its own machine do when its pid is gone), not a TTL later.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (!this.fenced) await this.redis.del(PROCESS + this.id + ALIVE).catch(() => undefined);
  }
}

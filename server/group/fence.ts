/**
 * This process's fencing token in the group: its tombstone in Redis (process-heartbeat.ts). A
 * process declared dead (paused past its heartbeat's life: SIGSTOP, a frozen VM, a network cut)
 * has had its rooms recreated by another process, which set the tombstone before touching them.
 * When it wakes, its event loop runs what piled up (clients that left, a room's timers, Colyseus's
 * sweep) before its first heartbeat can learn that it is dead; Colyseus would then write its old
 * listings and room count into Redis over those of the rooms' new home. So every write to the
 * group's shared hashes goes through one Lua step that checks the tombstone first: once it is set,
 * nothing the process asks for lands, and the first refusal tells the process to stop (`onTrip`),
 * as its heartbeat would.
 */
import type { Redis } from "ioredis";

// KEYS: the tombstone, the hash written. ARGV: the command (hset, hsetnx, hdel), its arguments.
// {1, the command's reply} when written; {0, the taker's id} when this process was declared dead.
const FENCED_WRITE = `
local taker = redis.call("get", KEYS[1])
if taker then return {0, taker} end
return {1, redis.call(ARGV[1], KEYS[2], unpack(ARGV, 2))}`;

export type FencedCommand = "hset" | "hsetnx" | "hdel";

export class Fence {
  private taker: string | undefined;
  private readonly listeners: ((by: string) => void)[] = [];

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
    for (const fn of this.listeners.splice(0)) fn(by);
  }

  /** `command key ...args` on `redis`, unless this process was declared dead: then undefined, and nothing is written. */
  async write(redis: Redis, command: FencedCommand, key: string, ...args: string[]): Promise<number | undefined> {
    if (this.tripped) return undefined;
    const [written, reply] = (await redis.eval(FENCED_WRITE, 2, this.tombstone, key, command, ...args)) as [number, number | string];
    if (written === 1) return reply as number;
    this.trip(String(reply));
    return undefined;
  }
}

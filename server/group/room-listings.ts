/**
 * Colyseus's Redis driver (the room listings every process reads), with two changes:
 * - `insert`, the operation it lacks: a room's listing recorded only if its id is free (HSETNX,
 *   one atomic step). Colyseus's matchmaking uses it to settle a create request answered twice: a
 *   process asked to create a room in another process gives up waiting after 2 s
 *   (COLYSEUS_PRESENCE_SHORT_TIMEOUT) and creates it itself; with `insert`, both copies carry one
 *   id drawn in advance, the second to be listed is discarded, and the caller is given the first.
 *   Without it (the driver as published) a loaded machine ended with a live room in the slow
 *   process that no one had asked for and no registry knew (`GET /api/rooms` listed 21 rooms
 *   where 20 were created).
 * - Every write is fenced (fence.ts): a process declared dead writes no listing, so one that wakes
 *   from a pause cannot list its old rooms again over their new home, nor delete their listings.
 *   Once the server, stopping, gave Redis up, the shutdown's reads end at once and its QUIT is not
 *   sent: the shutdown goes on without Redis.
 */
import type { IRoomCache } from "@colyseus/core";
import { RedisDriver } from "@colyseus/redis-driver";
import type { Redis } from "ioredis";
import type { Fence } from "./fence.js";

/** The hash Colyseus's Redis driver keeps listings in (its ROOMCACHES_KEY). */
export const ROOMCACHES_KEY = "roomcaches";

/** What Colyseus changes in a listing (a room's client count, its lock...). */
type ListingChange = Partial<{ $set: Partial<IRoomCache>; $inc: Partial<IRoomCache> }>;

/** Hash fields deleted per command (the published driver's batch). */
const DELETE_BATCH = 500;

export class GroupRoomDriver extends RedisDriver {
  constructor(
    private readonly redis: Redis,
    private readonly fence: Fence,
  ) {
    super(redis);
  }

  async insert(room: IRoomCache): Promise<boolean> {
    return (await this.fence.write(this.redis, "hsetnx", ROOMCACHES_KEY, room.roomId, JSON.stringify(room))) === 1;
  }

  override async update(room: IRoomCache, change: ListingChange): Promise<boolean> {
    // The listing object is the room's own: changed in place, as the published driver does.
    const fields = room as unknown as Record<string, unknown>;
    for (const [field, value] of Object.entries(change.$set ?? {})) fields[field] = value;
    for (const [field, by] of Object.entries(change.$inc ?? {})) fields[field] = (fields[field] as number) + (by as number);
    return this.persist(room);
  }

  override async persist(room: IRoomCache): Promise<boolean> {
    if (!room.roomId) return false;
    return (await this.fence.write(this.redis, "hset", ROOMCACHES_KEY, room.roomId, JSON.stringify(room))) !== undefined;
  }

  override async remove(roomId: string): Promise<boolean> {
    return Number((await this.fence.write(this.redis, "hdel", ROOMCACHES_KEY, roomId)) ?? 0) > 0;
  }

  /** The listings of `processId` (a process that died) go. */
  override async cleanup(processId: string): Promise<void> {
    const ids = ((await this.fence.send(() => this.query({ processId }))) ?? []).map((room) => room.roomId);
    for (let i = 0; i < ids.length; i += DELETE_BATCH) await this.fence.write(this.redis, "hdel", ROOMCACHES_KEY, ...ids.slice(i, i + DELETE_BATCH));
  }

  override async shutdown(): Promise<void> {
    await this.fence.send(() => super.shutdown());
  }
}

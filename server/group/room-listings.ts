/**
 * Colyseus's Redis driver, with the one operation it lacks: `insert`, a room's listing recorded
 * only if its id is free (HSETNX, one atomic step). Colyseus's matchmaking uses it to settle a
 * create request answered twice: a process asked to create a room in another process gives up
 * waiting after 2 s (COLYSEUS_PRESENCE_SHORT_TIMEOUT) and creates it itself; with `insert`, both
 * copies carry one id drawn in advance, the second to be listed is discarded, and the caller is
 * given the first. Without it (the driver as published) a loaded machine ended with a live room
 * in the slow process that no one had asked for and no registry knew (`GET /api/rooms` listed 21
 * rooms where 20 were created).
 */
import type { IRoomCache } from "@colyseus/core";
import { RedisDriver } from "@colyseus/redis-driver";
import type { Redis } from "ioredis";

/** The hash Colyseus's Redis driver keeps listings in (its ROOMCACHES_KEY). */
export const ROOMCACHES_KEY = "roomcaches";

export class GroupRoomDriver extends RedisDriver {
  constructor(private readonly redis: Redis) {
    super(redis);
  }

  async insert(room: IRoomCache): Promise<boolean> {
    return (await this.redis.hsetnx(ROOMCACHES_KEY, room.roomId, JSON.stringify(room))) === 1;
  }
}

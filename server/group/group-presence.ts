/**
 * Colyseus's Redis presence (seat reservations, calls between processes, the processes' room
 * counts), its hash writes fenced (fence.ts): a process declared dead does not put its room count
 * back (`roomcount`, where Colyseus places new rooms: a dead process counted there would be sent
 * create requests until one timed out), nor anything else Colyseus keeps in a hash.
 */
import { RedisPresence } from "@colyseus/redis-presence";
import type { Redis } from "ioredis";
import type { Fence } from "./fence.js";

export class GroupPresence extends RedisPresence {
  constructor(
    private readonly redis: Redis,
    private readonly fence: Fence,
  ) {
    super(redis);
  }

  override async hset(key: string, field: string, value: string): Promise<boolean> {
    return ((await this.fence.write(this.redis, "hset", key, field, value)) ?? 0) > 0;
  }

  override async hdel(key: string, field: string): Promise<boolean> {
    return ((await this.fence.write(this.redis, "hdel", key, field)) ?? 0) > 0;
  }
}

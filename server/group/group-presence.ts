/**
 * Colyseus's Redis presence (seat reservations, calls between processes, the processes' room
 * counts), every write fenced (fence.ts): a process declared dead does not put its room count back
 * (`roomcount`, where Colyseus places new rooms: a dead process counted there would be sent create
 * requests until one timed out), nor answer a call to a room that now lives elsewhere (its reply is
 * a publication), nor mark another process swept, nor change anything else Colyseus keeps. Reads
 * and subscriptions are Colyseus's own, and so is `brpop` (a blocking pop cannot be a Lua step;
 * Colyseus's matchmaking does not use it). Once the server, stopping, gave Redis up (fence.ts), an
 * unsubscription ends at once, and shutting down leaves the connections to the process's exit:
 * Colyseus does not wait for either, and a command it left queued must not fail unhandled.
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

  private async one(...command: string[]): Promise<unknown> {
    return this.fence.write(this.redis, ...command);
  }

  override async publish(topic: string, data: unknown): Promise<void> {
    // As the published presence sends it (`false` for nothing).
    await this.one("publish", topic, JSON.stringify(data === undefined ? false : data));
  }

  override async set(key: string, value: string): Promise<void> {
    await this.one("set", key, value);
  }

  override async setex(key: string, value: string, seconds: number): Promise<void> {
    await this.one("setex", key, String(seconds), value);
  }

  override async expire(key: string, seconds: number): Promise<void> {
    await this.one("expire", key, String(seconds));
  }

  override async del(key: string): Promise<void> {
    await this.one("del", key);
  }

  override async sadd(key: string, value: unknown): Promise<void> {
    await this.one("sadd", key, String(value));
  }

  override async srem(key: string, value: unknown): Promise<number> {
    return Number((await this.one("srem", key, String(value))) ?? 0);
  }

  override async hset(key: string, field: string, value: string): Promise<boolean> {
    return Number((await this.one("hset", key, field, value)) ?? 0) > 0;
  }

  override async hdel(key: string, field: string): Promise<boolean> {
    return Number((await this.one("hdel", key, field)) ?? 0) > 0;
  }

  override async hincrby(key: string, field: string, value: number): Promise<number> {
    return Number((await this.one("hincrby", key, field, String(value))) ?? 0);
  }

  override async hincrbyex(key: string, field: string, value: number, expireInSeconds: number): Promise<number> {
    const replies = await this.fence.run(this.redis, ["hincrby", key, field, String(value)], ["expire", key, String(expireInSeconds)]);
    return Number(replies?.[0] ?? 0);
  }

  override async incr(key: string): Promise<number> {
    return Number((await this.one("incr", key)) ?? 0);
  }

  override async decr(key: string): Promise<number> {
    return Number((await this.one("decr", key)) ?? 0);
  }

  override async rpush(key: string, ...values: string[]): Promise<number> {
    return Number((await this.one("rpush", key, ...values)) ?? 0);
  }

  override async lpush(key: string, ...values: string[]): Promise<number> {
    return Number((await this.one("lpush", key, ...values)) ?? 0);
  }

  override async rpop(key: string): Promise<string | null> {
    const v = await this.one("rpop", key);
    return typeof v === "string" ? v : null;
  }

  override async lpop(key: string): Promise<string | null> {
    const v = await this.one("lpop", key);
    return typeof v === "string" ? v : null;
  }

  override async unsubscribe(topic: string, callback?: Parameters<RedisPresence["unsubscribe"]>[1]): Promise<this> {
    await this.fence.send(() => super.unsubscribe(topic, callback));
    return this;
  }

  override shutdown(): void {
    if (this.fence.redisGivenUp === undefined) super.shutdown();
  }
}

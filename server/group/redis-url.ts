/**
 * The Redis URL of a group of server processes (`serve --redis URL`), checked with the rest of the
 * settings before anything starts, and the way messages show it (never with its password). Kept
 * apart from the connections (redis.ts) so that reading the settings loads no Redis client.
 */
import { z } from "zod";

/** The one-line start the messages and docs/scale.md give. */
export const REDIS_START = `redis-server --port 6379 --save "" --daemonize yes`;

export const RedisUrlSchema = z
  .string()
  .regex(/^rediss?:\/\/[^\s/]*(\/\d{1,2})?$/, "a Redis URL is redis://[:PASSWORD@]HOST[:PORT][/DB] (rediss:// for TLS)");

/** The URL as shown in messages: without its password. */
export function shownUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, "//***@");
}

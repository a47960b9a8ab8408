/**
 * The connections to the Redis that joins a group of server processes (`serve --redis URL`,
 * `serve --processes N`; its URL: redis-url.ts). A Redis that cannot be
 * reached at start is an error naming the URL and saying how to start one; once started, the
 * connections reconnect by themselves (ioredis retries for ever, at most 2 s apart) and the group
 * puts back what a restarted Redis lost (process-group.ts).
 */
import { Redis, type RedisOptions } from "ioredis";
import { REDIS_START, shownUrl } from "./redis-url.js";

/** Every key of ours starts with this (Colyseus's and socket.io's keys have prefixes of their own). */
export const KEY_PREFIX = "socialworld:";

export class RedisUnreachable extends Error {
  constructor(url: string, cause: string) {
    super(`cannot reach Redis at ${shownUrl(url)} (${cause}); start one with \`${REDIS_START}\`, or give another with --redis URL`);
    this.name = "RedisUnreachable";
  }
}

/**
 * A connection to `url`. `failFast`: commands made while disconnected fail at once instead of
 * waiting for the connection to come back (for requests a client is waiting on: better a 503 now
 * than an answer after Redis's restart).
 */
export function redisConnection(url: string, name: string, opts: { failFast?: boolean } = {}): Redis {
  const options: RedisOptions = {
    connectionName: `socialworld:${name}`,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...(opts.failFast ? { enableOfflineQueue: false, maxRetriesPerRequest: 0 } : { maxRetriesPerRequest: null }),
  };
  const redis = new Redis(url, options);
  // Errors while reconnecting are expected (Redis restarting): the group says it once, not ioredis per attempt.
  redis.on("error", () => undefined);
  return redis;
}

/** Resolves once `redis` answers PING; an unreachable Redis within `timeoutMs` is RedisUnreachable. */
export async function checkReachable(redis: Redis, url: string, timeoutMs = 5000): Promise<void> {
  let lastError = "no answer";
  const onError = (err: Error) => (lastError = (err as NodeJS.ErrnoException).code ?? err.message);
  redis.on("error", onError);
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (redis.status === "ready") {
        await redis.ping();
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new RedisUnreachable(url, lastError);
  } finally {
    redis.off("error", onError);
  }
}

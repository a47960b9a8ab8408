/**
 * What a stopping process of a group counts as "Redis does not answer" (ProcessGroup.stopping,
 * server/group/process-group.ts; issue 32): a PING unanswered for the time given, as the event
 * loop reads it. A loop blocked for longer than that (synchronous work of the shutdown, a loaded
 * machine) while Redis answered at once does not give Redis up: doing so would drop what the
 * shutdown still had to write to a healthy Redis. A Redis frozen (SIGSTOP) is given up.
 */
import { describe, expect, it } from "vitest";
import { joinGroup } from "../../server/group/process-group.js";
import { until } from "../server/raw-client.js";
import { redisOfFile } from "./redis-server.js";

const file = redisOfFile();

/**
 * The time given to Redis here (the server gives it 5 s: REDIS_STOP_WAIT_MS): long enough that a
 * redis-server started at nice 19 on a loaded machine answers well within it.
 */
const WAIT_MS = 2000;

/** Runs for `ms` without letting the event loop turn (as a long synchronous step does). */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe("a stopping process watching its Redis", () => {
  it("does not give up a Redis that answered while its own loop was blocked, and gives up one that is frozen", async () => {
    const group = await joinGroup(file.redis.url);
    // Connected, as a server's connection is long before it stops.
    await group.redis.ping();
    const told: string[] = [];
    group.stopping(WAIT_MS, (why) => told.push(why));
    // Its PING is answered within a millisecond, but the loop reads the answer only once unblocked,
    // after the watch's timer is due (on the code before this, it gave Redis up here).
    block(WAIT_MS * 1.5);
    await new Promise((r) => setTimeout(r, WAIT_MS * 0.75));
    expect(told).toEqual([]);
    expect(group.fence.redisGivenUp).toBeUndefined();

    // Frozen: the PING is sent and never answered. Given up once it has waited WAIT_MS (a bound
    // with room for a loaded machine).
    file.redis.pause();
    try {
      const frozenAt = performance.now();
      await until(() => told.length > 0, 30_000, "Redis given up");
      expect(performance.now() - frozenAt).toBeGreaterThanOrEqual(WAIT_MS - 300);
      expect(told).toEqual([`Redis at ${file.redis.url} did not answer for ${WAIT_MS / 1000} s of the shutdown`]);
      expect(group.fence.redisGivenUp).toBe(told[0]);
    } finally {
      file.redis.resume();
    }
    // Its connections are left to the process's exit (ProcessGroup.close): this file's process ends with its tests.
    await group.close();
  });
});

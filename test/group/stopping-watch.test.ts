/**
 * What a stopping process of a group counts as "Redis does not answer" (ProcessGroup.stopping,
 * server/group/process-group.ts; issue 32): a PING unanswered for the time given, as the event
 * loop reads it. A loop blocked for longer than that (synchronous work of the shutdown, a loaded
 * machine) while Redis answered at once does not give Redis up: doing so would drop what the
 * shutdown still had to write to a healthy Redis.
 */
import { describe, expect, it } from "vitest";
import { joinGroup } from "../../server/group/process-group.js";
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
  it("does not give up a Redis that answered while its own loop was blocked", async () => {
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

    // Not given up: its connections close as a server's do (Colyseus shuts its presence and driver
    // down). That a Redis killed or frozen is given up, in a real shutdown, is
    // test/group/stop-without-redis.test.ts.
    group.presence.shutdown();
    await group.driver.shutdown();
    await group.close();
  });
});

/**
 * What a stopping process of a group counts as "Redis does not answer" (ProcessGroup.stopping,
 * server/group/process-group.ts; issue 32): a PING unanswered for the time given, as the event
 * loop reads it. A loop blocked for longer than that (synchronous work of the shutdown, a loaded
 * machine) while Redis answered at once does not give Redis up: doing so would drop what the
 * shutdown still had to write to a healthy Redis. And how it closes its connections: once Redis
 * has answered what was sent on them (a Redis that stalls as they close, then answers, fails
 * nothing), or, Redis silent for the whole wait on any one of them, not at all (given up); without a
 * watch (a start that failed), ended after the wait given.
 */
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { joinGroup } from "../../server/group/process-group.js";
import { KEY_PREFIX } from "../../server/group/redis.js";
import { until } from "../server/raw-client.js";
import { redisOfFile } from "./redis-server.js";

const file = redisOfFile();

/**
 * The time given to Redis here (the server gives it 5 s: REDIS_STOP_WAIT_MS): long enough that a
 * redis-server started at nice 19 on a loaded machine answers well within it.
 */
const WAIT_MS = 2000;

/** The wait given where Redis stalls for 3 s and must not be given up. */
const STALL_WAIT_MS = 8000;

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

  it("closes its connections once Redis has answered what was sent on them, even when Redis stalls as they close", async () => {
    const { group, told, outcome } = await stallAsItCloses(STALL_WAIT_MS, "stall-test");
    const closed = group.close();
    // Longer than ioredis waits for a connection it ended to close (2 s) before it destroys it and fails
    // what it still waited for (on the code before this: "Connection is closed."), shorter than the watch's wait.
    await new Promise((r) => setTimeout(r, 3000));
    file.redis.resume();
    await closed;
    await until(() => outcome() !== undefined, 5000, "the command's answer");
    expect(outcome()).toEqual({ reply: "OK" });
    expect(told).toEqual([]);
    expect(group.fence.redisGivenUp).toBeUndefined();
    expect(await file.conn.get(`${KEY_PREFIX}stall-test`)).toBe("1");
  }, 30_000);

  it("gives Redis up when it stalls for the whole wait as the connections close: they are left open, nothing they sent fails", async () => {
    const { group, told, outcome } = await stallAsItCloses(WAIT_MS, "stall-test-2");
    try {
      await group.close();
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/did not answer for 2 s of the shutdown/);
      expect(group.fence.redisGivenUp).toBe(told[0]);
      await new Promise((r) => setTimeout(r, 2500));
      // Left to the process's exit: neither answered nor failed.
      expect(outcome()).toBeUndefined();
    } finally {
      file.redis.resume();
    }
    await until(() => outcome() !== undefined, 5000, "the command's answer");
    expect(outcome()).toEqual({ reply: "OK" });
    group.redis.disconnect();
  }, 30_000);

  it("without a watch (a start that failed), a Redis that does not answer holds close() for the wait given, not for ever", async () => {
    const group = await joinGroup(file.redis.url);
    await group.redis.ping();
    group.presence.shutdown();
    await group.driver.shutdown();
    file.redis.pause();
    try {
      const asked = performance.now();
      await group.close(WAIT_MS);
      // It did wait for Redis (the PINGs), then ended the connections as they were: nothing given up.
      expect(performance.now() - asked).toBeGreaterThanOrEqual(WAIT_MS - 50);
      expect(group.fence.redisGivenUp).toBeUndefined();
    } finally {
      file.redis.resume();
    }
  }, 30_000);

  it("gives Redis up when one of its connections does not answer as they close, though the watched one does", async () => {
    const { group, told } = await stoppingGroup(WAIT_MS);
    // socket.io's connections, as an adapter holds them; the publishing one stuck behind a command that
    // blocks (as a connection cut off alone would be), while the watch's PINGs are answered.
    const adapter = group.ioAdapter({ name: "/stuck", server: {} } as never) as unknown as { pubClient: Redis; subClient: Redis };
    const stuck = adapter.pubClient.blpop(`${KEY_PREFIX}stuck`, 0).catch(() => undefined);
    try {
      // On the code before this, close() waited for that connection for ever (the test timed out).
      await group.close();
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/did not answer for 2 s of the shutdown/);
      expect(group.fence.redisGivenUp).toBe(told[0]);
    } finally {
      await file.conn.lpush(`${KEY_PREFIX}stuck`, "1");
      await stuck;
      for (const c of [adapter.pubClient, adapter.subClient, group.redis]) c.disconnect();
    }
  }, 30_000);
});

/**
 * A group stopping (watching Redis for `waitMs`), its presence and driver shut down as Colyseus's
 * shutdown does, then Redis frozen with a command of its sent and unanswered (as the adapter's
 * unsubscribes are when socket.io closes; nobody awaits them, so their failure would be unhandled
 * and end the process with Node's error). `outcome()`: that command's reply or error, once it has one.
 */
async function stallAsItCloses(waitMs: number, key: string) {
  const { group, told } = await stoppingGroup(waitMs);
  file.redis.pause();
  let settled: { reply: unknown } | { error: string } | undefined;
  void group.redis.set(`${KEY_PREFIX}${key}`, "1").then(
    (reply) => (settled = { reply }),
    (err: Error) => (settled = { error: err.message }),
  );
  return { group, told, outcome: () => settled };
}

/** A group stopping (watching Redis for `waitMs`; `told`: why it gave Redis up), its presence and driver shut down as Colyseus's shutdown does. */
async function stoppingGroup(waitMs: number) {
  const group = await joinGroup(file.redis.url);
  await group.redis.ping();
  const told: string[] = [];
  group.stopping(waitMs, (why) => told.push(why));
  group.presence.shutdown();
  await group.driver.shutdown();
  return { group, told };
}

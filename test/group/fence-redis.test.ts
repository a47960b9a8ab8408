/**
 * A group process's fence (server/group/fence.ts) and its Redis coming and going (issue 32):
 * - each fenced Lua step is sent by its SHA (EVALSHA), its text only where Redis lacks it: once a
 *   connection has used a step, every write is one EVALSHA and no EVAL (Redis's own command
 *   counts), and the writes go on through a SCRIPT FLUSH (NOSCRIPT, then EVAL) and through a
 *   Redis restarted empty (its script cache with it), the tombstone still checked;
 * - a server stopping while Redis does not answer gives it up: a write waiting on its connection
 *   ends at once, unwritten as far as the caller knows; later writes and the shutdown's reads end
 *   without being sent; and a store write waiting for the lease is refused.
 */
import type { IRoomCache } from "@colyseus/core";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { GroupPresence } from "../../server/group/group-presence.js";
import { tombstoneKey } from "../../server/group/process-heartbeat.js";
import { GroupRoomDriver, ROOMCACHES_KEY } from "../../server/group/room-listings.js";
import { PlaceLost } from "../../store/write-fence.js";
import { redisOfFile } from "./redis-server.js";

const file = redisOfFile();
const opened: Redis[] = [];

afterAll(() => {
  for (const c of opened) c.disconnect();
});

/** A process of the group as far as its writes go: its fence and driver on a connection of its own (which waits for a Redis restarting). */
function member(id: string) {
  const fence = new Fence(tombstoneKey(id));
  const conn = new Redis(file.redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 100 });
  conn.on("error", () => undefined);
  opened.push(conn);
  return { fence, conn, driver: new GroupRoomDriver(conn, fence) };
}

const listing = (roomId: string) => ({ roomId, processId: "proc-a", name: "simulation", clients: 0, publicAddress: "proc-a:1" }) as unknown as IRoomCache;
/** A Lua step of the project's own (as TrainerLease's), fenced: KEYS[2] counted up. */
const COUNT = `return redis.call("incr", KEYS[2])`;

/** How many times Redis ran `command` (INFO commandstats; failures such as NOSCRIPT are counted apart). */
async function calls(command: "eval" | "evalsha"): Promise<number> {
  const info = await file.conn.info("commandstats");
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

describe("a process's fence and its Redis", () => {
  it("sends each step by its SHA, and writes through a SCRIPT FLUSH and a Redis restarted empty", async () => {
    const m = member("machine-a/1/1");
    // The connection's first use of each step sends its text.
    expect(await m.driver.persist(listing("room-a"))).toBe(true);
    expect(await m.fence.script(m.conn, COUNT, ["counter"], [])).toBe(1);
    const [evals, shas] = [await calls("eval"), await calls("evalsha")];
    for (let i = 0; i < 10; i++) {
      expect(await m.driver.persist(listing(`room-${i}`))).toBe(true);
      expect(await m.fence.script(m.conn, COUNT, ["counter"], [])).toBe(i + 2);
    }
    expect(await calls("eval")).toBe(evals);
    expect(await calls("evalsha")).toBe(shas + 20);

    // Redis lost its scripts, the connection did not notice: NOSCRIPT, and the step goes again with its text.
    await file.conn.script("FLUSH");
    expect(await m.driver.persist(listing("room-b"))).toBe(true);
    expect(await m.fence.script(m.conn, COUNT, ["counter"], [])).toBe(12);
    expect(await file.conn.hexists(ROOMCACHES_KEY, "room-b")).toBe(1);

    // Redis restarted empty: the writes wait for the connection to come back, then land.
    await file.redis.restart();
    expect(await m.driver.persist(listing("room-c"))).toBe(true);
    expect(await m.fence.script(m.conn, COUNT, ["counter"], [])).toBe(1);
    expect(await file.conn.hkeys(ROOMCACHES_KEY)).toEqual(["room-c"]);
    // The tombstone is still checked first: declared dead, the process writes nothing.
    await file.conn.set(tombstoneKey("machine-a/1/1"), "machine-b/2/2");
    expect(await m.driver.persist(listing("room-d"))).toBe(false);
    expect(m.fence.tripped).toBe(true);
    expect(await file.conn.hkeys(ROOMCACHES_KEY)).toEqual(["room-c"]);
  });

  it("gives Redis up while stopping: what waits on it ends, what follows is not sent, and a write waiting for the lease is refused", async () => {
    const m = member("machine-c/3/3");
    expect(await m.driver.persist(listing("room-x"))).toBe(true);
    // Redis stops answering writes; the connection stays up (as with a Redis frozen or cut off).
    await file.conn.client("PAUSE", "30000", "WRITE");
    try {
      let answered: boolean | undefined;
      const waiting = m.driver.persist(listing("room-y")).then((ok) => (answered = ok));
      // A store write waiting for a heartbeat: the lease was renewed once, long ago.
      m.fence.renewed({ mono: process.hrtime.bigint() - 60_000_000_000n, wall: Date.now() - 60_000 }, 1000);
      const lease = m.fence.held();
      lease.catch(() => undefined);
      await new Promise((done) => setTimeout(done, 300));
      expect(answered).toBeUndefined();

      m.fence.giveUpRedis("Redis did not answer");
      expect(await waiting).toBe(false);
      await expect(lease).rejects.toThrow(PlaceLost);
      await expect(lease).rejects.toThrow(/Redis did not answer/);
      expect(m.fence.redisGivenUp).toBe("Redis did not answer");

      // A process whose lease holds sends nothing either, once it gave Redis up: Colyseus's shutdown goes through.
      const other = member("machine-d/4/4");
      const presence = new GroupPresence(other.conn, other.fence);
      opened.push((presence as unknown as { sub: Redis }).sub);
      await other.conn.ping();
      other.fence.giveUpRedis("Redis did not answer");
      expect(await other.driver.persist(listing("room-z"))).toBe(false);
      expect(await other.driver.remove("room-x")).toBe(false);
      expect(await presence.hdel("roomcount", "proc-a")).toBe(false);
      await other.driver.cleanup("proc-a");
      await presence.unsubscribe("p:proc-a");
      await other.driver.shutdown();
      presence.shutdown();
      // No QUIT was sent: the connection is left to the process's exit, and still answers.
      expect(await other.conn.ping()).toBe("PONG");
    } finally {
      await file.conn.client("UNPAUSE");
    }
  });
});

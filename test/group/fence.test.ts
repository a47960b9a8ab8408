/**
 * The fence of a group's process (server/group/fence.ts) against a real Redis: its room listings
 * (GroupRoomDriver) and its hash writes through Colyseus's presence (GroupPresence) land while it
 * is alive; once its tombstone is set (it was declared dead and taken over), none does, whatever
 * the write, the first refusal tells it by whom, and the taker's own writes are not touched. The
 * same for its other writes into Redis: Colyseus's publications and keys (a reply to a call, a
 * sweep's receipt, a concurrency count), the per-address counts, a pool's trainer lease and its
 * rounds.
 */
import type { IRoomCache } from "@colyseus/core";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { GroupPresence } from "../../server/group/group-presence.js";
import { tombstoneKey } from "../../server/group/process-heartbeat.js";
import { GroupRoomDriver, ROOMCACHES_KEY } from "../../server/group/room-listings.js";
import { SharedLimits } from "../../server/group/shared-limits.js";
import { TrainerLease } from "../../server/group/trainer-lease.js";
import { ClientLimitsSchema } from "../../server/security/client-guard.js";
import { until } from "../server/raw-client.js";
import { redisOfFile } from "./redis-server.js";

const file = redisOfFile();
const opened: Redis[] = [];

afterAll(async () => {
  for (const c of opened) c.disconnect();
});

/** A process of the group as far as its writes go: its fence, driver and presence, on connections of its own. */
function member(id: string) {
  const fence = new Fence(tombstoneKey(id));
  const driverConn = new Redis(file.redis.url);
  const presenceConn = new Redis(file.redis.url);
  opened.push(driverConn, presenceConn);
  const tripped: string[] = [];
  fence.onTrip((by) => tripped.push(by));
  const presence = new GroupPresence(presenceConn, fence);
  return { fence, tripped, conn: presenceConn, driver: new GroupRoomDriver(driverConn, fence), presence };
}

const listing = (roomId: string, processId: string, clients = 0) => ({ roomId, processId, name: "simulation", clients, publicAddress: `${processId}:1` }) as unknown as IRoomCache;
const stored = async (roomId: string) => JSON.parse((await file.conn.hget(ROOMCACHES_KEY, roomId))!) as { processId: string; clients: number };

describe("a process's fence", () => {
  it("lets its writes through while it lives, refuses every one once it is declared dead, and leaves its taker's alone", async () => {
    const victim = member("machine-a/10/1");
    const taker = member("machine-b/20/1");
    const a = listing("room-a", "proc-a");
    const b = listing("room-b", "proc-a");
    expect(await victim.driver.insert(a)).toBe(true);
    expect(await victim.driver.insert(listing("room-a", "proc-a"))).toBe(false);
    expect(await victim.driver.persist(b)).toBe(true);
    expect(await victim.driver.update(a, { $inc: { clients: 2 } })).toBe(true);
    expect(await stored("room-a")).toMatchObject({ processId: "proc-a", clients: 2 });
    expect(await victim.presence.hset("roomcount", "proc-a", "2,2")).toBe(true);

    // Taken over: the tombstone first, then the taker drops the victim's listings and count and lists room-a as its own.
    await file.conn.set(tombstoneKey("machine-a/10/1"), "machine-b/20/1");
    await taker.driver.cleanup("proc-a");
    expect(await taker.presence.hdel("roomcount", "proc-a")).toBe(true);
    expect(await taker.driver.insert(listing("room-a", "proc-b"))).toBe(true);

    // The victim wakes: a client leaves (update), a sweep lists its rooms again (persist), a room ends (remove)...
    expect(await victim.driver.update(a, { $inc: { clients: -1 } })).toBe(false);
    expect(victim.tripped).toEqual(["machine-b/20/1"]);
    expect(victim.fence.tripped).toBe(true);
    expect(await victim.driver.persist(b)).toBe(false);
    expect(await victim.driver.insert(listing("room-c", "proc-a"))).toBe(false);
    expect(await victim.driver.remove("room-a")).toBe(false);
    await victim.driver.cleanup("proc-b");
    expect(await victim.presence.hset("roomcount", "proc-a", "2,1")).toBe(false);
    expect(await victim.presence.hdel("roomcount", "proc-b")).toBe(false);
    // ...and nothing of it landed: room-a is the taker's, room-b and room-c are not listed, its count is gone.
    expect(Object.keys(await file.conn.hgetall(ROOMCACHES_KEY))).toEqual(["room-a"]);
    expect(await stored("room-a")).toMatchObject({ processId: "proc-b", clients: 0 });
    expect(await file.conn.hexists("roomcount", "proc-a")).toBe(0);
    // Told once; the taker was never fenced.
    expect(victim.tripped).toEqual(["machine-b/20/1"]);
    expect(taker.tripped).toEqual([]);
    expect(await taker.driver.update(listing("room-a", "proc-b"), { $inc: { clients: 1 } })).toBe(true);

    // Each kind of write refused by Redis itself, in the fenced step: a fence that has not tripped
    // yet (a woken process's first write) for each, since a tripped one refuses before asking Redis.
    const writes: [string, (m: ReturnType<typeof member>) => Promise<boolean>][] = [
      ["insert", (m) => m.driver.insert(listing("room-d", "proc-a"))],
      ["persist", (m) => m.driver.persist(b)],
      ["update", (m) => m.driver.update(a, { $inc: { clients: 5 } })],
      ["remove", (m) => m.driver.remove("room-a")],
      ["presence hset", (m) => m.presence.hset("roomcount", "proc-a", "9,9")],
      ["presence hdel", (m) => m.presence.hdel("roomcount", "proc-b")],
    ];
    await file.conn.hset("roomcount", "proc-b", "1,1");
    for (const [what, write] of writes) {
      const woken = member("machine-a/10/1");
      expect(await write(woken), what).toBe(false);
      expect(woken.tripped, what).toEqual(["machine-b/20/1"]);
    }
    expect(Object.keys(await file.conn.hgetall(ROOMCACHES_KEY))).toEqual(["room-a"]);
    expect(await stored("room-a")).toMatchObject({ processId: "proc-b", clients: 1 });
    expect(await file.conn.hgetall("roomcount")).toEqual({ "proc-b": "1,1" });
  });

  it("a listener added after the trip is told at once", () => {
    const fence = new Fence(tombstoneKey("machine-c/1/1"));
    fence.trip("machine-d/2/2");
    fence.trip("machine-e/3/3");
    const told: string[] = [];
    fence.onTrip((by) => told.push(by));
    expect(told).toEqual(["machine-d/2/2"]);
  });

  it("refuses its other writes into Redis too: publications, keys, counts, the trainer lease, rounds", async () => {
    await file.conn.flushall();
    const alive = member("machine-f/1/1");
    const heard: string[] = [];
    const listener = new Redis(file.redis.url);
    opened.push(listener);
    await listener.subscribe("ipc:1", "socialworld:selfplay:p:rounds");
    listener.on("message", (channel: string, message: string) => heard.push(`${channel} ${message}`));
    const limits = ClientLimitsSchema.parse({ reservationBurst: 3, reservationsPerSecond: 1 });
    // Each write as a process that is alive makes it, then as one declared dead (its first write since it woke).
    const writes: [string, (m: ReturnType<typeof member>) => Promise<unknown>][] = [
      ["a reply to a call", (m) => m.presence.publish("ipc:1", [0, "summary"])],
      ["a sweep's receipt", (m) => m.presence.setex("swept:proc-b", "1", 60)],
      ["a key", (m) => m.presence.set("key-a", "1")],
      ["a concurrency count", (m) => m.presence.hincrbyex("concurrency", "room", 1, 60)],
      ["a set", (m) => m.presence.sadd("set-a", "x")],
      ["a counter", (m) => m.presence.incr("counter-a")],
      ["a list", (m) => m.presence.rpush("list-a", "x")],
      ["a rate token", (m) => new SharedLimits(m.conn, m.fence, "proc-x", limits, () => 0).reservation("10.9.0.1").catch(() => undefined)],
      [
        "a seat count",
        async (m) => {
          const l = new SharedLimits(m.conn, m.fence, "proc-x", limits, () => 2);
          await l.seatsChanged("10.9.0.2");
          l.close();
        },
      ],
      ["rounds announced", (m) => m.fence.run(m.conn, ["set", "socialworld:selfplay:p:rounds", "[]"], ["publish", "socialworld:selfplay:p:rounds", "[]"])],
    ];
    for (const [what, write] of writes) await write(alive).catch((err: Error) => expect.fail(`${what}: ${err.message}`));
    await until(() => heard.length === 2, 5000, "the publications");
    const landed = await file.conn.keys("*");
    expect(landed.sort()).toEqual(["concurrency", "counter-a", "key-a", "list-a", "set-a", "socialworld:rate:10.9.0.1", "socialworld:seats:10.9.0.2:proc-x", "socialworld:selfplay:p:rounds", "swept:proc-b"]);

    await file.conn.flushall();
    await file.conn.set(tombstoneKey("machine-a/10/1"), "machine-b/20/1");
    for (const [what, write] of writes) {
      const woken = member("machine-a/10/1");
      await write(woken);
      expect(woken.tripped, what).toEqual(["machine-b/20/1"]);
    }
    // A lease free when it wakes is not taken either.
    const woken = member("machine-a/10/1");
    const told: boolean[] = [];
    const lease = new TrainerLease(woken.conn, woken.fence, "p", "proc-a", (held) => told.push(held), 3000);
    await until(() => woken.tripped.length > 0, 5000, "the lease's refusal");
    await lease.release();
    expect(told).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(await file.conn.keys("*")).toEqual([tombstoneKey("machine-a/10/1")]);
    expect(heard.length).toBe(2);
  });
});

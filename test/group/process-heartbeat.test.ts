/**
 * The heartbeat of a group's processes (server/group/process-heartbeat.ts) against a real Redis,
 * the other processes played by keys written here: a member whose key expired is dead and gets
 * exactly one taker, of any machine (one of this machine whose pid lives on was paused), a taker
 * that dies in turn hands its tombstone on, one never named a member is left to others, and a
 * process declared dead is told so.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProcessHeartbeat } from "../../server/group/process-heartbeat.js";
import { ownerKey, thisHost, thisProcess } from "../../store/owner.js";
import { startRedis, type TestRedis } from "./redis-server.js";
import { until } from "../server/raw-client.js";

let redis: TestRedis;
let conn: Redis;
const beats: ProcessHeartbeat[] = [];

beforeAll(async () => {
  redis = await startRedis();
  conn = new Redis(redis.url);
}, 30_000);

afterAll(async () => {
  for (const b of beats) await b.stop();
  conn?.disconnect();
  await redis?.stop();
});

const MEMBERS = "socialworld:processes";
const key = (id: string, what: "alive" | "dead") => `socialworld:process:${id}:${what}`;

describe("the group's heartbeat", () => {
  it("names this process, takes over a silent member once, and hands a dead taker's tombstone on", async () => {
    const fenced: string[] = [];
    const hb = await ProcessHeartbeat.start(conn, "colyseus-me", (by) => fenced.push(by));
    beats.push(hb);
    const me = ownerKey(thisProcess());
    expect(await conn.hget(MEMBERS, me)).toBe("colyseus-me");
    expect(await conn.pttl(key(me, "alive"))).toBeGreaterThan(0);

    const dead = { host: "machine-x", pid: 41, started: 1000 };
    const alive = { host: "machine-y", pid: 42, started: 1000 };
    const stranger = { host: "machine-z", pid: 43, started: 1000 };
    const local = { host: thisHost(), pid: 44, started: 1000 };
    await conn.hset(MEMBERS, ownerKey(dead), "colyseus-x", ownerKey(alive), "colyseus-y", ownerKey(local), "colyseus-l");
    await conn.set(key(ownerKey(alive), "alive"), "1", "PX", 60_000);
    await conn.set(key(ownerKey(local), "alive"), "1", "PX", 60_000);

    // Another live process already took the dead one: nothing for this one (nor itself, nor the live ones, nor a stranger).
    await conn.set(key(ownerKey(dead), "dead"), "machine-y/42/1000");
    expect(await hb.takeOver([dead, alive, stranger, local, thisProcess()])).toEqual([]);
    // A process of this machine that stops beating (paused: its pid lives on) is taken over too.
    await conn.del(key(ownerKey(local), "alive"));
    expect(await hb.takeOver([local])).toEqual([local]);
    expect(await conn.get(key(ownerKey(local), "dead"))).toBe(me);
    // That taker died before finishing: its tombstone passes to this process, once per call, idempotently.
    await conn.del(key(ownerKey(alive), "alive"));
    expect(await hb.takeOver([dead, dead])).toEqual([dead]);
    expect(await conn.get(key(ownerKey(dead), "dead"))).toBe(me);
    expect(await hb.takeOver([dead])).toEqual([dead]);
    // Taken over: it leaves the members, and its Colyseus id comes back (its listings are dropped).
    expect(await hb.tookOver([dead])).toEqual(["colyseus-x"]);
    expect(await conn.hexists(MEMBERS, ownerKey(dead))).toBe(0);
    expect(await hb.takeOver([dead])).toEqual([]);
    expect(fenced).toEqual([]);
  });

  it("a process whose tombstone is set stops beating and is told by whom", async () => {
    await conn.flushall();
    const fenced: string[] = [];
    const hb = await ProcessHeartbeat.start(conn, "colyseus-me", (by) => fenced.push(by), { everyMs: 100, ttlMs: 1000 });
    beats.push(hb);
    await conn.set(key(hb.id, "dead"), "machine-b/7/1");
    await until(() => fenced.length > 0, 10_000, "the fence");
    expect(fenced).toEqual(["machine-b/7/1"]);
    // Fenced, it takes nothing over and no longer refreshes its key.
    expect(await hb.takeOver([{ host: "machine-q", pid: 1, started: 1 }])).toEqual([]);
    await until(async () => (await conn.exists(key(hb.id, "alive"))) === 0, 10_000, "its key to expire");
  });

  it("stopping deletes its key at once, keeping it a member (the others take its rooms over now)", async () => {
    await conn.flushall();
    const hb = await ProcessHeartbeat.start(conn, "colyseus-me", () => undefined);
    await hb.stop();
    expect(await conn.exists(key(hb.id, "alive"))).toBe(0);
    expect(await conn.hget(MEMBERS, hb.id)).toBe("colyseus-me");
  });
});

/**
 * The heartbeat of a group's processes (server/group/process-heartbeat.ts) against a real Redis,
 * the other processes played by keys written here: a member whose key expired is dead and gets
 * exactly one taker, of any machine (one of this machine whose pid lives on was paused), a taker
 * that dies in turn hands its tombstone on, one never named a member is left to others, and a
 * process declared dead is told so. Its write lease (store/write-fence.ts) is held while its beats
 * are answered and lapses when they are not; a process takes nobody over before its own beats have
 * been answered for a whole key's life; and one whose lease lapsed asks the store whether it was
 * taken over before it beats again (a tombstone lost with a Redis restarted empty).
 */
import { afterAll, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { ProcessHeartbeat, tombstoneKey } from "../../server/group/process-heartbeat.js";
import { redisConnection } from "../../server/group/redis.js";
import { PlaceLost } from "../../store/write-fence.js";
import { ownerKey, thisHost, thisProcess } from "../../store/owner.js";
import { redisOfFile } from "./redis-server.js";
import { until } from "../server/raw-client.js";

const file = redisOfFile();
const beats: ProcessHeartbeat[] = [];

afterAll(async () => {
  for (const b of beats) await b.stop();
});

const MEMBERS = "socialworld:processes";
/**
 * Beats every 100 ms, living 3 s (a 2.4 s lease): a stall of the test process under load shorter
 * than the lease changes nothing, and the waits below poll rather than sleep a fixed time.
 */
const FAST = { everyMs: 100, ttlMs: 3000 } as const;
const key = (id: string, what: "alive" | "dead") => `socialworld:process:${id}:${what}`;

/** This process's fence, and whom it was told took it over. */
function fenceOfThisProcess() {
  const fence = new Fence(tombstoneKey(ownerKey(thisProcess())));
  const fenced: string[] = [];
  fence.onTrip((by) => fenced.push(by));
  return { fence, fenced };
}

describe("the group's heartbeat", () => {
  it("names this process, takes over a silent member once, and hands a dead taker's tombstone on", async () => {
    const { fence, fenced } = fenceOfThisProcess();
    const hb = await ProcessHeartbeat.start(file.conn, "colyseus-me", fence, FAST);
    beats.push(hb);
    const me = ownerKey(thisProcess());
    expect(await file.conn.hget(MEMBERS, me)).toBe("colyseus-me");
    expect(await file.conn.pttl(key(me, "alive"))).toBeGreaterThan(0);

    const dead = { host: "machine-x", pid: 41, started: 1000 };
    const alive = { host: "machine-y", pid: 42, started: 1000 };
    const stranger = { host: "machine-z", pid: 43, started: 1000 };
    const local = { host: thisHost(), pid: 44, started: 1000 };
    await file.conn.hset(MEMBERS, ownerKey(dead), "colyseus-x", ownerKey(alive), "colyseus-y", ownerKey(local), "colyseus-l");
    await file.conn.set(key(ownerKey(alive), "alive"), "1", "PX", 60_000);
    await file.conn.set(key(ownerKey(local), "alive"), "1", "PX", 60_000);
    await file.conn.del(key(ownerKey(local), "alive"));
    // Its own beats answered for less than a key's life: it might be a Redis that lost the others' keys, so nobody is taken over yet.
    expect(await hb.takeOver([local])).toEqual([]);
    // Once they have been answered for a whole key's life, it does.
    await until(async () => (await hb.takeOver([local])).length === 1, 20_000, "a whole key's life of answered beats");
    await file.conn.set(key(ownerKey(local), "alive"), "1", "PX", 60_000);

    // Another live process already took the dead one: nothing for this one (nor itself, nor the live ones, nor a stranger).
    await file.conn.set(key(ownerKey(dead), "dead"), "machine-y/42/1000");
    expect(await hb.takeOver([dead, alive, stranger, local, thisProcess()])).toEqual([]);
    // A process of this machine that stops beating (paused: its pid lives on) is taken over too.
    await file.conn.del(key(ownerKey(local), "alive"));
    expect(await hb.takeOver([local])).toEqual([local]);
    expect(await file.conn.get(key(ownerKey(local), "dead"))).toBe(me);
    // That taker died before finishing: its tombstone passes to this process, once per call, idempotently.
    await file.conn.del(key(ownerKey(alive), "alive"));
    expect(await hb.takeOver([dead, dead])).toEqual([dead]);
    expect(await file.conn.get(key(ownerKey(dead), "dead"))).toBe(me);
    expect(await hb.takeOver([dead])).toEqual([dead]);
    // Taken over: it leaves the members, and its Colyseus id comes back (its listings are dropped).
    expect(await hb.tookOver([dead])).toEqual(["colyseus-x"]);
    expect(await file.conn.hexists(MEMBERS, ownerKey(dead))).toBe(0);
    expect(await hb.takeOver([dead])).toEqual([]);
    expect(fenced).toEqual([]);
  });

  it("a process whose tombstone is set stops beating and is told by whom", async () => {
    await file.conn.flushall();
    const { fence, fenced } = fenceOfThisProcess();
    const hb = await ProcessHeartbeat.start(file.conn, "colyseus-me", fence, FAST);
    beats.push(hb);
    await file.conn.set(key(hb.id, "dead"), "machine-b/7/1");
    await until(() => fenced.length > 0, 10_000, "the fence");
    expect(fenced).toEqual(["machine-b/7/1"]);
    expect(fence.holds()).toBe(false);
    expect(() => fence.check("a log")).toThrow(PlaceLost);
    // Fenced, it takes nothing over and no longer refreshes its key.
    expect(await hb.takeOver([{ host: "machine-q", pid: 1, started: 1 }])).toEqual([]);
    await until(async () => (await file.conn.exists(key(hb.id, "alive"))) === 0, 10_000, "its key to expire");
  });

  it("stopping deletes its key at once, keeping it a member (the others take its rooms over now)", async () => {
    await file.conn.flushall();
    const hb = await ProcessHeartbeat.start(file.conn, "colyseus-me", fenceOfThisProcess().fence);
    await hb.stop();
    expect(await file.conn.exists(key(hb.id, "alive"))).toBe(0);
    expect(await file.conn.hget(MEMBERS, hb.id)).toBe("colyseus-me");
  });

  it("holds the write lease while its beats are answered, lapses without them, and waits for the next one", async () => {
    await file.conn.flushall();
    // A connection of its own that fails at once while down (its beats go unanswered).
    const own = redisConnection(file.redis.url, "lease", { failFast: true });
    await until(() => own.status === "ready", 5000, "the connection");
    const { fence, fenced } = fenceOfThisProcess();
    const hb = await ProcessHeartbeat.start(own, "colyseus-me", fence, FAST);
    beats.push(hb);
    expect(fence.holds()).toBe(true);
    fence.check("a log");
    own.disconnect();
    // 2.4 s (four fifths of the key's life) after the last beat answered, no write passes.
    await until(() => !fence.holds(), 20_000, "the lease to lapse");
    expect(() => fence.check("a log")).toThrow(/no heartbeat of this process was answered within its lease/);
    let held = false;
    void fence.held().then(() => (held = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(held).toBe(false);
    // Redis answers again, and nothing says this process was taken over: the writes waiting go on.
    own.connect().catch(() => undefined);
    await until(() => held, 20_000, "the waiting write");
    expect(fence.holds()).toBe(true);
    expect(fenced).toEqual([]);
    await hb.stop();
    own.disconnect();
  });

  it("past its lease, asks the store before beating again: taken over there, it stops without a word to Redis", async () => {
    await file.conn.flushall();
    const own = redisConnection(file.redis.url, "lease", { failFast: true });
    await until(() => own.status === "ready", 5000, "the connection");
    const { fence, fenced } = fenceOfThisProcess();
    let takenBy: string | undefined;
    const hb = await ProcessHeartbeat.start(own, "colyseus-me", fence, { ...FAST, takenOver: () => takenBy });
    beats.push(hb);
    own.disconnect();
    await until(() => !fence.holds(), 20_000, "the lease to lapse");
    // Meanwhile another process took its rooms over, and Redis lost the tombstone (restarted empty).
    takenBy = "machine-b/7/1";
    await file.conn.flushall();
    const waiting = fence.held().then(
      () => "held",
      (err: Error) => err.name,
    );
    own.connect().catch(() => undefined);
    expect(await waiting).toBe("PlaceLost");
    expect(fenced).toEqual(["machine-b/7/1"]);
    // It never named itself again.
    expect(await file.conn.exists(key(hb.id, "alive"))).toBe(0);
    expect(await file.conn.hexists(MEMBERS, hb.id)).toBe(0);
    own.disconnect();
  });

  it("a beat answered later than its lease (Redis stalled): the writes waiting go on only once a beat renews it", async () => {
    await file.conn.flushall();
    const own = redisConnection(file.redis.url, "lease");
    const { fence, fenced } = fenceOfThisProcess();
    const hb = await ProcessHeartbeat.start(own, "colyseus-me", fence, FAST);
    beats.push(hb);
    // Redis answers nobody for longer than the lease: the beat in flight is answered only after it.
    const pauser = redisConnection(file.redis.url, "pauser");
    await pauser.call("client", "pause", "3500", "all");
    await until(() => !fence.holds(), 20_000, "the lease to lapse");
    let wrote: string | undefined;
    const write = fence.held().then(
      () => {
        fence.check("a log");
        wrote = "written";
      },
      (err: Error) => (wrote = err.message),
    );
    await write;
    expect(wrote).toBe("written");
    expect(fenced).toEqual([]);
    await hb.stop();
    own.disconnect();
    pauser.disconnect();
  });
});

/**
 * Faults in a group of three `serve` processes on one Redis and one store (issue 32): Redis
 * restarting empty (the processes reconnect, list their rooms again, matchmaking across
 * processes works again, and so do /progress and the training board across processes), then one process killed with SIGKILL: its rooms are recreated by the
 * others from their saved options, each exactly once, while a spectator of another process's
 * room keeps receiving patches without noticing.
 */
import { Redis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOMCACHES_KEY } from "../../server/group/room-listings.js";
import { RoomRegistry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { admin, expectEachListedOnce, joinRoom, json, listed, pidOf, recreatedBy, spreadRooms, startGroup } from "./group-checks.js";
import type { TestRedis } from "./redis-server.js";

let redis: TestRedis;
let servers: Served[];
let store: string;

beforeAll(async () => {
  ({ redis, servers, store } = await startGroup(3, "sw-faults-"));
}, 240_000);

const address = (s: Served) => s.base.replace(/^http:\/\//, "");

describe("faults in a group of three processes", () => {
  const ids: string[] = [];

  it("spread six rooms (or more) over the three processes", async () => {
    const pids = await Promise.all(servers.map(pidOf));
    ids.push(...(await spreadRooms(servers, store, 6, (i) => ({ world: "tomi", seed: 40 + i, loop: true, tickMs: 150, pauseMs: 150 }))));
    const owners = new RoomRegistry(store).list().map((r) => r.owner.pid);
    for (const pid of pids) expect(owners).toContain(pid);
  }, 60_000);

  it("Redis restarting empty: the processes reconnect, list their rooms again, seat clients and carry /progress and the board across processes", async () => {
    const before = await listed(servers[0]!);
    expect(before.sort()).toEqual([...ids].sort());
    const watcher = await joinRoom(servers[0]!, ids[1]!);
    // A /progress client of the first process, connected through the restart.
    const { io } = await import("socket.io-client");
    const progress = io(`${servers[0]!.base}/progress`, { transports: ["websocket"] });
    const heard: string[] = [];
    progress.on("progress", (e: { runId?: string }) => heard.push(String(e.runId)));
    await new Promise<void>((done) => progress.on("connect", () => done()));
    await redis.restart();
    // Every process lists its rooms again: each process answers for all six.
    for (const s of servers) await until(async () => (await listed(s).catch(() => [])).sort().join() === [...ids].sort().join(), 30_000, `the rooms listed by ${s.base} after the restart`);
    for (const s of servers) expect(s.out()).toContain("Redis is back: listing this process's rooms again");
    // Matchmaking across processes works again: a seat in every room, asked through the first process.
    for (const id of ids) {
      const r = await json(`${servers[0]!.base}/matchmake/joinById/${id}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    }
    // The spectator connected before the restart was never dropped and still receives.
    const frames = watcher.frames.length;
    await until(() => watcher.frames.length > frames, 10_000, "patches after the restart");
    expect(watcher.seen.closed).toBeUndefined();
    watcher.ws.close();
    // socket.io's adapter carries on too: a training step posted to the second process reaches the
    // first one's /progress client (connected before the restart) and the third one's board.
    const metrics = { step: 1, reward: 0.5, accuracy: 0.25, kl: null, entropy: 1.2, clipFraction: 0, loss: 0.1, responseLength: 12 };
    const posted = await fetch(`${servers[1]!.base}/api/training/events`, { method: "POST", headers: admin, body: JSON.stringify({ type: "progress", event: { runId: "after-restart", title: "GRPO after the restart", steps: 2, metrics } }) });
    expect(posted.status).toBe(202);
    await until(() => heard.includes("after-restart"), 10_000, "the step on the first process's /progress");
    const board = await json(`${servers[2]!.base}/api/training/after-restart`);
    expect(board.status).toBe(200);
    expect(board.json).toMatchObject({ runId: "after-restart", steps: 2, history: [{ step: 1, reward: 0.5 }] });
    expect(progress.connected).toBe(true);
    progress.close();
  }, 240_000);

  it("a process killed: its rooms come back in the others, each once; the others' spectators notice nothing", async () => {
    const pids = await Promise.all(servers.map(pidOf));
    const victim = servers[2]!;
    const victimPid = pids[2]!;
    const survivors = servers.slice(0, 2);
    const registry = new RoomRegistry(store);
    const victimRooms = registry.list().filter((r) => r.owner.pid === victimPid).map((r) => r.roomId);
    expect(victimRooms.length).toBeGreaterThan(0);
    // A spectator of a survivor's room, watching through the kill.
    const survivorRoom = registry.list().find((r) => r.owner.pid === pids[0])!.roomId;
    const watcher = await joinRoom(survivors[1]!, survivorRoom);
    expect(watcher.host).toBe(address(servers[0]!));

    // Colyseus's listings in Redis, by room: the dead process's go, none is left under its id.
    const conn = new Redis(redis.url);
    const listings = async () => Object.values(await conn.hgetall(ROOMCACHES_KEY)).map((v) => JSON.parse(v) as { roomId: string; processId: string });
    const victimProcess = (await listings()).find((l) => l.roomId === victimRooms[0])!.processId;
    expect((await listings()).filter((l) => l.processId === victimProcess).map((l) => l.roomId).sort()).toEqual([...victimRooms].sort());

    victim.child.kill("SIGKILL");
    for (const s of survivors) await until(async () => (await listed(s)).sort().join() === [...ids].sort().join(), 60_000, "the killed process's rooms listed again");
    // Exactly one listing a room, none the dead process's: nothing stale for a later listing to show.
    const left = await listings();
    conn.disconnect();
    expect(left.map((l) => l.roomId).sort()).toEqual([...ids].sort());
    expect(left.filter((l) => l.processId === victimProcess)).toEqual([]);
    // Each recreated once: listed once by each survivor, owned by one survivor in the registry.
    await expectEachListedOnce(survivors, ids);
    const after = registry.list();
    expect(after.map((r) => r.roomId).sort()).toEqual([...ids].sort());
    for (const r of after) expect(pids.slice(0, 2)).toContain(r.owner.pid);
    expect(survivors.reduce((n, s) => n + recreatedBy(s), 0)).toBe(victimRooms.length);
    // The recreated rooms play and take spectators again.
    const back = await joinRoom(survivors[0]!, victimRooms[0]!);
    const f0 = back.frames.length;
    await until(() => back.frames.length > f0, 15_000, "patches of a recreated room");
    back.ws.close();
    // The survivor's own spectator noticed nothing.
    const frames = watcher.frames.length;
    await until(() => watcher.frames.length > frames, 10_000, "patches after the kill");
    expect(watcher.seen.closed).toBeUndefined();
    watcher.ws.close();
  }, 240_000);
});

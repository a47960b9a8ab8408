/**
 * A paused process that wakes after its rooms were taken over (issue 32): three `serve` processes
 * on one machine, one Redis and one store. The victim's rooms have spectators; it is paused
 * (SIGSTOP), declared dead when its heartbeat expires, and its rooms are recreated by the two
 * others, where new spectators join them. Meanwhile some of the victim's spectators give up (their
 * sockets closed, as a browser's would be): when the victim wakes (SIGCONT), the first thing its
 * event loop sees is those clients leaving, and Colyseus writes each room's listing again (its
 * client count) before the victim's first heartbeat can tell it that it is dead. Those writes must
 * not land: for seconds after the wake, Redis holds one listing per room, none of the victim's,
 * the victim's room count does not come back, and the recreated rooms keep their spectators and
 * take new seats where they now live. Paused inside a registry write, it holds the registry's lock
 * file: the survivors break it (stale: its owner is stopped) rather than wait for it to wake.
 * Nor does it write its rooms' logs: each of its rooms, paused
 * (almost always) in the tick that ends an episode (one step an episode), would log that episode
 * on waking, after its new home had played it again; each episode is in its room's log once.
 */
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ownerKey } from "../../store/owner.js";
import { ROOMS_FILE, RoomRegistry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { episodesLogged, listingsIn, expectEachListedOnce, groupOfFile, joinRoom, json, listed, pidOf, recreatedBy, spreadRooms, wakeAndWatch } from "./group-checks.js";

/** Colyseus's room counts by process (the key its Stats module keeps them in). */
const ROOMCOUNT_KEY = "roomcount";

type Spectator = Awaited<ReturnType<typeof joinRoom>>;

const group = groupOfFile(3, "sw-paused-wakes-");

const address = (s: Served) => s.base.replace(/^http:\/\//, "");
const listings = () => listingsIn(group.conn);

describe("a paused process that wakes after its rooms were taken over", () => {
  it("writes nothing into the group's listings, and its rooms' spectators stay where the rooms now live", async () => {
    const { servers, store, conn } = group;
    // One step an episode, then a second's tick: paused, a room is almost always in the tick that ends its episode.
    const ids = await spreadRooms(servers, store, 9, (i) => ({ world: "tomi", seed: 70 + i, loop: true, tickMs: 1000, pauseMs: 0, maxSteps: 1 }));
    const pids = await Promise.all(servers.map(pidOf));
    const [victim, ...survivors] = servers as [Served, Served, Served];
    const registry = new RoomRegistry(store);
    const victimRooms = registry.list().filter((r) => r.owner.pid === pids[0]).map((r) => r.roomId);
    expect(victimRooms.length).toBeGreaterThan(0);
    for (const s of servers) await until(async () => (await listed(s)).sort().join() === [...ids].sort().join(), 30_000, `the rooms listed by ${s.base}`);
    const victimProcess = (await listings()).find((l) => l.roomId === victimRooms[0])!.processId;
    expect(await conn.hexists(ROOMCOUNT_KEY, victimProcess)).toBe(1);

    // Two spectators in each of the victim's rooms, their seats reserved through a survivor.
    const watching: Spectator[] = [];
    for (const roomId of victimRooms) for (let k = 0; k < 2; k++) watching.push(await joinRoom(survivors[k]!, roomId));
    for (const w of watching) expect(w.host).toBe(address(victim));

    victim.child.kill("SIGSTOP");
    // Paused in the tick that ends its rooms' episodes, it may be inside a registry write (each
    // episode's number goes into the room registry): it holds that registry's lock, and the run
    // registry's, for as long as it is stopped. Held here for certain: the survivors must claim its
    // rooms all the same (the lock of a stopped process is broken once stale, store/file-lock.ts).
    for (const file of [ROOMS_FILE, "db.json"]) writeFileSync(join(store, `${file}.lock`), JSON.stringify({ pid: pids[0], host: hostname(), since: new Date().toISOString() }));
    const logsAtPause = new Map(registry.list().filter((e) => victimRooms.includes(e.roomId)).map((e) => [e.runId!, episodesLogged(store, e.runId!).length]));
    await until(() => registry.list().every((r) => r.owner.pid !== pids[0]), 90_000, "the paused process's rooms to be claimed");
    for (const s of survivors) await until(async () => (await listed(s)).sort().join() === [...ids].sort().join(), 60_000, `the rooms listed again by ${s.base}`);
    await until(() => survivors.reduce((n, s) => n + recreatedBy(s), 0) === victimRooms.length, 30_000, "the recreation log lines");
    const hostOf = new Map(registry.list().map((r) => [r.roomId, address(servers[pids.indexOf(r.owner.pid)]!)]));
    const taken = await listings();
    expect(taken.filter((l) => l.processId === victimProcess)).toEqual([]);

    // New spectators of the recreated rooms, at the survivors.
    const rejoined: { roomId: string; client: Spectator }[] = [];
    for (const [i, roomId] of victimRooms.entries()) rejoined.push({ roomId, client: await joinRoom(survivors[i % 2]!, roomId) });
    for (const { roomId, client } of rejoined) expect(client.host).toBe(hostOf.get(roomId));
    // Half the victim's spectators give up while it is paused: it reads their sockets' ends first thing when it wakes.
    for (const w of watching.filter((_, i) => i % 2 === 0)) w.ws.terminate();

    // For five seconds from the wake (it exits within the first), Redis never holds a listing of the
    // victim, nor loses one, and the victim's room count stays gone.
    const { exitCode, wrong, taker } = await wakeAndWatch(victim, async () => {
      const wrong: string[] = [];
      const now = await listings();
      const stale = now.filter((l) => l.processId === victimProcess).map((l) => l.roomId);
      if (stale.length) wrong.push(`listed as the dead process's: ${stale.join(", ")}`);
      const missing = ids.filter((id) => !now.some((l) => l.roomId === id));
      if (missing.length) wrong.push(`not listed: ${missing.map((id) => `${id} (${victimRooms.includes(id) ? "recreated" : "a survivor's own"})`).join(", ")}`);
      const unknown = now.filter((l) => !ids.includes(l.roomId)).map((l) => l.roomId);
      if (unknown.length) wrong.push(`listed but never created: ${unknown.join(", ")}`);
      if (await conn.hexists(ROOMCOUNT_KEY, victimProcess)) wrong.push("the dead process's room count is back");
      return wrong;
    });
    expect(exitCode).toBe(1);
    expect(wrong).toEqual([]);
    expect(registry.list().map((r) => ownerKey(r.owner))).toContain(taker);

    // One listing a room, each at the address of the survivor that plays it.
    const after = await listings();
    expect(after.map((l) => l.roomId).sort()).toEqual([...ids].sort());
    for (const l of after) expect(l.publicAddress).toBe(hostOf.get(l.roomId));
    await expectEachListedOnce(survivors, ids);
    expect(new RoomRegistry(store).list().every((r) => r.owner.pid !== pids[0])).toBe(true);
    // Each episode of the victim's rooms logged once, in order (the victim's own last one, which
    // its new home played again, not added on its waking).
    // Once its new home has played the episode the room was in again, and two more.
    for (const [runId, n] of logsAtPause) await until(() => episodesLogged(store, runId).length >= n + 3, 30_000, `three more episodes in ${runId}'s log`);
    for (const r of new RoomRegistry(store).list().filter((e) => victimRooms.includes(e.roomId))) {
      const logged = episodesLogged(store, r.runId!);
      expect(logged, r.roomId).toEqual(Array.from({ length: logged.length }, (_, i) => i + 1));
    }

    // The spectators of the recreated rooms were not taken back: still connected, still receiving;
    // and a seat reserved through either survivor is at the room's new home.
    const frames = rejoined.map(({ client }) => client.frames.length);
    await until(() => rejoined.every(({ client }, i) => client.frames.length > frames[i]!), 15_000, "patches of the recreated rooms after the wake");
    for (const { client } of rejoined) expect(client.seen.closed).toBeUndefined();
    for (const roomId of victimRooms) {
      for (const s of survivors) {
        const seat = await json(`${s.base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        expect(seat.status, JSON.stringify(seat.json)).toBe(200);
        expect(seat.json.publicAddress).toBe(hostOf.get(roomId));
      }
    }
    for (const { client } of rejoined) client.ws.close();
  }, 300_000);
});

/**
 * A paused process that wakes after its rooms were taken over and after Redis restarted empty
 * (issue 32): its tombstone, which says it was declared dead, is gone with everything else Redis
 * held, and its heartbeat would be answered as a new member's. Two `serve` processes, one Redis
 * without persistence, one store: the victim is paused (SIGSTOP) until the survivor has recreated
 * its rooms, Redis is killed and started empty, and the survivor lists every room again; woken
 * (SIGCONT), the victim must learn from the store (the room registry names the survivor as its
 * rooms' owner) that it was declared dead, and exit writing nothing: no listing of its own in
 * Redis, no line in its rooms' logs.
 */
import { describe, expect, it } from "vitest";
import { ownerKey } from "../../store/owner.js";
import { RoomRegistry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { episodesLogged, listingsIn, groupOfFile, listed, pidOf, recreatedBy, spreadRooms, wakeAndWatch } from "./group-checks.js";

const group = groupOfFile(2, "sw-tombstone-lost-");

const listings = () => listingsIn(group.conn);

describe("a paused process whose tombstone Redis lost", () => {
  it("learns from the store that it was declared dead, and exits writing nothing", async () => {
    const { redis, servers, store } = group;
    // One step an episode, then a second's tick: woken, a room would log the episode it was in at once.
    const ids = await spreadRooms(servers, store, 4, (i) => ({ world: "tomi", seed: 90 + i, loop: true, tickMs: 1000, pauseMs: 0, maxSteps: 1 }));
    const pids = await Promise.all(servers.map(pidOf));
    const [victim, survivor] = servers as [Served, Served];
    const registry = new RoomRegistry(store);
    const victimRooms = registry.list().filter((r) => r.owner.pid === pids[0]).map((r) => r.roomId);
    expect(victimRooms.length).toBeGreaterThan(0);
    await until(async () => (await listed(victim)).length === ids.length, 30_000, "the rooms listed");
    const victimProcess = (await listings()).find((l) => l.roomId === victimRooms[0])!.processId;

    victim.child.kill("SIGSTOP");
    const logsAtPause = new Map(registry.list().filter((e) => victimRooms.includes(e.roomId)).map((e) => [e.runId!, episodesLogged(store, e.runId!).length]));
    await until(() => registry.list().every((r) => r.owner.pid !== pids[0]), 90_000, "the paused process's rooms to be claimed");
    await until(() => recreatedBy(survivor) === victimRooms.length, 30_000, "the recreation log lines");
    // Redis restarts empty: the tombstone and the members go; the survivor lists every room again.
    await redis.restart();
    await until(async () => (await listings().catch(() => [])).length === ids.length, 30_000, "the survivor's listings after the restart");

    const { exitCode, wrong, taker } = await wakeAndWatch(victim, async () => {
      const stale = (await listings()).filter((l) => l.processId === victimProcess).map((l) => l.roomId);
      return stale.length ? [`listed as the dead process's: ${stale.join(", ")}`] : [];
    });
    expect(exitCode).toBe(1);
    expect(wrong).toEqual([]);
    expect(taker).toBe(ownerKey(registry.list().find((r) => r.roomId === victimRooms[0])!.owner));
    expect(registry.list().every((r) => r.owner.pid === pids[1])).toBe(true);
    // Each episode of its rooms logged once, in order: nothing of the victim's after the take-over.
    for (const [runId, n] of logsAtPause) await until(() => episodesLogged(store, runId).length >= n + 3, 30_000, `three more episodes in ${runId}'s log`);
    for (const r of registry.list().filter((e) => victimRooms.includes(e.roomId))) {
      const logged = episodesLogged(store, r.runId!);
      expect(logged, r.roomId).toEqual(Array.from({ length: logged.length }, (_, i) => i + 1));
    }
    expect((await listings()).map((l) => l.roomId).sort()).toEqual([...ids].sort());
  }, 300_000);
});

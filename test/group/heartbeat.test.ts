/**
 * A process of another machine that stops (issue 32): three `serve` processes on one Redis and one
 * store, each named as a machine of its own (SOCIALWORLD_HOST_ID), so that no pid can tell one
 * whether another is alive; only the heartbeat in Redis can. One is paused (SIGSTOP): its key
 * expires, its rooms are recreated by the two others, each room once (the tombstone in Redis
 * gives the dead process one taker), and what it had listed in Colyseus's driver goes with it.
 * Woken up (SIGCONT), it finds itself declared dead and stops without writing anything.
 */
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RoomRegistry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { expectEachListedOnce, json, listed, recreatedBy, spreadRooms, startGroup } from "./group-checks.js";

let servers: Served[];
let store: string;
const hosts = ["machine-a", "machine-b", "machine-c"];

beforeAll(async () => {
  ({ servers, store } = await startGroup(hosts.length, "sw-heartbeat-", (i) => ({ SOCIALWORLD_HOST_ID: hosts[i]! })));
}, 240_000);

afterAll(() => {
  const paused = servers?.[0]?.child;
  if (paused && paused.exitCode === null && paused.signalCode === null) paused.kill("SIGCONT");
});


describe("a process of another machine that stops heartbeating", () => {
  const ids: string[] = [];

  it("rooms are spread over the three machines, each named by its own host id in the registry", async () => {
    ids.push(...(await spreadRooms(servers, store, 6, (i) => ({ world: "tomi", seed: 60 + i, loop: true, tickMs: 200, pauseMs: 200 }))));
    expect([...new Set(new RoomRegistry(store).list().map((r) => r.owner.host))].sort()).toEqual(hosts);
    // Every room created is listed once, none besides (a create answered twice leaves no second room).
    for (const s of servers) await until(async () => (await listed(s)).sort().join() === [...ids].sort().join(), 30_000, `the rooms listed by ${s.base}`);
  }, 120_000);

  it("paused: its rooms are recreated by the others, each once; woken up, it stops by itself", async () => {
    const registry = new RoomRegistry(store);
    const victim = servers[0]!;
    const survivors = servers.slice(1);
    const victimRooms = registry.list().filter((r) => r.owner.host === "machine-a").map((r) => r.roomId);
    expect(victimRooms.length).toBeGreaterThan(0);

    victim.child.kill("SIGSTOP");
    // The heartbeat's key lives 10 s; the survivors look every second.
    await until(() => registry.list().every((r) => r.owner.host !== "machine-a"), 90_000, "the paused process's rooms to be claimed");
    for (const s of survivors) await until(async () => (await listed(s)).sort().join() === [...ids].sort().join(), 60_000, `the rooms listed again by ${s.base}`);
    // Each recreated once: the survivors' logs add up to the paused process's rooms, each listed once.
    await until(() => survivors.reduce((n, s) => n + recreatedBy(s), 0) === victimRooms.length, 30_000, "the recreation log lines");
    await expectEachListedOnce(survivors, ids);
    expect(registry.list().map((r) => r.roomId).sort()).toEqual([...ids].sort());
    // A recreated room is the survivor's: a seat in it is reserved at a survivor's address.
    const seat = await json(`${survivors[0]!.base}/matchmake/joinById/${victimRooms[0]}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(seat.status, JSON.stringify(seat.json)).toBe(200);
    expect(survivors.map((s) => s.base.replace(/^http:\/\//, ""))).toContain(seat.json.publicAddress);

    // Woken up, it finds its tombstone at its next heartbeat and stops, writing nothing.
    const exited = once(victim.child, "exit");
    victim.child.kill("SIGCONT");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(1);
    expect(victim.out()).toMatch(/this process missed its heartbeat for 10 s and was declared dead; its rooms are recreated by machine-[bc]\//);
    // The registry still names the survivors for every room, and they still list each room once.
    expect(new RoomRegistry(store).list().every((r) => r.owner.host !== "machine-a")).toBe(true);
    await expectEachListedOnce(survivors, ids);
  }, 240_000);
});

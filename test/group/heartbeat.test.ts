/**
 * A process that stops answering (issue 32): three `serve` processes on one Redis and one store.
 * One is paused (SIGSTOP): its pid lives on, so only its heartbeat in Redis can tell the others
 * that it is gone. Its key expires, its rooms are recreated by the two others, each room once (the
 * tombstone in Redis gives the dead process one taker), and what it had listed in Colyseus's
 * driver goes with it. Woken up (SIGCONT), it finds itself declared dead and stops without writing
 * anything. Run twice: the three as machines of their own (SOCIALWORLD_HOST_ID), where no pid can
 * tell one whether another is alive, and the three on this machine, where a pid is there to see.
 */
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownerKey, type Owner } from "../../store/owner.js";
import { RoomRegistry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { expectEachListedOnce, json, listed, recreatedBy, spreadRooms, startGroup } from "./group-checks.js";

const SETUPS = [
  { where: "three machines", hosts: ["machine-a", "machine-b", "machine-c"] },
  { where: "one machine", hosts: undefined },
] as const;

describe.each(SETUPS)("a process that stops heartbeating ($where)", ({ hosts }) => {
  let servers: Served[];
  let store: string;
  const ids: string[] = [];
  /** Each process as the registry names its rooms' owner. */
  let owners: string[];

  beforeAll(async () => {
    ({ servers, store } = await startGroup(3, "sw-heartbeat-", (i): Record<string, string> => (hosts ? { SOCIALWORLD_HOST_ID: hosts[i]! } : {})));
  }, 240_000);

  afterAll(() => {
    // The paused one is woken (a process left stopped outlives the file), the others stop with this setup.
    for (const s of servers ?? []) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill(s === servers[0] ? "SIGCONT" : "SIGKILL");
  });

  it("rooms are spread over the three processes, the registry naming each by its host id", async () => {
    const registry = new RoomRegistry(store);
    ids.push(...(await spreadRooms(servers, store, 6, (i) => ({ world: "tomi", seed: 60 + i, loop: true, tickMs: 200, pauseMs: 200 }))));
    const health = await Promise.all(servers.map(async (s) => (await json(`${s.base}/api/health`)).json as { pid: number }));
    owners = health.map((h) => ownerKey(registry.list().find((r) => r.owner.pid === h.pid)!.owner));
    expect([...new Set(registry.list().map((r) => r.owner.host))].sort()).toEqual(hosts ? [...hosts] : [registry.list()[0]!.owner.host]);
    // Every room created is listed once, none besides (a create answered twice leaves no second room).
    for (const s of servers) await until(async () => (await listed(s)).sort().join() === [...ids].sort().join(), 30_000, `the rooms listed by ${s.base}`);
  }, 120_000);

  it("paused: its rooms are recreated by the others, each once; woken up, it stops by itself", async () => {
    const registry = new RoomRegistry(store);
    const victim = servers[0]!;
    const survivors = servers.slice(1);
    const isVictim = (o: Owner) => ownerKey(o) === owners[0];
    const victimRooms = registry.list().filter((r) => isVictim(r.owner)).map((r) => r.roomId);
    expect(victimRooms.length).toBeGreaterThan(0);

    victim.child.kill("SIGSTOP");
    // The heartbeat's key lives 10 s; the survivors look every second.
    await until(() => registry.list().every((r) => !isVictim(r.owner)), 90_000, "the paused process's rooms to be claimed");
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
    const taker = /this process missed its heartbeat for 10 s and was declared dead; its rooms are recreated by (\S+)\. /.exec(victim.out())?.[1];
    expect(owners.slice(1)).toContain(taker);
    // The registry still names the survivors for every room, and they still list each room once.
    expect(new RoomRegistry(store).list().every((r) => !isVictim(r.owner))).toBe(true);
    await expectEachListedOnce(survivors, ids);
  }, 240_000);
});

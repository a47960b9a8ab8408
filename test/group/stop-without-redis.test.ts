/**
 * A process of a group stopped (SIGTERM) while the group's Redis does not answer (issue 32): it
 * waits for Redis a bounded while (5 s into its shutdown), then stops without it, says so, and
 * exits with status 1; what its rooms logged is intact (each log begins with what it held at the
 * SIGTERM, byte for byte, and every line is whole); and once Redis is back the other process
 * recreates its rooms, each once, as after a kill. Twice: Redis killed (the connections
 * reconnecting, their commands queued; it comes back empty), and Redis frozen with SIGSTOP (the
 * connections up, their commands sent and never answered; it wakes with its data). On the code
 * before this, the process never exited while Redis was away: Colyseus's shutdown waited on
 * commands that would be answered only once Redis was back.
 */
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RoomRegistry, type RoomEntry } from "../../store/room-registry.js";
import { serve, type Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { episodesLogged, groupOfFile, listed, pidOf, recreatedBy, spreadRooms } from "./group-checks.js";

const group = groupOfFile(2, "sw-stop-without-redis-");

/** From the SIGTERM to the exit, at most: the 5 s wait for Redis, then the shutdown itself, on a loaded machine. */
const EXIT_WITHIN_S = 20;

/**
 * Rooms spread over `survivor` and `victim`; Redis made unreachable by `cut`, `victim` stopped
 * (SIGTERM), Redis given back by `heal`: checks the victim's exit, its logs, and the survivor
 * recreating its rooms.
 */
async function stopWhileCut(survivor: Served, victim: Served, seed: number, cut: () => Promise<void>, heal: () => Promise<void>): Promise<void> {
  const { store } = group;
  await spreadRooms([survivor, victim], store, 2, (i) => ({ world: "tomi", seed: seed + i, loop: true, tickMs: 100, pauseMs: 100 }));
  const [survivorPid, victimPid] = await Promise.all([pidOf(survivor), pidOf(victim)]);
  const victimRooms = new RoomRegistry(store).list().filter((e) => e.owner.pid === victimPid);
  expect(victimRooms.length).toBeGreaterThan(0);
  await until(() => victimRooms.every((e) => episodesLogged(store, e.runId!).length >= 1), 60_000, "an episode logged by each of the victim's rooms");
  const logOf = (e: RoomEntry) => join(store, "runs", e.runId!, "episodes.jsonl");
  const recreatedBefore = recreatedBy(survivor);

  await cut();
  const before = victimRooms.map((e) => readFileSync(logOf(e)));
  let exit: { code: number | null; at: number } | undefined;
  void once(victim.child, "exit").then(([code]) => (exit = { code: code as number | null, at: Date.now() }));
  const sent = Date.now();
  victim.child.kill("SIGTERM");
  await until(() => exit !== undefined, 60_000, "the process stopped while Redis is away to exit");
  expect((exit!.at - sent) / 1000).toBeLessThan(EXIT_WITHIN_S);
  expect(exit!.code).toBe(1);
  expect(victim.out()).toContain("SIGTERM: stopping the rooms and flushing their logs");
  expect(victim.out()).toMatch(/\[group\] Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer for 5 s of the shutdown: stopping without it/);
  expect(victim.out()).toContain("socialworld serve: stopped without Redis");
  // Nothing it left queued for Redis failed unhandled, and Colyseus's shutdown went through.
  expect(victim.out()).not.toMatch(/Unhandled|error during shutdown|Connection is closed/);

  // Its logs: what they held at the SIGTERM, then whole lines only (the episodes it aborted).
  const intact = () => {
    for (const [i, e] of victimRooms.entries()) {
      const now = readFileSync(logOf(e));
      expect(now.subarray(0, before[i]!.length).equals(before[i]!), logOf(e)).toBe(true);
      expect(readEpisodeLog(logOf(e)).torn, logOf(e)).toBe(false);
      expect(existsSync(`${logOf(e)}.torn`), logOf(e)).toBe(false);
    }
  };
  intact();

  // Redis back: the survivor recreates the victim's rooms, each once, on their logs.
  await heal();
  const ids = new RoomRegistry(store).list().map((e) => e.roomId);
  await until(async () => (await listed(survivor).catch(() => [])).sort().join() === [...ids].sort().join(), 60_000, "the victim's rooms listed again by the survivor");
  expect(new RoomRegistry(store).list().map((e) => e.owner.pid)).toEqual(ids.map(() => survivorPid));
  // It says so once they are all back (after the last is listed).
  await until(() => recreatedBy(survivor) - recreatedBefore >= victimRooms.length, 30_000, "the survivor to say it recreated them");
  expect(recreatedBy(survivor) - recreatedBefore).toBe(victimRooms.length);
  intact();
}

describe("a process of a group stopped while Redis is away", () => {
  it("Redis killed: it exits within a bound, saying so, with its logs intact; its rooms come back in the other process once an empty Redis is started", async () => {
    const { servers, redis } = group;
    await stopWhileCut(
      servers[0]!,
      servers[1]!,
      70,
      () => redis.stop(),
      () => redis.restart(),
    );
  }, 240_000);

  it("Redis frozen (SIGSTOP): the same, its commands sent and never answered; the rooms come back once Redis wakes", async () => {
    const { servers, store, redis } = group;
    const victim = await serve(store, ["--redis", redis.url]);
    await stopWhileCut(
      servers[0]!,
      victim,
      90,
      async () => redis.pause(),
      async () => redis.resume(),
    );
  }, 240_000);
});

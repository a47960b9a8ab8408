/**
 * A process of a group stopped (SIGTERM) while the group's Redis is away (frozen with SIGSTOP, or
 * killed), Redis back (SIGCONT, or started again) before the 5 s the shutdown gives it (issue 32):
 * the shutdown goes on with Redis, as if it had never been away. The process stops as a process stops normally: status 0, "stopped;
 * every log is flushed.", its heartbeat key deleted, and nothing failed on the way (no command
 * left waiting on a connection when it closed, rejected unhandled: that would end the process
 * with Node's unhandled-rejection error instead, status 1). At several moments of the shutdown,
 * with spectators connected through it so that Redis has commands in flight
 * (listings, seat counts, socket.io's) when it freezes and when it wakes.
 */
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { serve } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { groupOfFile, joinRoom, pidOf, spreadRooms } from "./group-checks.js";

const group = groupOfFile(1, "sw-redis-back-in-time-");

/**
 * How Redis goes away at the SIGTERM and comes back, and after how many seconds: all within the 5 s
 * the shutdown waits for it. Frozen, the connections stay up with their commands sent; killed and
 * started again (empty), they reconnect, each on its own schedule, their commands queued meanwhile.
 */
const CASES = [
  { away: "frozen", backS: 0.3 },
  { away: "frozen", backS: 3 },
  { away: "restarted", backS: 1.5 },
] as const;

describe("a process stopped while Redis is away, Redis back within the shutdown's wait", () => {
  for (const [i, { away, backS }] of CASES.entries()) {
    it(`Redis ${away}, back ${backS} s after the SIGTERM: the process stops normally (status 0), none of its commands failed unhandled`, async () => {
      const { servers, store, redis, conn } = group;
      const victim = await serve(store, ["--redis", redis.url]);
      const rooms = await spreadRooms([servers[0]!, victim], store, 2, (k) => ({ world: "tomi", seed: 300 + 10 * i + k, loop: true, tickMs: 100, pauseMs: 100 }));
      // Spectators through the victim (some of its rooms, some of the other's): seat counts and room calls in flight.
      const joined = await Promise.all(rooms.map((id) => joinRoom(victim, id)));
      const victimPid = await pidOf(victim);
      const aliveKeys = async () => (await conn.keys("socialworld:process:*:alive")).filter((k) => k.includes(`/${victimPid}/`));
      expect(await aliveKeys()).toHaveLength(1);

      const exited = once(victim.child, "exit");
      if (away === "frozen") redis.pause();
      else await redis.stop();
      victim.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, backS * 1000));
      if (away === "frozen") redis.resume();
      else await redis.restart();
      const [code] = (await exited) as [number | null];
      for (const j of joined) j.ws.close();

      const out = victim.out();
      expect(out, out.slice(-3000)).not.toMatch(/Unhandled|unhandled|Connection is closed|error during shutdown|did not answer/);
      expect(out).toContain("stopped; every log is flushed.");
      expect(code).toBe(0);
      // Deleted as the process stopped (a Redis restarted empty has none of it anyway).
      await until(async () => (await aliveKeys()).length === 0, 10_000, "the victim's heartbeat key deleted");
    }, 120_000);
  }
});

/**
 * The lease that makes one process of a group the trainer of a self-play pool
 * (server/group/trainer-lease.ts), against a real Redis, the processes played by leases on
 * connections of their own: one holder at a time, a holder that goes silent is replaced once its
 * lease expires, and after Redis restarts empty the pool gets exactly one trainer again.
 */
import type { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { tombstoneKey } from "../../server/group/process-heartbeat.js";
import { redisConnection } from "../../server/group/redis.js";
import { TrainerLease } from "../../server/group/trainer-lease.js";
import { until } from "../server/raw-client.js";
import { redisOfFile } from "./redis-server.js";

// Long enough that a renewal (every third of it) is never late on a loaded machine.
const LEASE_MS = 3000;
const file = redisOfFile();
const connections: Redis[] = [];
const leases: TrainerLease[] = [];

afterAll(async () => {
  for (const l of leases) await l.release().catch(() => undefined);
  for (const c of connections) c.disconnect();
});

/** A process of the group asking for pool `pool`'s lease, with what it was told (gained, lost). */
function processAsking(pool: string, id: string) {
  const conn = redisConnection(file.redis.url, id);
  connections.push(conn);
  const told: boolean[] = [];
  const lease = new TrainerLease(conn, new Fence(tombstoneKey(`machine-${id}/1/1`)), pool, id, (held) => told.push(held), LEASE_MS);
  leases.push(lease);
  return { id, conn, lease, told };
}

const holders = <P extends { lease: TrainerLease }>(ps: P[]): P[] => ps.filter((p) => p.lease.holds);

describe("a self-play pool's trainer lease", () => {
  it("has one holder among three processes; a holder that releases or goes silent is replaced by one other", async () => {
    const ps = ["a", "b", "c"].map((id) => processAsking("pool-1", id));
    await until(() => holders(ps).length === 1, 5000, "a holder");
    // It stays one while the lease is renewed, well past its life.
    const first = holders(ps)[0]!;
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, LEASE_MS / 2));
      expect(holders(ps).map((p) => p.id)).toEqual([first.id]);
    }
    expect(await first.lease.holderNow()).toBe(first.id);
    expect(first.told).toEqual([true]);

    // Released (its last room of the pool closed): another takes it within a renewal.
    await first.lease.release();
    const rest = ps.filter((p) => p !== first);
    await until(() => holders(rest).length === 1, LEASE_MS + 2000, "the next holder");
    const second = holders(rest)[0]!;
    expect(await second.lease.holderNow()).toBe(second.id);

    // Silent (its process died: no renewals, its connection gone): the last one takes over once the lease expires.
    second.conn.disconnect();
    const last = rest.find((p) => p !== second)!;
    await until(() => last.lease.holds, 10_000, "the holder after the silent one");
    expect(await last.lease.holderNow()).toBe(last.id);
    // The silent one, whose renewals fail, does not think it still trains.
    expect(second.lease.holds).toBe(false);
    expect(second.told).toEqual([true, false]);
  }, 60_000);

  it("gets exactly one holder again after Redis restarts empty", async () => {
    const ps = ["d", "e"].map((id) => processAsking("pool-2", id));
    await until(() => holders(ps).length === 1, 5000, "a holder");
    const toldBefore = ps.map((p) => p.told.length);
    // Down for a whole lease's life (three renewals' time): each process's ticks come while its
    // step waits for Redis (this failed once under load 15, when the restart alone took that long).
    await file.redis.stop();
    await new Promise((r) => setTimeout(r, LEASE_MS));
    await file.redis.restart();
    // Each reconnects by itself; the lease, lost with Redis's data, is taken again by one of them.
    await until(async () => holders(ps).length === 1 && (await ps[0]!.lease.holderNow().catch(() => undefined)) === holders(ps)[0]?.id, 20_000, "one holder after the restart");
    const holder = holders(ps)[0]!;
    // Taken once: no process took it and then believed it lost (its key standing, the pool without a
    // trainer until it expired), as one did when the steps of several ticks ran in a row on Redis's return.
    expect(ps.flatMap((p, i) => p.told.slice(toldBefore[i])).filter((gained) => gained)).toEqual([true]);
    // And it stays the only one.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, LEASE_MS / 2));
      expect(holders(ps).map((p) => p.id)).toEqual([holder.id]);
    }
    expect(await ps[1]!.lease.holderNow()).toBe(holder.id);
  }, 60_000);
});

/**
 * The per-address caps a group counts in Redis (server/group/shared-limits.ts), without servers:
 * one token bucket per address whatever process takes from it, and the seats an address holds in
 * the other live processes of the group (a process that stops publishing is forgotten).
 */
import { afterAll, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { tombstoneKey } from "../../server/group/process-heartbeat.js";
import { SharedLimits } from "../../server/group/shared-limits.js";
import { ClientLimitsSchema } from "../../server/security/client-guard.js";
import { redisOfFile } from "./redis-server.js";

const file = redisOfFile();
const opened: SharedLimits[] = [];

afterAll(async () => {
  for (const l of opened) l.close();
});

const limits = ClientLimitsSchema.parse({ reservationBurst: 3, reservationsPerSecond: 0.01 });
function limitsOf(processId: string, seats: Map<string, number>): SharedLimits {
  const l = new SharedLimits(file.conn, new Fence(tombstoneKey(`machine-${processId}/1/1`)), processId, limits, (address) => seats.get(address) ?? 0);
  opened.push(l);
  return l;
}

describe("caps shared in Redis", () => {
  it("one bucket per address, whichever process takes from it", async () => {
    const a = limitsOf("pa", new Map());
    const b = limitsOf("pb", new Map());
    const verdicts = [await a.reservation("10.1.0.1"), await b.reservation("10.1.0.1"), await a.reservation("10.1.0.1"), await b.reservation("10.1.0.1")];
    expect(verdicts.map((v) => v.ok)).toEqual([true, true, true, false]);
    // One token every 100 s: the refusal says so.
    expect(verdicts[3]!.retryAfterMs).toBeGreaterThan(90_000);
    expect((await b.reservation("10.1.0.2")).ok).toBe(true);
  });

  it("the seats of an address in the other members of the group, not in this process nor in strangers", async () => {
    const seatsA = new Map([["10.2.0.1", 2]]);
    const seatsB = new Map([["10.2.0.1", 3]]);
    const seatsC = new Map([["10.2.0.1", 5]]);
    const a = limitsOf("sa", seatsA);
    const b = limitsOf("sb", seatsB);
    const c = limitsOf("sc", seatsC);
    // sa and sb are members (the heartbeat names them); sc is not.
    await file.conn.hset("socialworld:processes", "host/1/0", "sa", "host/2/0", "sb");
    for (const l of [a, b, c]) await l.seatsChanged("10.2.0.1");
    expect(await a.seatsElsewhere("10.2.0.1")).toBe(3);
    expect(await b.seatsElsewhere("10.2.0.1")).toBe(2);
    expect(await a.seatsElsewhere("10.2.0.9")).toBe(0);
    // sb's seats are left: its count goes at once.
    seatsB.set("10.2.0.1", 0);
    await b.seatsChanged("10.2.0.1");
    expect(await a.seatsElsewhere("10.2.0.1")).toBe(0);
    // A process that stops refreshing (dead) is forgotten when its count expires.
    seatsB.set("10.2.0.1", 1);
    await b.seatsChanged("10.2.0.1");
    b.close();
    expect(await a.seatsElsewhere("10.2.0.1")).toBe(1);
    expect(await file.conn.pttl("socialworld:seats:10.2.0.1:sb")).toBeGreaterThan(0);
    expect(await file.conn.pttl("socialworld:seats:10.2.0.1:sb")).toBeLessThanOrEqual(6000);
  });
});

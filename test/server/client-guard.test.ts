/**
 * The limits the server keeps per client (server/security/client-guard.ts), on a clock of the
 * test's own: rates with bursts, cut-offs, and back-off that doubles at each repeat.
 */
import { describe, expect, it } from "vitest";
import { ClientGuard } from "../../server/security/client-guard.js";
import { Concurrency, TokenBuckets } from "../../server/security/rate-limit.js";

describe("client limits", () => {
  it("backs off longer at each repeat, per address and per seat token", () => {
    let now = 0;
    const guard = new ClientGuard({ seatMessageBurst: 2, seatMessagesPerSecond: 1, refusedBeforeCutoff: 3 }, () => now);
    const blocks: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) {
        const v = guard.message("10.0.0.1", "seat-token");
        if (v.kind === "cut") {
          blocks.push(v.blockedMs);
          break;
        }
      }
      expect(guard.reservation("10.0.0.1").ok).toBe(false);
      expect(guard.penalties.check("seat:seat-token").ok).toBe(false);
      now += blocks.at(-1)! + 1;
      expect(guard.penalties.check("seat:seat-token").ok).toBe(true);
    }
    expect(blocks).toEqual([1000, 2000, 4000]);
    // Another address is not held back.
    expect(guard.message("10.0.0.2", undefined).kind).toBe("ok");
  });

  it("refills a bucket at its rate, up to its burst", () => {
    let now = 0;
    const b = new TokenBuckets(3, 2, () => now);
    expect([1, 2, 3, 4].map(() => b.take("k").ok)).toEqual([true, true, true, false]);
    expect(b.take("k").retryAfterMs).toBe(500);
    now += 500;
    expect(b.take("k").ok).toBe(true);
    now += 60_000;
    expect([1, 2, 3, 4].map(() => b.take("k").ok)).toEqual([true, true, true, false]);
    expect(b.take("other").ok).toBe(true);
  });

  it("counts requests in progress per key, and frees a slot once", () => {
    const c = new Concurrency(2);
    const a = c.acquire("x")!;
    const b = c.acquire("x")!;
    expect(c.acquire("x")).toBeUndefined();
    expect(c.acquire("y")).toBeDefined();
    a();
    a();
    expect(c.inProgress("x")).toBe(1);
    expect(c.acquire("x")).toBeDefined();
    b();
  });
});

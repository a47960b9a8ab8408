/**
 * The request pace (agents/llm/pacer.ts, the `rpm=N` option): starts booked evenly spaced in call
 * order, on a clock the test moves; a wait that is aborted returns at once.
 */
import { describe, expect, it } from "vitest";
import { Pacer } from "../../agents/llm/pacer.js";

describe("Pacer", () => {
  it("spaces starts 60/rpm seconds apart, from now when idle", () => {
    let now = 1_000;
    const p = new Pacer(120, () => now);
    expect([p.book(), p.book(), p.book()]).toEqual([0, 500, 1000]);
    now += 400;
    // The fourth start is booked after the third (at 2,500), not at the clock.
    expect(p.book()).toBe(1100);
    now += 10_000;
    expect(p.book()).toBe(0);
  });

  it("refuses a rate that is not positive", () => {
    expect(() => new Pacer(0)).toThrow("a rate must be positive (got 0 a minute)");
    expect(() => new Pacer(Number.NaN)).toThrow(/a rate must be positive/);
  });

  it("waits its turn, and returns at once when aborted", async () => {
    const p = new Pacer(600);
    const t0 = performance.now();
    await p.wait();
    await p.wait();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(95);
    const slow = new Pacer(1);
    await slow.wait();
    const controller = new AbortController();
    const t1 = performance.now();
    const waiting = slow.wait(controller.signal);
    controller.abort();
    await waiting;
    expect(performance.now() - t1).toBeLessThan(1000);
  });
});

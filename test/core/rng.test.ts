import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";

describe("Rng", () => {
  it("replays the same stream from the same seed, and a different one from another", () => {
    const a = Rng.seeded(42);
    const b = Rng.seeded(42);
    const c = Rng.seeded(43);
    const xs = Array.from({ length: 100 }, () => a.uint32());
    expect(Array.from({ length: 100 }, () => b.uint32())).toEqual(xs);
    expect(Array.from({ length: 100 }, () => c.uint32())).not.toEqual(xs);
  });

  it("resumes exactly from a saved state", () => {
    const a = Rng.seeded("tomi:7");
    for (let i = 0; i < 10; i++) a.next();
    const saved = a.state();
    const expected = Array.from({ length: 20 }, () => a.next());
    const b = Rng.fromState(saved);
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(expected);
  });

  it("draws integers uniformly within range", () => {
    const r = Rng.seeded(1);
    const counts = new Array(6).fill(0);
    for (let i = 0; i < 60000; i++) counts[r.int(6)]++;
    for (const n of counts) expect(Math.abs(n - 10000)).toBeLessThan(400);
    for (let i = 0; i < 1000; i++) {
      const x = r.range(3, 5);
      expect(x).toBeGreaterThanOrEqual(3);
      expect(x).toBeLessThanOrEqual(5);
    }
    expect(() => r.int(0)).toThrow(RangeError);
  });

  it("shuffles into a permutation and samples distinct items", () => {
    const r = Rng.seeded(9);
    const xs = Array.from({ length: 50 }, (_, i) => i);
    const s = r.shuffle(xs);
    expect([...s].sort((x, y) => x - y)).toEqual(xs);
    expect(s).not.toEqual(xs);
    const k = r.sample(xs, 10);
    expect(new Set(k).size).toBe(10);
    expect(() => r.sample(xs, 51)).toThrow(RangeError);
  });
});

/** The exact McNemar test of paired answers, against R's `binom.test(gained, gained + lost)$p.value`. */
import { describe, expect, it } from "vitest";
import { mcnemarExact, pairedChange } from "../../benchmarks/paired-change.js";

describe("the paired change of answers", () => {
  it("gives R's binom.test p-values", () => {
    // binom.test(10, 12): 0.03857422; binom.test(30, 45): 0.0356978; binom.test(0, 6): 0.03125;
    // binom.test(120, 200): 0.005685156; binom.test(5, 10): 1.
    expect(mcnemarExact(10, 2)).toBeCloseTo(0.03857422, 7);
    expect(mcnemarExact(2, 10)).toBeCloseTo(0.03857422, 7);
    expect(mcnemarExact(30, 15)).toBeCloseTo(0.0356978, 6);
    expect(mcnemarExact(0, 6)).toBeCloseTo(0.03125, 7);
    expect(mcnemarExact(120, 80)).toBeCloseTo(0.005685156, 8);
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
  });

  it("counts the questions that changed, by id, and only those both answered", () => {
    const before = new Map([["a", true], ["b", false], ["c", false], ["d", true], ["e", false]]);
    const after = new Map([["a", true], ["b", true], ["c", true], ["d", false], ["x", true]]);
    const c = pairedChange(before, after);
    expect(c).toMatchObject({ gained: 2, lost: 1, p: 1, shared: 4 });
    // The differences 0, +1, +1, -1: mean 0.25, sample sd sqrt(2.75 / 3), over sqrt(4).
    expect(c.difference).toBeCloseTo(0.25, 12);
    expect(c.standardError).toBeCloseTo(Math.sqrt(2.75 / 3) / 2, 12);
    expect(() => pairedChange(new Map([["a", true]]), new Map([["b", true]]))).toThrow(/share no question/);
  });
});

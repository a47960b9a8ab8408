/**
 * The exact McNemar test of paired answers, against R's `binom.test(gained, gained + lost)$p.value`;
 * the question-level and cluster-level standard errors of the change.
 */
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

  it("gives the cluster-level standard error: the differences summed by cluster (CR1), equal to the question-level one for clusters of one", () => {
    // Two clusters of two: x = (+1, +1), y = (0, -1). Mean 1/4; cluster sums about it: 2 - 2/4 = 1.5
    // and -1 - 2/4 = -1.5; sqrt(2 / 1 * (1.5^2 + 1.5^2)) / 4 = 3 / 4.
    const before = new Map([["x/1", false], ["x/2", false], ["y/1", true], ["y/2", true]]);
    const after = new Map([["x/1", true], ["x/2", true], ["y/1", true], ["y/2", false]]);
    const c = pairedChange(before, after, (id) => id.split("/")[0]!);
    expect(c.difference).toBeCloseTo(0.25, 12);
    expect(c.cluster!.clusters).toBe(2);
    expect(c.cluster!.standardError).toBeCloseTo(0.75, 12);
    // Questions that move together in their cluster weigh as one: the same differences in one
    // cluster each are independent again, and the cluster-level s.e. is the question-level one.
    const alone = pairedChange(before, after, (id) => id);
    expect(alone.cluster!.clusters).toBe(4);
    expect(alone.cluster!.standardError).toBeCloseTo(alone.standardError, 12);
    expect(c.cluster!.standardError).toBeGreaterThan(alone.standardError);
    // Without clusters, none is given; one cluster gives no spread to measure.
    expect(pairedChange(before, after).cluster).toBeUndefined();
    expect(pairedChange(before, after, () => "all").cluster).toEqual({ clusters: 1, standardError: 0 });
  });
});

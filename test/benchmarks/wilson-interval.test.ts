/** The Wilson score interval, against R's `prop.test(x, n, correct = FALSE)$conf.int` (the same interval). */
import { describe, expect, it } from "vitest";
import { accuracyCell, wilsonInterval } from "../../benchmarks/wilson-interval.js";

describe("the Wilson interval", () => {
  it("gives R's prop.test(correct = FALSE) bounds", () => {
    // prop.test(5, 10, correct = FALSE): 0.2365931 0.7634069; prop.test(0, 10, ...): 0 0.2775328;
    // prop.test(81, 263, ...): 0.2552885 0.3662096.
    const cases: [number, number, number, number][] = [
      [5, 10, 0.2365931, 0.7634069],
      [0, 10, 0, 0.2775328],
      [10, 10, 0.7224672, 1],
      [81, 263, 0.2552885, 0.3662096],
    ];
    for (const [x, n, low, high] of cases) {
      const i = wilsonInterval(x, n);
      expect(i.low).toBeCloseTo(low, 6);
      expect(i.high).toBeCloseTo(high, 6);
    }
  });

  it("narrows as the questions grow: a 5-point rise at 60% is outside the interval of 400 questions, not of 90", () => {
    const width = (n: number) => {
      const i = wilsonInterval(Math.round(0.6 * n), n);
      return i.high - i.low;
    };
    expect(width(90)).toBeGreaterThan(0.18);
    expect(width(400) / 2).toBeLessThan(0.05);
    expect(width(1600)).toBeCloseTo(width(400) / 2, 2);
  });

  it("refuses counts that are no accuracy, and prints a cell", () => {
    expect(() => wilsonInterval(3, 2)).toThrow(/correct <= total/);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(accuracyCell(182, 291)).toBe("62.5% [56.9, 67.9] (182/291)");
    expect(accuracyCell(0, 0)).toBe("– (0 questions)");
  });
});

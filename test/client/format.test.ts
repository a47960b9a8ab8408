/** The client's number format (client/src/format.ts): one way to write a number, in a header line and on a chart's axis. */
import { describe, expect, it } from "vitest";
import { formatNumber, formatPerceived, formatTicks, pct } from "../../client/src/format.js";

describe("the web client's number format", () => {
  it("writes three significant digits, and powers of ten where fixed digits would read as zero or run long", () => {
    expect(formatNumber(0.00000307)).toBe("3.07e-6");
    expect(formatNumber(0.00000558)).toBe("5.58e-6");
    expect(formatNumber(-0.0000025)).toBe("-2.5e-6");
    expect(formatNumber(0.0012345)).toBe("0.00123");
    expect(formatNumber(0.5)).toBe("0.5");
    expect(formatNumber(0.123456)).toBe("0.123");
    expect(formatNumber(12.3456)).toBe("12.3");
    expect(formatNumber(99.96)).toBe("100");
    expect(formatNumber(1234.4)).toBe("1234");
    expect(formatNumber(123456)).toBe("1.23e5");
    expect(formatNumber(0)).toBe("0");
    expect(formatNumber(null)).toBe("–");
    expect(formatNumber(Number.NaN)).toBe("–");
  });

  it("writes an axis' ticks in one style, the largest tick's", () => {
    expect(formatTicks([0, 0.000001, 0.000002, 0.000003])).toEqual(["0", "1e-6", "2e-6", "3e-6"]);
    expect(formatTicks([0.0000025, 0.000005, 0.0000075])).toEqual(["2.5e-6", "5e-6", "7.5e-6"]);
    expect(formatTicks([0, 0.0005, 0.001, 0.0015])).toEqual(["0", "0.0005", "0.001", "0.0015"]);
    expect(formatTicks([0.25, 0.5, 0.75, 1])).toEqual(["0.25", "0.5", "0.75", "1"]);
    expect(formatTicks([-1, 0, 1])).toEqual(["-1", "0", "1"]);
  });

  it("writes shares as percentages with one decimal", () => {
    expect(pct(0.25)).toBe("25.0%");
    expect(pct(null)).toBe("–");
  });

  it("writes a seat's perceived numbers to four decimals, and to four significant digits where those would read as zero", () => {
    expect(formatPerceived(12)).toBe("12");
    expect(formatPerceived(0.6)).toBe("0.6");
    expect(formatPerceived(123.456789)).toBe("123.4568");
    expect(formatPerceived(0.00004)).toBe("0.00004");
    expect(formatPerceived(-0.0000123456)).toBe("-0.00001235");
    expect(formatPerceived(0.00123456)).toBe("0.0012");
  });
});

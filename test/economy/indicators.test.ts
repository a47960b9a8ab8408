import { describe, expect, it } from "vitest";
import {
  correlationYears,
  economyParams,
  heuristicPolicy,
  okunCorrelation,
  okunRelativeCorrelation,
  pearson,
  phillipsCorrelation,
  simulateEconomy,
  yearlyIndicators,
  type MonthStats,
  type YearRow,
} from "../../worlds/economy/index.js";

/** A month with the fields the yearly indicators read; the rest zero. */
function month(m: number, o: { price: number; priceAfter: number; wage: number; employed: number; production: number }): MonthStats {
  return {
    month: m,
    price: o.price,
    priceAfter: o.priceAfter,
    meanWage: o.wage,
    households: 10,
    employed: o.employed,
    production: o.production,
    demand: 0,
    sold: 0,
    supply: 0,
    imbalance: 0,
    taxRevenue: 0,
    lumpSum: 0,
    nominalGdp: o.production * o.price,
    realGdp: o.production * 100,
    interestCredited: 0,
    rate: 0.03 + m / 1000,
    meanWork: 0.5,
    meanConsumption: 0.25,
  };
}

describe("yearly indicators", () => {
  // Two-month years. Year 1: prices after 100, 110; wages 10, 12; 9 and 7 of 10 at work.
  // Year 2: prices after 121, 121; wages 13, 13; 8 and 8 at work.
  const history = [
    month(1, { price: 100, priceAfter: 100, wage: 10, employed: 9, production: 9 }),
    month(2, { price: 100, priceAfter: 110, wage: 12, employed: 7, production: 7 }),
    month(3, { price: 110, priceAfter: 121, wage: 13, employed: 8, production: 8 }),
    month(4, { price: 121, priceAfter: 121, wage: 13, employed: 8, production: 8 }),
    month(5, { price: 121, priceAfter: 121, wage: 13, employed: 8, production: 8 }),
  ];
  const rows = yearlyIndicators(history, 2);

  it("average prices and wages after each month's adjustment, and compare years", () => {
    expect(rows).toHaveLength(2); // month 5 starts a third year that is not complete
    const [y1, y2] = rows as [YearRow, YearRow];
    expect(y1.priceLevel).toBe(105);
    expect(y1.wage).toBe(11);
    expect(y1.unemployment).toBeCloseTo(4 / 20, 12);
    expect(y1.nominalGdp).toBe(9 * 100 + 7 * 100);
    expect(y1.realGdp).toBe(16 * 100);
    expect(y1.inflation).toBeNull();
    expect(y1.rate).toBeCloseTo(0.032, 12);
    expect(y2.inflation).toBeCloseTo(121 / 105 - 1, 12);
    expect(y2.wageInflation).toBeCloseTo(13 / 11 - 1, 12);
    expect(y2.unemployment).toBeCloseTo(0.2, 12);
    expect(y2.unemploymentChange).toBeCloseTo(0, 12);
    expect(y2.realGdpGrowth).toBeCloseTo(0, 12);
    expect(y2.nominalGdpGrowth).toBeCloseTo((110 * 8 + 121 * 8) / 1600 - 1, 12);
    expect(y2.meanWork).toBe(0.5);
  });
});

describe("correlations", () => {
  it("is Pearson's r", () => {
    expect(pearson([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 12);
    // By hand: x = 1..4, y = 1, 3, 2, 4: sxy = 4, sxx = syy = 5, r = 0.8.
    expect(pearson([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(0.8, 12);
    expect(pearson([1, 2], [1, 2])).toBeNull();
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toBeNull();
    expect(() => pearson([1], [1, 2])).toThrow(/1 values against 2/);
  });

  it("pair unemployment with wage inflation (Phillips) and its change with real GDP growth (Okun)", () => {
    const row = (u: number, wi: number | null, du: number | null, g: number | null) => ({ unemployment: u, wageInflation: wi, unemploymentChange: du, realGdpGrowth: g }) as YearRow;
    const rows = [row(0.1, null, null, null), row(0.05, 0.04, -0.05, 0.06), row(0.08, 0.01, 0.03, -0.03), row(0.06, 0.03, -0.02, 0.02)];
    expect(phillipsCorrelation(rows)).toBeCloseTo(pearson([0.05, 0.08, 0.06], [0.04, 0.01, 0.03])!, 12);
    expect(phillipsCorrelation(rows)!).toBeLessThan(0);
    expect(okunCorrelation(rows)).toBeCloseTo(pearson([-0.05, 0.03, -0.02], [0.06, -0.03, 0.02])!, 12);
  });

  it("count the years each correlation pairs, with the test the correlation uses (a year of 0 real GDP has no growth after it)", () => {
    const row = (du: number | null, rel: number | null, g: number | null) =>
      ({ unemployment: 0.1, wageInflation: 0.02, unemploymentChange: du, unemploymentGrowth: rel, realGdpGrowth: g }) as YearRow;
    // Four years with a relative change of unemployment, two of them without real GDP growth.
    const rows = [row(null, null, null), row(0.01, 0.1, 0.02), row(0.02, 0.2, null), row(-0.01, -0.1, null), row(0.03, 0.3, -0.01)];
    expect(correlationYears(rows)).toEqual({ phillips: 5, okun: 2, okunRelative: 2 });
    expect(okunRelativeCorrelation(rows)).toBeNull();
  });
});

describe("a simulated run's accounts", () => {
  it("value real GDP at the first price: its growth is -change in unemployment / (1 - last year's), so Okun is near -1 by construction", () => {
    const run = simulateEconomy({ params: economyParams({ households: 30, months: 72, skillBatches: 5 }), seed: 3, policy: heuristicPolicy(3) });
    expect(run.years).toHaveLength(6);
    for (let y = 1; y < run.years.length; y++) {
      const r = run.years[y]!;
      expect(r.realGdpGrowth!).toBeCloseTo(-r.unemploymentChange! / (1 - run.years[y - 1]!.unemployment), 12);
    }
    for (const m of run.months) expect(m.realGdp).toBeCloseTo(m.employed * 168 * run.final.initialPrice, 6);
    expect(run.okun!).toBeLessThan(-0.95);
  });
});

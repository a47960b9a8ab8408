import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";
import { stepEconomy, taxDue, describeBrackets, ECONOMY_DEFAULTS, economyParams, drawSkills, paretoSkill, initialEconomy } from "../../worlds/economy/index.js";
import { economyWith, SIMPLE_TAX } from "./helpers.js";

describe("economy parameters", () => {
  it("default to EconAgent's released configuration", () => {
    const p = ECONOMY_DEFAULTS;
    expect(p.households).toBe(100);
    expect(p.months).toBe(240);
    expect(p.hoursPerMonth).toBe(168);
    expect([p.paretoShape, p.maxSkill, p.skillBatches]).toEqual([8, 950, 1000]);
    expect([p.maxPriceInflation, p.maxWageInflation]).toEqual([0.1, 0.05]);
    expect(p.bracketRates).toEqual([0.1, 0.12, 0.22, 0.24, 0.32, 0.35, 0.37]);
    expect(p.bracketCutoffs.map((c) => c * 12)).toEqual([0, 9700, 39475, 84200, 160725, 204100, 510300].map((c) => expect.closeTo(c, 6)));
    expect([p.initialRate, p.naturalRate, p.inflationTarget, p.naturalUnemployment, p.inflationWeight, p.unemploymentWeight]).toEqual([0.03, 0.01, 0.02, 0.04, 0.5, 0.5]);
  });

  it("name the field at fault", () => {
    expect(() => economyParams({ households: 0 })).toThrow(/economy parameter households:/);
    expect(() => economyParams({ bracketRates: [0.1] })).toThrow(/economy parameter bracketRates: 1 rates for 7 brackets/);
    expect(() => economyParams({ bracketCutoffs: [0, 10, 5], bracketRates: [0, 0, 0] })).toThrow(/bracketCutoffs\.2: bracket edges must increase/);
    expect(() => economyParams({ bogus: 1 } as never)).toThrow(/economy parameter/);
  });
});

describe("taxes", () => {
  it("match the 2018 federal schedule (IRS table, per month)", () => {
    const s = { cutoffs: ECONOMY_DEFAULTS.bracketCutoffs, rates: ECONOMY_DEFAULTS.bracketRates };
    // $240,000 a year: $46,628.50 plus 35% of the amount over $204,100 (the table rounds the 50 cents).
    expect(taxDue(20_000, s)).toBeCloseTo((46_628.5 + 0.35 * (240_000 - 204_100)) / 12, 6);
    // $12,000 a year: $970 plus 12% of the amount over $9,700.
    expect(taxDue(1000, s)).toBeCloseTo((970 + 0.12 * (12_000 - 9700)) / 12, 9);
    expect(taxDue(0, s)).toBe(0);
    expect(describeBrackets({ cutoffs: [0, 1000], rates: [0.1, 0.5] })).toBe("$0.00-$1000.00: 10%, above $1000.00: 50%");
  });
});

describe("skills", () => {
  it("follow SimpleLabor's clipped Pareto, the same for the same seed", () => {
    expect(paretoSkill(1, 8, 950)).toBe(1);
    expect(paretoSkill(0.5, 8, 950)).toBeCloseTo(949 * (Math.pow(0.5, -1 / 8) - 1) + 1, 9);
    expect(paretoSkill(1e-9, 8, 950)).toBe(950);
    const p = { paretoShape: 8, maxSkill: 950, skillBatches: 50 };
    const a = drawSkills(400, p, Rng.seeded(3));
    expect(drawSkills(400, p, Rng.seeded(3))).toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...a)).toBeLessThanOrEqual(950);
    // The mean order statistics: the median household sits at the Lomax median 2^(1/8) - 1.
    const sorted = [...a].sort((x, y) => x - y);
    expect(sorted[200]!).toBeCloseTo(949 * (Math.pow(2, 1 / 8) - 1) + 1, -1);
    // Ranks are shuffled: the first households are not the poorest.
    expect(a.slice(0, 10).some((x) => x > sorted[200]!)).toBe(true);
  });

  it("set the initial price to the mean skill, as the authors' scenario does", () => {
    const s = initialEconomy(economyParams({ households: 50, skillBatches: 3 }), 9);
    const mean = s.households.skill.reduce((x, y) => x + y, 0) / 50;
    expect(s.price).toBeCloseTo(mean, 9);
    expect(s.rate).toBe(0.03);
  });
});

describe("a month of the economy", () => {
  // Wages 10 and 200 an hour, 10 hours: incomes 100 and 2000; taxes 10 and 600 (10% to 1000, 50% above).
  const start = economyWith([10, 200], SIMPLE_TAX, { price: 50 });

  it("pays wages, taxes, the equal redistribution, and sells what it has", () => {
    const before = JSON.stringify(start, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v));
    const { state, stats } = stepEconomy(start, [1, 1], [1, 0.5], Rng.seeded(1));
    const h = state.households;
    expect(Array.from(h.income)).toEqual([100, 2000]);
    expect(Array.from(h.taxPaid)).toEqual([10, 600]);
    expect(stats.lumpSum).toBe(305);
    expect(stats.production).toBe(20);
    // Cash 395 and 1705: they want 395/50 = 7.9 and 852.5/50 = 17.05 goods, but only 20 exist.
    expect(stats.demand).toBeCloseTo(24.95, 12);
    expect(stats.sold).toBeCloseTo(20, 12);
    expect(state.inventory).toBeCloseTo(0, 12);
    expect(h.goods[0]! + h.goods[1]!).toBeCloseTo(20, 12);
    // Whoever came first got all it wanted; the other got the rest.
    const full = [h.goods[0] === 7.9, Math.abs(h.goods[1]! - 17.05) < 1e-12];
    expect(full.filter(Boolean)).toHaveLength(1);
    expect(h.savings[0]! + h.savings[1]!).toBeCloseTo(395 + 1705 - 20 * 50, 9);
    expect(Array.from(h.wanted)).toEqual([7.9, expect.closeTo(17.05, 12)]);
    // Excess demand: phi = (24.95 - 20) / 24.95 > 0 pushes price and wages up, by at most alpha phi.
    const phi = (24.95 - 20) / 24.95;
    expect(stats.imbalance).toBeCloseTo(phi, 12);
    expect(state.price).toBeGreaterThanOrEqual(50);
    expect(state.price).toBeLessThanOrEqual(50 * (1 + 0.1 * phi));
    expect(h.wage[1]!).toBeGreaterThanOrEqual(200);
    expect(h.wage[1]!).toBeLessThanOrEqual(200 * (1 + 0.05 * phi));
    expect(Array.from(h.previousWage)).toEqual([10, 200]);
    expect(stats.nominalGdp).toBe(20 * 50);
    // The state it started from is untouched.
    expect(JSON.stringify(start, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))).toBe(before);
  });

  it("lets prices and wages fall when goods pile up, down to their floors", () => {
    // Nobody buys: phi = -1, so the price falls by up to 10% and wages by up to 5%.
    const { state, stats } = stepEconomy(start, [1, 1], [0, 0], Rng.seeded(2));
    expect(stats.imbalance).toBe(-1);
    expect(state.inventory).toBe(20);
    expect(state.price).toBeLessThanOrEqual(50);
    expect(state.price).toBeGreaterThanOrEqual(45);
    const floored = stepEconomy(economyWith([1, 1], SIMPLE_TAX, { price: 1 }), [1, 1], [0, 0], Rng.seeded(2)).state;
    expect(floored.price).toBe(1);
    expect(Array.from(floored.households.wage)).toEqual([1, 1]);
  });

  it("draws each household's luck independently of the others' decisions", () => {
    const skills = Array.from({ length: 30 }, (_, i) => 10 + i);
    const s = economyWith(skills, SIMPLE_TAX, { price: 20 });
    const work = skills.map(() => 0.5);
    const a = stepEconomy(s, work, skills.map(() => 0.3), Rng.seeded(5)).state.households.worked;
    const changed = work.slice();
    changed[0] = 1;
    const b = stepEconomy(s, changed, skills.map((_, i) => (i === 3 ? 0.9 : 0.3)), Rng.seeded(5)).state.households.worked;
    expect(Array.from(b).slice(1)).toEqual(Array.from(a).slice(1));
    expect(b[0]).toBe(1);
  });

  it("refuses decisions outside [0, 1] and a wrong number of them", () => {
    expect(() => stepEconomy(start, [1.5, 1], [0, 0], Rng.seeded(1))).toThrow(/household-1: propensities must be in \[0, 1\]/);
    expect(() => stepEconomy(start, [1], [0], Rng.seeded(1))).toThrow(/1 work and 1 consumption decisions for 2 households/);
  });

  it("credits the year's interest, then sets the rate by the Taylor rule", () => {
    // One-month years: month 1 ends year 1 (interest only), month 2 ends year 2 (interest, then the rule).
    const s0 = economyWith([10, 200], { ...SIMPLE_TAX, monthsPerYear: 1 }, { price: 50 });
    const m1 = stepEconomy(s0, [1, 0], [0.5, 0.5], Rng.seeded(4));
    // Year 1: cash after spending, plus 3% of it.
    expect(m1.stats.interestCredited).toBeGreaterThan(0);
    expect(m1.state.rate).toBe(0.03);
    const m2 = stepEconomy(m1.state, [1, 0], [0.5, 0.5], Rng.seeded(5));
    const inflation = m2.stats.priceAfter / m1.stats.priceAfter - 1;
    const unemployment = 0.5;
    expect(m2.state.rate).toBeCloseTo(Math.max(0, 0.01 + 0.02 + 0.5 * (inflation - 0.02) + 0.5 * (0.04 - unemployment)), 12);
    // Interest at year 2's end is at the rate in force during year 2, on the cash after spending.
    const cash = m2.state.households.savings;
    expect(m2.stats.interestCredited).toBeCloseTo(((cash[0]! + cash[1]!) * 0.03) / 1.03, 9);
  });
});

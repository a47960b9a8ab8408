import { describe, expect, it } from "vitest";
import {
  crra,
  decisionBounds,
  decisionReport,
  decisionUtility,
  economyParams,
  FORMAT_FAILURE,
  generateDecisionPoints,
  normalizedUtility,
  pairedDifference,
  pathUtility,
  scoreReply,
  type DecisionPoint,
  type PointParams,
} from "../../worlds/economy/index.js";

// Ten-hour months (c_bar = 10 goods), 10% tax to 1000 and 50% above, eta 0.5, nu 0.5, beta 0.9.
const params: PointParams = {
  hoursPerMonth: 10,
  productivity: 1,
  bracketCutoffs: [0, 1000],
  bracketRates: [0.1, 0.5],
  crra: 0.5,
  laborDisutility: 0.5,
  discount: 0.9,
  minConsumption: 1e-3,
};
// Month t at price 10, then a month at price 20 where the firm serves half of what is wanted,
// with 10% interest credited at its end; the household works and spends half in that month.
const path = { price: [10, 20], wage: [20, 20], lumpSum: [50, 50], fill: [1, 0.5], interest: [0, 0.1], work: [1, 1], consumption: [0.5, 0.5] };

function point(over: Partial<DecisionPoint> = {}): DecisionPoint {
  const base = { params, savings: 100, path };
  return {
    id: "p",
    seed: 1,
    household: "household-1",
    month: 1,
    view: {} as DecisionPoint["view"],
    recorded: { work: 1, consumption: 0.5 },
    ...base,
    ...decisionBounds(base),
    ...over,
  };
}

describe("household utility", () => {
  it("is CRRA in consumption (log at eta 1)", () => {
    expect(crra(4, 0.5)).toBeCloseTo(2, 12);
    expect(crra(1, 0.5)).toBe(0);
    expect(crra(Math.E, 1)).toBeCloseTo(1, 12);
    expect(crra(2, 2)).toBeCloseTo(0.5, 12);
  });

  it("discounts the month's and the next months' utility along the recorded path (by hand)", () => {
    // Works: cash 100 + 200 - 20 + 50 = 330, buys 16.5 goods; next month 165 + 200 - 20 + 50 = 395,
    // wants 9.875 goods and gets half. Idle: 150 -> 7.5 goods; then 75 + 230 = 305 -> 3.8125 goods.
    expect(pathUtility(params, 100, path, 1, 0.5)).toBeCloseTo(-0.9161412452370066, 12);
    expect(pathUtility(params, 100, path, 0, 0.5)).toBeCloseTo(-1.4065311792605606, 12);
    // The work draw's expectation is exact: 0.3 of the first, 0.7 of the second.
    expect(decisionUtility(point(), { work: 0.3, consumption: 0.5 })).toBeCloseTo(-1.2594141990534942, 12);
  });

  it("finds the best decision (w in {0, 1}, c by search) and the worst at a corner", () => {
    const p = point();
    const grid: number[] = [];
    for (let w = 0; w <= 1; w += 0.25) for (let c = 0; c <= 1.0001; c += 0.01) grid.push(decisionUtility(p, { work: w, consumption: Math.min(c, 1) }));
    expect(p.best.utility).toBeGreaterThanOrEqual(Math.max(...grid) - 1e-12);
    expect(p.worst.utility).toBeCloseTo(Math.min(...grid), 12);
    expect([0, 1]).toContain(p.best.work);
    expect(decisionUtility(p, p.best)).toBeCloseTo(p.best.utility, 12);
  });
});

describe("decision reward", () => {
  const p = point();

  it("gives -1 to anything that is not exactly the decision's JSON", () => {
    for (const reply of [
      "",
      "work 1, consumption 0.5",
      '```json\n{"work": 1, "consumption": 0.5}\n```',
      '{"work": 1}',
      '{"work": 1, "consumption": 0.5, "why": "rent"}',
      '{"work": "1", "consumption": 0.5}',
      '{"work": 1.2, "consumption": 0.5}',
      '{"work": 1, "consumption": -0.1}',
      '{"work": 1, "consumption": 0.5} and more',
      "[1, 0.5]",
    ]) {
      const s = scoreReply(p, reply);
      expect(s.reward, reply).toBe(FORMAT_FAILURE);
      expect(s.format, reply).toBe(false);
    }
  });

  it("scales a decision's utility between the worst (0) and the best (1)", () => {
    const best = scoreReply(p, JSON.stringify({ work: p.best.work, consumption: p.best.consumption }));
    expect(best.reward).toBeCloseTo(1, 9);
    const s = scoreReply(p, ' {"consumption": 0.5, "work": 0.3}\n');
    expect(s.format).toBe(true);
    if (!s.format) return;
    expect(s.utility).toBeCloseTo(-1.2594141990534942, 12);
    expect(s.reward).toBeCloseTo((s.utility - p.worst.utility) / (p.best.utility - p.worst.utility), 12);
    expect(s.reward).toBeGreaterThan(0);
    expect(s.reward).toBeLessThan(1);
    expect(normalizedUtility({ best: { utility: 2 }, worst: { utility: 2 } } as DecisionPoint, 2)).toBe(1);
  });

  it("reports the seed's columns", () => {
    const points = [p, p, p, p];
    const replies = ['{"work": 1, "consumption": 0.5}', '{"work": 0, "consumption": 0.3}', '{"work": 2, "consumption": 0.5}', "no"];
    const r = decisionReport(points, replies);
    expect(r.points).toBe(4);
    expect(r.parseRate).toBe(0.75);
    expect(r.formatFailures).toBe(0.5);
    expect(r.workMean).toBe(0.5);
    expect(r.workStd).toBe(0.5);
    expect(r.consumptionMean).toBeCloseTo(0.4, 12);
    expect(r.consumptionStd).toBeCloseTo(0.1, 12);
    const r1 = scoreReply(p, replies[0]!).reward;
    const r2 = scoreReply(p, replies[1]!).reward;
    expect(r.reward).toBeCloseTo((r1 + r2 - 2) / 4, 12);
    expect(r.bestUtility).toBe(p.best.utility);
    expect(() => decisionReport(points, replies.slice(1))).toThrow(/3 replies for 4 decision points/);
  });

  it("pairs two agents' replies point by point: differences of the means with their standard errors", () => {
    const richer = { params, savings: 400, path };
    const q = point({ ...richer, ...decisionBounds(richer) });
    const points = [p, p, q, q];
    const a = ['{"work": 1, "consumption": 0.5}', '{"work": 0, "consumption": 0.3}', '{"work": 1, "consumption": 0.5}', '{"work": 1, "consumption": 0.5}'];
    const b = ['{"work": 1, "consumption": 0.5}', '{"work":0,"consumption":0.3}', '{"work": 0, "consumption": 0.9}', "no"];
    const d = pairedDifference(points, a, b);
    expect(d.points).toBe(4);
    expect(d.differing).toBe(3); // the second differs as written, not as a decision
    expect(d.differentDecisions).toBe(1);
    const r = (pt: DecisionPoint, reply: string) => scoreReply(pt, reply).reward;
    const dr = [0, 0, r(q, b[2]!) - r(q, a[2]!), -1 - r(q, a[3]!)];
    const mean = dr.reduce((x, y) => x + y, 0) / 4;
    expect(d.reward.mean).toBeCloseTo(mean, 12);
    // The paired mean is the difference of the report's means.
    expect(d.reward.mean).toBeCloseTo(decisionReport(points, b).reward - decisionReport(points, a).reward, 12);
    expect(d.reward.error).toBeCloseTo(Math.sqrt(dr.reduce((x, y) => x + (y - mean) ** 2, 0) / 3 / 4), 12);
    // Utility over the points where both decided (three).
    const u = (pt: DecisionPoint, reply: string) => (scoreReply(pt, reply) as { utility: number }).utility;
    expect(d.utility!.n).toBe(3);
    expect(d.utility!.mean).toBeCloseTo((u(q, b[2]!) - u(q, a[2]!)) / 3, 12);
    expect(d.utility!.mean).not.toBe(0);
    // The same replies: nothing differs, and the error is 0.
    expect(pairedDifference(points, a, a)).toMatchObject({ differing: 0, differentDecisions: 0, reward: { mean: 0, error: 0, n: 4 }, utility: { mean: 0, error: 0, n: 4 } });
    expect(pairedDifference(points, ["no", "no", "no", "no"], a).utility).toBeNull();
    expect(() => pairedDifference(points, a, b.slice(1))).toThrow(/4 and 3 replies for 4 decision points/);
  });

  it("moves with the decisions near the ceiling, but little: the compare's base and trained rows (issue 29)", () => {
    // The compare's 200 points. Its base and trained policies answered work 0.509 / 0.569 and
    // consumption 0.517 / 0.663 on average, with reward 0.951 and utility -7.621 both. The
    // ceiling's work is a wage threshold (198 of 200 points agree with one); threshold policies
    // with those work shares and consumptions score within 0.002 of each other, in the third
    // decimal but not equal to it: the scale is flat near the ceiling, not blind to the decisions.
    const points = generateDecisionPoints({ params: economyParams(), seed: 1, count: 200 });
    const wages = points.map((q) => q.path.wage[0]!);
    const sorted = [...wages].sort((a, b) => a - b);
    const threshold = (share: number, consumption: number) => {
      const cut = sorted[Math.round((1 - share) * points.length)]!;
      return decisionReport(points, wages.map((w) => JSON.stringify({ work: w >= cut ? 1 : 0, consumption })));
    };
    const base = threshold(0.509, 0.517);
    const trained = threshold(0.569, 0.663);
    expect([base.workMean, trained.workMean]).toEqual([0.51, 0.57]);
    expect(trained.reward - base.reward).toBeGreaterThan(0.001);
    expect(trained.reward - base.reward).toBeLessThan(0.005);
    expect(base.utility! - trained.utility!).toBeGreaterThan(0.002);
    expect(base.utility! - trained.utility!).toBeLessThan(0.01);
    // A wrong work decision costs a point a median 0.29 of reward: the decisions do count.
    const gaps = points.map((q) => Math.abs(scoreReply(q, JSON.stringify({ work: 1, consumption: q.best.consumption })).reward - scoreReply(q, JSON.stringify({ work: 0, consumption: q.best.consumption })).reward));
    expect(gaps.sort((a, b) => a - b)[100]!).toBeGreaterThan(0.25);
    expect(threshold(0.52, 0.64).reward).toBeGreaterThan(0.98);
  });
});

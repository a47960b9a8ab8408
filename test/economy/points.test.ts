import { describe, expect, it } from "vitest";
import { DataError } from "../../worlds/core/errors.js";
import {
  decisionBounds,
  decisionUtility,
  economyParams,
  generateDecisionPoints,
  householdObservation,
  parseDecisionPoints,
  publicStats,
  serializeDecisionPoints,
  simulateEconomy,
  heuristicPolicy,
  type DecisionPoint,
} from "../../worlds/economy/index.js";

const params = economyParams({ households: 8, months: 30, skillBatches: 10, horizon: 6 });

describe("decision points", () => {
  const points = generateDecisionPoints({ params, seed: 4, count: 40 });

  it("are the same for the same seed, distinct, and each has a full horizon", () => {
    expect(generateDecisionPoints({ params, seed: 4, count: 40 })).toEqual(points);
    expect(points).toHaveLength(40);
    expect(new Set(points.map((p) => p.id)).size).toBe(40);
    for (const p of points) {
      expect(p.month).toBeGreaterThanOrEqual(1);
      expect(p.month).toBeLessThanOrEqual(30 - 6 + 1);
      expect(p.path.price).toHaveLength(6);
      expect(p.recorded).toEqual({ work: p.path.work[0], consumption: p.path.consumption[0] });
      expect(p.best.utility).toBeGreaterThanOrEqual(decisionUtility(p, p.recorded) - 1e-9);
      expect(p.worst.utility).toBeLessThanOrEqual(decisionUtility(p, p.recorded) + 1e-9);
    }
    expect(generateDecisionPoints({ params, seed: 5, count: 40 })).not.toEqual(points);
  });

  it("keep what the household saw, its money, and the path that followed (the run's own numbers)", () => {
    const p = points.find((q) => q.month > 12)!;
    const i = Number(p.household.split("-")[1]) - 1;
    const states: ReturnType<typeof simulateEconomy>["final"][] = [];
    const run = simulateEconomy({ params, seed: 4, policy: heuristicPolicy(4), onMonth: (m) => void states.push(m.before) });
    const before = states[p.month - 1]!;
    expect(p.view).toEqual(householdObservation(before, i, publicStats(before)));
    expect(p.savings).toBe(before.households.savings[i]);
    for (let k = 0; k < 6; k++) {
      const m = run.months[p.month - 1 + k]!;
      expect(p.path.price[k]).toBe(m.price);
      expect(p.path.lumpSum[k]).toBe(m.lumpSum);
      expect(p.path.fill[k]).toBe(m.demand > 0 ? m.sold / m.demand : 1);
      expect(p.path.wage[k]).toBe(states[p.month - 1 + k]!.households.wage[i]);
      // Interest is credited at year ends only, at the rate in force during the year.
      expect(p.path.interest[k]).toBe(m.month % 12 === 0 ? states[p.month - 1 + k]!.rate : 0);
    }
  });

  it("refuse more points than there are household-months with a horizon ahead", () => {
    expect(() => generateDecisionPoints({ params, seed: 1, count: 8 * 25 + 1 })).toThrow(/count must be an integer from 1 to 200/);
    expect(() => generateDecisionPoints({ params: economyParams({ ...params, months: 3 }), seed: 1, count: 1 })).toThrow(/at least 6 months/);
  });
});

describe("the decision-point file", () => {
  const points = generateDecisionPoints({ params, seed: 2, count: 5 });
  const text = serializeDecisionPoints(points);

  it("reads back what was written", () => {
    expect(parseDecisionPoints(text, "points.jsonl")).toEqual(points);
  });

  it("names the file, the line and the field of what is wrong", () => {
    const lines = text.trimEnd().split("\n");
    const edit = (k: number, f: (p: DecisionPoint) => unknown) => {
      const copy = lines.slice();
      copy[k] = JSON.stringify(f(JSON.parse(copy[k]!) as DecisionPoint));
      return copy.join("\n");
    };
    const fails = (t: string) => {
      try {
        parseDecisionPoints(t, "points.jsonl");
      } catch (e) {
        expect(e).toBeInstanceOf(DataError);
        return (e as Error).message;
      }
      throw new Error("expected a DataError");
    };
    expect(fails(edit(2, (p) => ({ ...p, path: { ...p.path, fill: [1.5, ...p.path.fill.slice(1)] } })))).toMatch(/^points\.jsonl:3: path\.fill\.0: /);
    expect(fails(edit(1, (p) => ({ ...p, path: { ...p.path, wage: p.path.wage.slice(1) } })))).toBe("points.jsonl:2: path.wage: 5 months, but price has 6");
    expect(fails(edit(0, (p) => ({ ...p, recorded: { work: 1 } })))).toMatch(/^points\.jsonl:1: recorded\.consumption: /);
    expect(fails(edit(0, (p) => ({ ...p, extra: 1 })))).toMatch(/^points\.jsonl:1: \(line\): Unrecognized key/);
    expect(fails(edit(4, (p) => ({ ...p, id: points[0]!.id })))).toBe(`points.jsonl:5: id: "${points[0]!.id}" appears twice`);
    expect(fails(lines.slice(0, 2).join("\n") + "\n{oops\n")).toMatch(/^points\.jsonl:3: not valid JSON/);
    expect(fails("\n\n")).toBe("points.jsonl: no decision points");
  });

  it("re-derives the same bounds from the stored path", () => {
    for (const p of points) expect(decisionBounds(p)).toEqual({ best: p.best, worst: p.worst });
  });
});

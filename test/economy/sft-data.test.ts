/**
 * The economy recipe's supervised data (measurements/economy-sft-data.ts): the household's prompt
 * and a teacher's decision in the exact JSON the strict format accepts, the ceiling's decision
 * only where it beats the heuristic's by the margin, the same seed writing the same examples.
 */
import { describe, expect, it } from "vitest";
import { economySftData, teacherDecision } from "../../measurements/economy-sft-data.js";
import { economyParams, generateDecisionPoints, renderObservation, scoreDecision, scoreReply } from "../../worlds/economy/index.js";

const params = economyParams({ households: 20, months: 48 });

describe("economy SFT data", () => {
  it("writes each point's prompt and the heuristic's decision, rounded to two decimals, as exact JSON", () => {
    const data = economySftData({ params, seed: 4, count: 40, teacher: "heuristic", margin: 0.05 });
    const points = generateDecisionPoints({ params, seed: 4, count: 40 });
    expect(data.examples).toHaveLength(40);
    expect(data.fromCeiling).toBe(0);
    data.examples.forEach((e, k) => {
      const p = points[k]!;
      expect(e.prompt).toBe(renderObservation(p.view));
      const score = scoreReply(p, e.response);
      expect(score.format).toBe(true);
      const d = JSON.parse(e.response) as { work: number; consumption: number };
      expect(Object.keys(d)).toEqual(["work", "consumption"]);
      expect(Math.abs(d.work - p.recorded.work)).toBeLessThanOrEqual(0.005 + 1e-12);
      expect(Math.abs(d.consumption - p.recorded.consumption)).toBeLessThanOrEqual(0.005 + 1e-12);
      expect(Math.round(d.work * 100)).toBeCloseTo(d.work * 100, 9);
    });
    expect(economySftData({ params, seed: 4, count: 40, teacher: "heuristic", margin: 0.05 })).toEqual(data);
  });

  it("takes the ceiling's decision where it beats the heuristic's by more than the margin, and so earns more", () => {
    const heuristic = economySftData({ params, seed: 4, count: 80, teacher: "heuristic", margin: 0.05 });
    const ceiling = economySftData({ params, seed: 4, count: 80, teacher: "ceiling", margin: 0.05 });
    expect(ceiling.fromCeiling).toBeGreaterThan(0);
    expect(ceiling.fromCeiling).toBeLessThan(80);
    expect(ceiling.reward).toBeGreaterThan(heuristic.reward);
    // A margin no decision can beat leaves the heuristic's; a margin of 0 takes every better ceiling.
    expect(economySftData({ params, seed: 4, count: 80, teacher: "ceiling", margin: 1 }).examples).toEqual(heuristic.examples);
    const points = generateDecisionPoints({ params, seed: 4, count: 80 });
    for (const p of points) {
      const t = teacherDecision(p, p.recorded, "ceiling", 0.05);
      const gain = scoreDecision(p, { work: p.best.work, consumption: Math.round(p.best.consumption * 100) / 100 }).reward - scoreDecision(p, p.recorded).reward;
      expect(t.ceiling).toBe(gain > 0.05);
      if (t.ceiling) expect(t.decision.work).toBe(p.best.work);
    }
  });
});

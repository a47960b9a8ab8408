/**
 * The supervised data of the economy recipe (`npm run demo:economy`): decision points of a seeded
 * heuristic run, each written as the household's prompt and a teacher's decision in the JSON the
 * prompt asks for, so that a policy from scratch learns to answer as the strict format wants.
 *
 * Teachers: `heuristic`, EconAgent's rule-based household; `ceiling`, the simulation ceiling's
 * decision (which knows the path ahead) where its reward beats the heuristic's by more than a
 * margin, else the heuristic's. The ceiling alone would teach decisions the prompt cannot justify
 * (a small consumption difference bought with knowledge of next year's prices); where it beats
 * the heuristic by a margin it is the work decision of the low-wage households, whose
 * redistribution pays them more than their work (docs/worlds/economy.md), which the prompt shows.
 * Decisions are rounded to two decimals (the heuristic's own step is 0.02): a dozen tokens a reply.
 */
import { ceilingDecision, decisionJson, generateDecisionPoints, renderObservation, scoreDecision, type DecisionPoint, type EconomyParams, type HouseholdDecision } from "../worlds/economy/index.js";

export const TEACHERS = ["heuristic", "ceiling"] as const;
export type Teacher = (typeof TEACHERS)[number];

export interface SftExample {
  readonly prompt: string;
  readonly response: string;
}

export interface SftDataset {
  readonly examples: SftExample[];
  /** Examples whose decision is the ceiling's (0 with the heuristic teacher). */
  readonly fromCeiling: number;
  /** The mean reward of the examples' decisions at their points. */
  readonly reward: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The teacher's decision at a point, rounded to two decimals. */
export function teacherDecision(point: DecisionPoint, heuristic: HouseholdDecision, teacher: Teacher, margin: number): { decision: HouseholdDecision; ceiling: boolean } {
  const rounded = (d: HouseholdDecision) => ({ work: round2(d.work), consumption: round2(d.consumption) });
  if (teacher === "ceiling") {
    const best = rounded(ceilingDecision(point));
    if (scoreDecision(point, best).reward - scoreDecision(point, heuristic).reward > margin) return { decision: best, ceiling: true };
  }
  return { decision: rounded(heuristic), ceiling: false };
}

/** `count` decision points of a heuristic run of `params` from `seed`, as prompt/response examples (the heuristic's decision: what the household chose in that run). */
export function economySftData(o: { params: EconomyParams; seed: number; count: number; teacher: Teacher; margin: number }): SftDataset {
  const points = generateDecisionPoints({ params: o.params, seed: o.seed, count: o.count });
  let fromCeiling = 0;
  let reward = 0;
  const examples = points.map((p) => {
    const { decision, ceiling } = teacherDecision(p, p.recorded, o.teacher, o.margin);
    if (ceiling) fromCeiling++;
    reward += scoreDecision(p, decision).reward;
    return { prompt: renderObservation(p.view), response: decisionJson(decision) };
  });
  return { examples, fromCeiling, reward: reward / points.length };
}

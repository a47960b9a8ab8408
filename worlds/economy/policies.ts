/**
 * Rule-based households, deciding from their own observation only (the same view a model or a
 * person gets): fixed propensities, uniform random ones, and the heuristic that EconAgent
 * compares its LLM agents with (`complex_actions` in simulate.py, the paper's rule-based
 * baseline), the default.
 *
 * The heuristic, with s the savings, r the interest rate, y^max = 168 w the month's wage offer
 * and P the price:
 *   work:        p^w = min(1, (y^max / (s (1 + r)))^gamma)
 *   consumption: each household keeps one of two rules from the literature, drawn once
 *     - "len"  (Lengnick-style): p^c = (P / (s + y))^beta
 *     - "cats" (CATS buffer stock): h' = h / (1 + r), g = y / y^last - 1, d = s / y^last - h',
 *              p^c = (1 + (d - h' g) / (1 + g)) y / (s + y)
 *   clipped to [0, 1] and floored to EconAgent's 0.02 steps. y^last is the income of the last
 *   month worked. In the authors' code the rule draws the month's work itself and then uses the
 *   realized income y; here the world draws work after both propensities are chosen (as for the
 *   paper's LLM agents), so the rules use the expected income y = p^w y^max.
 */
import { hashString, Rng } from "../core/rng.js";
import type { HouseholdDecision } from "./action.js";
import type { HouseholdObservation } from "./observation.js";

export interface HouseholdPolicy {
  /** A short name for reports ("heuristic", "fixed:1,0.5", "random"). */
  readonly id: string;
  decide(o: HouseholdObservation): HouseholdDecision;
}

/** simulate.py's defaults: `main(..., beta=0.1, gamma=0.1, h=1)`. */
export interface HeuristicOptions {
  readonly beta: number;
  readonly gamma: number;
  readonly h: number;
  /** Decisions are floored to multiples of this (EconAgent's consumption_rate_step). */
  readonly step: number;
}

export const HEURISTIC_DEFAULTS: HeuristicOptions = Object.freeze({ beta: 0.1, gamma: 0.1, h: 1, step: 0.02 });

/** simulate.py's guard against dividing by zero. */
const EPS = 1e-8;

export type ConsumptionRule = "len" | "cats";

/** The rule a household keeps (EconAgent draws it once per agent; here from the seed and the name). */
export function consumptionRule(seed: number | string, household: string): ConsumptionRule {
  return (hashString(`${seed}:${household}`) & 1) === 0 ? "len" : "cats";
}

export function heuristicDecision(o: HouseholdObservation, rule: ConsumptionRule, opts: HeuristicOptions = HEURISTIC_DEFAULTS): HouseholdDecision {
  const f = o.finances;
  const r = o.economy.rate;
  const s = f.savings;
  const work = Math.min(1, Math.pow(f.wageOffer / (s * (1 + r) + EPS), opts.gamma));
  const y = work * f.wageOffer;
  let c: number;
  if (rule === "len") {
    c = Math.pow(o.economy.price / (EPS + s + y), opts.beta);
  } else {
    const h1 = opts.h / (1 + r);
    const g = y / (f.lastWorkIncome + EPS) - 1;
    const d = s / (f.lastWorkIncome + EPS) - h1;
    c = ((1 + (d - h1 * g) / (1 + g + EPS)) * y) / (s + y + EPS);
  }
  return { work, consumption: floorTo(c, opts.step) };
}

/** Clipped to [0, 1] and floored to a multiple of `step` (Python's c // step). */
export function floorTo(x: number, step: number): number {
  if (!(x > 0)) return 0;
  const k = Math.min(Math.floor(x / step), Math.round(1 / step));
  return Math.min(1, k * step);
}

export function heuristicPolicy(seed: number | string = 0, opts: HeuristicOptions = HEURISTIC_DEFAULTS): HouseholdPolicy {
  const rules = new Map<string, ConsumptionRule>();
  return {
    id: "heuristic",
    decide(o) {
      let rule = rules.get(o.household);
      if (rule === undefined) rules.set(o.household, (rule = consumptionRule(seed, o.household)));
      return heuristicDecision(o, rule, opts);
    },
  };
}

export function fixedPolicy(work: number, consumption: number): HouseholdPolicy {
  for (const [k, v] of [
    ["work", work],
    ["consumption", consumption],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new RangeError(`fixed policy: ${k} must be in [0, 1], got ${v}`);
  }
  const d: HouseholdDecision = Object.freeze({ work, consumption });
  return { id: `fixed:${work},${consumption}`, decide: () => d };
}

/** Uniform propensities, from its own stream (the same seed and call order give the same decisions). */
export function randomPolicy(seed: number | string = 0): HouseholdPolicy {
  const rng = Rng.seeded(`economy:random:${seed}`);
  return { id: "random", decide: () => ({ work: rng.next(), consumption: rng.next() }) };
}

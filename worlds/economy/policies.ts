/**
 * Rule-based households, deciding from their own observation only (the same view a model or a
 * person gets): fixed propensities, uniform random ones, the heuristic that EconAgent compares
 * its LLM agents with (`complex_actions` in simulate.py, the paper's rule-based baseline), and
 * the responsive household built on it, the default (DEFAULT_HOUSEHOLD_RULE, below).
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
 *
 * And the responsive household: the heuristic, whose work propensity also answers the wage trend
 * the prompt states (EconAgent's agents are told their pay "increased compared to the last month
 * due to the inflation of labor market", or decreased "due to the deflation"): k more when the
 * wage offer rose, k less when it fell. In this economy wages and prices move with the sign of the
 * goods imbalance, so k decides the sign of the Phillips curve (docs/worlds/economy.md, Results).
 *
 * Why the heuristic's Phillips curve is positive, and so why the default is the responsive
 * household: when the goods run short, households cannot spend what they meant to, and the money
 * stays in their savings; the heuristic's work rule reads those savings as wealth against the wage
 * offer, so it works less in the very years the shortage raises wages (docs/worlds/economy.md
 * measures it, and a work rule blind to that money loses the positive sign). The responsive
 * household's step back when its pay falls puts unemployment in the years of a glut instead.
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

/**
 * Uniform propensities, drawn from the seed, the household and the month: the same decision
 * whatever order households are asked in, and a resumed run draws what the whole run would have.
 */
export function randomPolicy(seed: number | string = 0): HouseholdPolicy {
  return {
    id: "random",
    decide(o) {
      const rng = Rng.seeded(`economy:random:${seed}:${o.household}:${o.economy.month}`);
      return { work: rng.next(), consumption: rng.next() };
    },
  };
}

/** The heuristic, with work moved by `strength` towards the wage trend the household reads (see above). */
export function responsivePolicy(seed: number | string = 0, strength = RESPONSIVE_STRENGTH, opts: HeuristicOptions = HEURISTIC_DEFAULTS): HouseholdPolicy {
  if (!(strength >= -1 && strength <= 1)) throw new RangeError(`responsive policy: the strength must be in [-1, 1], got ${strength}`);
  const heuristic = heuristicPolicy(seed, opts);
  return {
    id: `responsive:${strength}`,
    decide(o) {
      const d = heuristic.decide(o);
      const { wageOffer, previousWageOffer } = o.finances;
      if (previousWageOffer === null || wageOffer === previousWageOffer) return d;
      const work = Math.min(1, Math.max(0, d.work + strength * Math.sign(wageOffer - previousWageOffer)));
      return { work, consumption: d.consumption };
    },
  };
}

/** The responsive household's default: 0.1 of work propensity per month of rising or falling pay. */
export const RESPONSIVE_STRENGTH = 0.1;

/**
 * The household `simulate economy` runs and a room seats when nothing else is named: the
 * responsive household, whose economy shows the Phillips curve the issue asks to demonstrate
 * (the heuristic's does not, for the reason above; it stays EconAgent's baseline on decision points).
 */
export const DEFAULT_HOUSEHOLD_RULE = `responsive:${RESPONSIVE_STRENGTH}`;

/** The rule-based households by name, as `simulate --agent` and a room's `rule` option take them. */
export const HOUSEHOLD_RULES = ["heuristic", "responsive[:K]", "fixed[:W,C]", "random"] as const;

/**
 * A rule-based household from its spec: `heuristic`, `responsive` or `responsive:K` (K in
 * [-1, 1]), `fixed` (work 1, consumption 0.5) or `fixed:W,C`, `random`; undefined when `spec`
 * names no rule (it may name a model agent). A rule with a bad argument is a RangeError.
 */
export function householdRule(spec: string, seed: number | string): HouseholdPolicy | undefined {
  const i = spec.indexOf(":");
  const kind = i < 0 ? spec : spec.slice(0, i);
  const arg = i < 0 ? undefined : spec.slice(i + 1);
  const number = (text: string, what: string) => {
    const x = text.trim() === "" ? NaN : Number(text);
    if (!Number.isFinite(x)) throw new RangeError(`household rule "${spec}": ${what} must be a number, got "${text}"`);
    return x;
  };
  switch (kind) {
    case "heuristic":
    case "random":
      if (arg !== undefined) throw new RangeError(`household rule "${spec}": ${kind} takes no argument`);
      return kind === "heuristic" ? heuristicPolicy(seed) : randomPolicy(seed);
    case "responsive":
      return responsivePolicy(seed, arg === undefined ? RESPONSIVE_STRENGTH : number(arg, "the strength K"));
    case "fixed": {
      if (arg === undefined) return fixedPolicy(1, 0.5);
      const parts = arg.split(",");
      if (parts.length !== 2) throw new RangeError(`household rule "${spec}": expected fixed:W,C (work and consumption propensities)`);
      return fixedPolicy(number(parts[0]!, "W"), number(parts[1]!, "C"));
    }
    default:
      return undefined;
  }
}

/**
 * The rewards of a household's decision at a decision point.
 *
 * Format: the reply must be exactly the decision's JSON (two keys, numbers in [0, 1]); anything
 * else gets FORMAT_FAILURE (-1) and nothing more.
 *
 * Utility: the household's discounted utility over the horizon's months,
 *
 *   U(w, c) = E[ sum_{k=0}^{H-1} beta^k u_{t+k} ],
 *
 * where month t follows the decision (it works with probability w, and spends the share c of
 * its money) and the months after follow the household's recorded propensities, along the
 * recorded path of prices, wages, redistribution, goods available and interest. The
 * expectation over month t's work draw is exact (both branches, weighted w and 1 - w); in the
 * months after, the household works the expected share of the month, p^w_k. One household's
 * decision moves the economy's aggregates by 1/N, which the recorded path leaves out.
 *
 * The reward is U scaled by the best and worst decisions at the point, (U - U_worst) /
 * (U_best - U_worst), in [0, 1] (1: the best decision), so that a valid decision always earns
 * more than a malformed one and points of rich and poor households weigh alike. U is linear in w
 * and concave in c (utility is concave and future money is affine in c), so the best decision
 * has w in {0, 1} and the c that a golden-section search finds, and the worst is at a corner.
 */
import { strictFormat } from "../core/rewards/strict-format.js";
import { HouseholdDecisionSchema, type HouseholdDecision } from "./action.js";
import type { DecisionPath, DecisionPoint, PointParams } from "./decision-point.js";
import { taxDue } from "./taxes.js";
import { flowUtility } from "./utility.js";

export const FORMAT_FAILURE = -1;

/** The discounted utility when month t's work is `firstWork` (0 or 1) and its spending share `firstConsumption`. */
export function pathUtility(params: PointParams, savings: number, path: DecisionPath, firstWork: number, firstConsumption: number): number {
  const schedule = { cutoffs: params.bracketCutoffs, rates: params.bracketRates };
  let cash = savings;
  let total = 0;
  let weight = 1;
  for (let k = 0; k < path.price.length; k++) {
    const labor = k === 0 ? firstWork : path.work[k]!;
    const share = k === 0 ? firstConsumption : path.consumption[k]!;
    const income = labor * params.hoursPerMonth * path.wage[k]!;
    cash += income;
    cash -= Math.min(cash, taxDue(income, schedule));
    cash += path.lumpSum[k]!;
    const goods = ((share * cash) / path.price[k]!) * path.fill[k]!;
    cash -= goods * path.price[k]!;
    cash += path.interest[k]! * cash;
    total += weight * flowUtility(goods, labor, params);
    weight *= params.discount;
  }
  return total;
}

/** U(w, c): the expected discounted utility of decision `d` at the point. */
export function decisionUtility(point: Pick<DecisionPoint, "params" | "savings" | "path">, d: HouseholdDecision): number {
  const { params, savings, path } = point;
  let u = 0;
  if (d.work > 0) u += d.work * pathUtility(params, savings, path, 1, d.consumption);
  if (d.work < 1) u += (1 - d.work) * pathUtility(params, savings, path, 0, d.consumption);
  return u;
}

/** (U - U_worst) / (U_best - U_worst), clipped to [0, 1]; 1 when every decision is as good. */
export function normalizedUtility(point: Pick<DecisionPoint, "best" | "worst">, utility: number): number {
  const span = point.best.utility - point.worst.utility;
  if (!(span > 1e-12 * Math.max(1, Math.abs(point.best.utility)))) return 1;
  return Math.min(1, Math.max(0, (utility - point.worst.utility) / span));
}

export type DecisionScore =
  | { readonly format: true; readonly decision: HouseholdDecision; readonly utility: number; readonly reward: number }
  | { readonly format: false; readonly error: string; readonly reward: number };

/** The reward of a model's reply at a point: -1 unless it is exactly a decision, else its normalized utility. */
export function scoreReply(point: DecisionPoint, reply: string): DecisionScore {
  const parsed = strictFormat(reply, HouseholdDecisionSchema);
  if (!parsed.ok) return { format: false, error: parsed.error, reward: FORMAT_FAILURE };
  return scoreDecision(point, parsed.action);
}

export function scoreDecision(point: DecisionPoint, decision: HouseholdDecision): DecisionScore {
  const utility = decisionUtility(point, decision);
  return { format: true, decision, utility, reward: normalizedUtility(point, utility) };
}

const GOLDEN = (Math.sqrt(5) - 1) / 2;

/** The c in [0, 1] that maximizes a concave f, to within `tol`. */
function argmaxConcave(f: (c: number) => number, tol = 1e-6): number {
  let lo = 0;
  let hi = 1;
  let a = hi - GOLDEN * (hi - lo);
  let b = lo + GOLDEN * (hi - lo);
  let fa = f(a);
  let fb = f(b);
  while (hi - lo > tol) {
    if (fa < fb) {
      lo = a;
      a = b;
      fa = fb;
      b = lo + GOLDEN * (hi - lo);
      fb = f(b);
    } else {
      hi = b;
      b = a;
      fb = fa;
      a = hi - GOLDEN * (hi - lo);
      fa = f(a);
    }
  }
  // The ends too: the maximum may sit on the boundary (spend everything, or nothing).
  let best = (lo + hi) / 2;
  let fBest = f(best);
  for (const c of [0, 1]) {
    const fc = f(c);
    if (fc > fBest) {
      best = c;
      fBest = fc;
    }
  }
  return best;
}

/** The best and worst decisions at a point (the simulation ceiling's answer, and the floor of the scale). */
export function decisionBounds(point: Pick<DecisionPoint, "params" | "savings" | "path">): {
  best: { work: number; consumption: number; utility: number };
  worst: { utility: number };
} {
  const { params, savings, path } = point;
  let best = { work: 0, consumption: 0, utility: -Infinity };
  let worst = Infinity;
  for (const work of [0, 1]) {
    const f = (c: number) => pathUtility(params, savings, path, work, c);
    const c = argmaxConcave(f);
    const u = f(c);
    if (u > best.utility) best = { work, consumption: c, utility: u };
    worst = Math.min(worst, f(0), f(1));
  }
  return { best, worst: { utility: worst } };
}

/** The simulation ceiling: the decision that knows the path ahead (the point's best decision). */
export function ceilingDecision(point: Pick<DecisionPoint, "best">): HouseholdDecision {
  return { work: point.best.work, consumption: point.best.consumption };
}

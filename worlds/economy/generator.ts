/**
 * Decision points from a seeded run: the economy runs with rule-based households (the heuristic
 * by default), and at `count` household-months drawn at random, the generator keeps what the
 * household saw, its money, and the path of the horizon's months that followed. Each point's
 * best and worst decisions are computed exactly from that path (reward.ts), so the labels are
 * right by construction, and the same seed writes the same points.
 */
import { Rng } from "../core/rng.js";
import type { DecisionPoint } from "./decision-point.js";
import { householdObservation } from "./observation.js";
import type { EconomyParams } from "./params.js";
import { heuristicPolicy, type HouseholdPolicy } from "./policies.js";
import { decisionBounds } from "./reward.js";
import { simulateEconomy } from "./simulate.js";

export interface PointOptions {
  readonly params: EconomyParams;
  readonly seed: number;
  readonly count: number;
  /** Who runs the economy the points are taken from (default: the heuristic, seeded alike). */
  readonly policy?: HouseholdPolicy;
}

interface Pending {
  readonly i: number;
  readonly start: number;
  point: Omit<DecisionPoint, "best" | "worst">;
}

export function generateDecisionPoints(opts: PointOptions): DecisionPoint[] {
  const { params, seed, count } = opts;
  const horizon = params.horizon;
  const n = params.households;
  const starts = params.months - horizon + 1;
  if (starts < 1) throw new RangeError(`decision points need at least ${horizon} months (the horizon), got ${params.months}`);
  const room = n * starts;
  if (!Number.isInteger(count) || count < 1 || count > room) {
    throw new RangeError(`count must be an integer from 1 to ${room} (households x months with a full horizon ahead), got ${count}`);
  }
  // Distinct household-months, drawn without replacement (a partial Fisher-Yates over the slots).
  const rng = Rng.seeded(`economy:points:${seed}`);
  const chosen = new Map<number, number[]>();
  const slots = new Map<number, number>();
  for (let k = 0; k < count; k++) {
    const j = k + Math.floor(rng.next() * (room - k));
    const slot = slots.get(j) ?? j;
    slots.set(j, slots.get(k) ?? k);
    const month = Math.floor(slot / n) + 1;
    const list = chosen.get(month) ?? [];
    list.push(slot % n);
    chosen.set(month, list);
  }

  const pointParams = {
    hoursPerMonth: params.hoursPerMonth,
    productivity: params.productivity,
    bracketCutoffs: params.bracketCutoffs,
    bracketRates: params.bracketRates,
    crra: params.crra,
    laborDisutility: params.laborDisutility,
    discount: params.discount,
    minConsumption: params.minConsumption,
  };
  const open: Pending[] = [];
  const done: DecisionPoint[] = [];
  simulateEconomy({
    params,
    seed,
    policy: opts.policy ?? heuristicPolicy(seed),
    onMonth: ({ stats, before, economy, work, consumption }) => {
      const t = stats.month;
      for (const i of chosen.get(t) ?? []) {
        open.push({
          i,
          start: t,
          point: {
            id: `economy:${seed}:${before.names[i]}:${t}`,
            seed,
            household: before.names[i]!,
            month: t,
            view: householdObservation(before, i, economy),
            params: pointParams,
            savings: before.households.savings[i]!,
            path: { price: [], wage: [], lumpSum: [], fill: [], interest: [], work: [], consumption: [] },
            recorded: { work: work[i]!, consumption: consumption[i]! },
          },
        });
      }
      const fill = stats.demand > 0 ? stats.sold / stats.demand : 1;
      const interest = t % params.monthsPerYear === 0 ? before.rate : 0;
      for (let k = open.length - 1; k >= 0; k--) {
        const o = open[k]!;
        const path = o.point.path;
        path.price.push(stats.price);
        path.wage.push(before.households.wage[o.i]!);
        path.lumpSum.push(stats.lumpSum);
        path.fill.push(fill);
        path.interest.push(interest);
        path.work.push(work[o.i]!);
        path.consumption.push(consumption[o.i]!);
        if (t - o.start + 1 === horizon) {
          done.push({ ...o.point, ...decisionBounds(o.point) });
          open.splice(k, 1);
        }
      }
    },
  });
  // In the order of the run, household order within a month.
  return done.sort((a, b) => a.month - b.month || a.household.localeCompare(b.household, "en", { numeric: true }));
}

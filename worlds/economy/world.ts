/**
 * The economy as a world of the game loop: every household is an agent that observes its own
 * finances and the public statistics, and answers each month with a decision. A timestep is a
 * month; the episode ends after `params.months` months. The reward of a household at a month is
 * its flow utility (utility.ts): the utility of the goods it bought minus the disutility of the
 * work it did. (The decision reward a trainer uses, which also counts the months after, is
 * computed on decision points: points.ts.)
 *
 * For runs of thousands of households with rule-based agents, simulate.ts runs the same
 * transition without the loop's per-agent records.
 */
import type { z } from "zod";
import type { Observation, StepContext, StepResult, World, WorldEvent } from "../core/world.js";
import { HouseholdDecisionSchema, IDLE, type HouseholdDecision } from "./action.js";
import { stepEconomy } from "./dynamics.js";
import { okunCorrelation, phillipsCorrelation, yearlyIndicators, type YearRow } from "./indicators.js";
import { householdObservation, publicStats, type PublicStats } from "./observation.js";
import { describeEconomy, renderDecision, renderObservation } from "./prompts.js";
import { flowUtility } from "./utility.js";
import type { EconomyState, MonthStats } from "./state.js";

/**
 * What a month's event carries for programs (a room's plots): the month's statistics and, when
 * the month ends a year, that year's indicators and the Phillips and Okun correlations so far.
 */
export interface MonthEventData {
  readonly stats: MonthStats;
  readonly year: YearRow | null;
  readonly phillips: number | null;
  readonly okun: number | null;
}

const GRID_STEPS = [0, 0.25, 0.5, 0.75, 1];
const DECISION_GRID: readonly HouseholdDecision[] = Object.freeze(
  GRID_STEPS.flatMap((work) => GRID_STEPS.map((consumption) => Object.freeze({ work, consumption }))),
);

/** Household name -> index, once per population. */
const indexCache = new WeakMap<readonly string[], Map<string, number>>();

export function householdIndex(state: EconomyState, agent: string): number {
  let index = indexCache.get(state.names);
  if (!index) {
    index = new Map(state.names.map((name, i) => [name, i]));
    indexCache.set(state.names, index);
  }
  const i = index.get(agent);
  if (i === undefined) throw new RangeError(`no household named "${agent}" in this economy`);
  return i;
}

/** The month's public statistics, computed once per state (every household's view shares them). */
const statsCache = new WeakMap<EconomyState, PublicStats>();

function statsOf(state: EconomyState): PublicStats {
  let s = statsCache.get(state);
  if (!s) statsCache.set(state, (s = publicStats(state)));
  return s;
}

export class EconomyWorld implements World<EconomyState, HouseholdDecision> {
  readonly name = "economy";

  agents(state: EconomyState): readonly string[] {
    return state.names;
  }

  actionSchema(): z.ZodType<HouseholdDecision> {
    return HouseholdDecisionSchema;
  }

  noop(): HouseholdDecision {
    return IDLE;
  }

  /** A grid of decisions (steps of 0.25): what the random agent picks from and a person's form offers as buttons. */
  options(): readonly HouseholdDecision[] {
    return DECISION_GRID;
  }

  isNoop(action: HouseholdDecision): boolean {
    return action.work === 0 && action.consumption === 0;
  }

  observe(state: EconomyState, agent: string): Observation {
    const data = householdObservation(state, householdIndex(state, agent), statsOf(state));
    return { text: renderObservation(data), data };
  }

  describe(state: EconomyState): string {
    return describeEconomy(statsOf(state), state.inventory);
  }

  renderAction(_state: EconomyState, _agent: string, action: HouseholdDecision): string {
    return renderDecision(action);
  }

  isTerminal(state: EconomyState): boolean {
    return state.month >= state.params.months;
  }

  /** The last month's statistics and, when it ended a year, the year's indicators and the correlations so far (a room's plots). */
  view(state: EconomyState): MonthEventData | null {
    const stats = state.history.at(-1);
    if (!stats) return null;
    const yearEnd = stats.month % state.params.monthsPerYear === 0;
    const years = yearEnd ? yearlyIndicators(state.history, state.params.monthsPerYear) : [];
    return { stats, year: years.at(-1) ?? null, phillips: yearEnd ? phillipsCorrelation(years) : null, okun: yearEnd ? okunCorrelation(years) : null };
  }

  step(state: EconomyState, actions: ReadonlyMap<string, HouseholdDecision>, ctx: StepContext<never>): StepResult<EconomyState> {
    const n = state.names.length;
    const work = new Float64Array(n);
    const consumption = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const d = actions.get(state.names[i]!) ?? IDLE;
      work[i] = d.work;
      consumption[i] = d.consumption;
    }
    const { state: next, stats } = stepEconomy(state, work, consumption, ctx.rng);
    const rewards: Record<string, number> = {};
    const h = next.households;
    for (let i = 0; i < n; i++) rewards[state.names[i]!] = flowUtility(h.goods[i]!, h.worked[i]!, state.params);
    const unemployment = 1 - stats.employed / stats.households;
    const data = this.view(next)!;
    const event: WorldEvent = {
      text:
        `Month ${stats.month}: ${stats.employed} of ${stats.households} households worked (unemployment ${(unemployment * 100).toFixed(2)}%); ` +
        `${stats.sold.toFixed(0)} of ${stats.demand.toFixed(0)} goods wanted were sold at $${stats.price.toFixed(2)}; the price is now $${stats.priceAfter.toFixed(2)}.`,
      observers: state.names,
      data,
    };
    return { state: next, events: [event], rewards };
  }
}

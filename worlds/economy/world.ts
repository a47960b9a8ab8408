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
import { householdObservation, publicStats, type PublicStats } from "./observation.js";
import { describeEconomy, renderDecision, renderObservation } from "./prompts.js";
import { flowUtility } from "./utility.js";
import type { EconomyState } from "./state.js";

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
    const event: WorldEvent = {
      text:
        `Month ${stats.month}: ${stats.employed} of ${stats.households} households worked (unemployment ${(unemployment * 100).toFixed(2)}%); ` +
        `${stats.sold.toFixed(0)} of ${stats.demand.toFixed(0)} goods wanted were sold at $${stats.price.toFixed(2)}; the price is now $${stats.priceAfter.toFixed(2)}.`,
      observers: state.names,
      data: stats,
    };
    return { state: next, events: [event], rewards };
  }
}

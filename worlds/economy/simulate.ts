/**
 * A whole run of the economy with rule-based households, month after month, without the game
 * loop's per-agent records: what `simulate economy` runs for 10,000 households. The same
 * transition as the world's step (dynamics.ts), the same random stream (Rng.seeded(seed), as the
 * game loop seeds it) and the same observations: the loop with the same policy as its agents
 * gives the same economy (test/economy/world.test.ts checks it).
 */
import { Rng } from "../core/rng.js";
import { stepEconomy } from "./dynamics.js";
import { okunCorrelation, okunRelativeCorrelation, phillipsCorrelation, yearlyIndicators, type YearRow } from "./indicators.js";
import { householdObservation, publicStats, type PublicStats } from "./observation.js";
import type { EconomyParams } from "./params.js";
import type { HouseholdPolicy } from "./policies.js";
import { initialEconomy, type EconomyState, type MonthStats } from "./state.js";

export interface SimulateOptions {
  readonly params: EconomyParams;
  readonly seed: number | string;
  readonly policy: HouseholdPolicy;
  /** Where to start (default: initialEconomy(params, seed)); its params are the run's. */
  readonly initialState?: EconomyState;
  /** After each month (progress bars, recorders). */
  readonly onMonth?: (month: SimulatedMonth) => void;
}

/** One month of a run: the state before and after, what everyone saw, and what each household decided. */
export interface SimulatedMonth {
  readonly stats: MonthStats;
  readonly before: EconomyState;
  readonly after: EconomyState;
  /** The public statistics the households saw before deciding. */
  readonly economy: PublicStats;
  readonly work: Float64Array;
  readonly consumption: Float64Array;
}

export interface EconomyRun {
  readonly policy: string;
  readonly seed: number | string;
  readonly months: readonly MonthStats[];
  readonly years: readonly YearRow[];
  /** corr(unemployment, wage inflation) over the years with a previous year. */
  readonly phillips: number | null;
  /** corr(change in unemployment, real GDP growth). */
  readonly okun: number | null;
  /** corr(relative change in unemployment, real GDP growth). */
  readonly okunRelative: number | null;
  readonly final: EconomyState;
}

export function simulateEconomy(opts: SimulateOptions): EconomyRun {
  const { seed, policy } = opts;
  const rng = Rng.seeded(seed);
  let state = opts.initialState ?? initialEconomy(opts.params, seed);
  const n = state.names.length;
  for (let t = state.month; t < state.params.months; t++) {
    const economy = publicStats(state);
    const work = new Float64Array(n);
    const consumption = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const d = policy.decide(householdObservation(state, i, economy));
      work[i] = d.work;
      consumption[i] = d.consumption;
    }
    const next = stepEconomy(state, work, consumption, rng);
    opts.onMonth?.({ stats: next.stats, before: state, after: next.state, economy, work, consumption });
    state = next.state;
  }
  return summarizeRun(policy.id, seed, state);
}

/** The yearly table and the two correlations of a finished (or stopped) run. */
export function summarizeRun(policy: string, seed: number | string, state: EconomyState): EconomyRun {
  const years = yearlyIndicators(state.history, state.params.monthsPerYear);
  return {
    policy,
    seed,
    months: state.history,
    years,
    phillips: phillipsCorrelation(years),
    okun: okunCorrelation(years),
    okunRelative: okunRelativeCorrelation(years),
    final: state,
  };
}

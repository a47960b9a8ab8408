/**
 * The economy's state: N households in typed arrays (one array per quantity, indexed by
 * household), the firm sector (price, inventory), the government (last month's redistribution),
 * the central bank (rate), the month, and the public statistics of every month so far.
 *
 * A state is never changed once made: a step copies the arrays it writes (see dynamics.ts).
 * Typed arrays keep 10,000 households x 240 months within a second or two of a core.
 */
import { Rng } from "../core/rng.js";
import type { EconomyParams } from "./params.js";
import { drawSkills } from "./skills.js";

export interface Households {
  /** The household's skill: its initial hourly wage, drawn once (skills.ts). */
  readonly skill: Float64Array;
  /** The hourly wage offered this month. */
  readonly wage: Float64Array;
  /** The hourly wage offered last month (for "up from last month"). */
  readonly previousWage: Float64Array;
  /** Money after last month's consumption (and the year's interest). */
  readonly savings: Float64Array;
  /** 1 when the household worked last month. */
  readonly worked: Uint8Array;
  /** Last month's pre-tax labour income (0 when it did not work). */
  readonly income: Float64Array;
  /** Pre-tax income of the last month it worked (EconAgent's `agent.income`). */
  readonly lastWorkIncome: Float64Array;
  /** Tax paid last month. */
  readonly taxPaid: Float64Array;
  /** Money spent on goods last month. */
  readonly spent: Float64Array;
  /** Goods bought last month. */
  readonly goods: Float64Array;
  /** Goods it wanted last month (more than `goods` when the firm ran out). */
  readonly wanted: Float64Array;
  /** Last month's decision: propensity to work. */
  readonly work: Float64Array;
  /** Last month's decision: share of its money it meant to spend. */
  readonly consumption: Float64Array;
}

/** What happened in one month, for everyone to see (the yearly indicators are made of these). */
export interface MonthStats {
  /** 1-based. */
  readonly month: number;
  /** The price goods were bought at this month. */
  readonly price: number;
  /** The price after this month's adjustment (what EconAgent's yearly inflation averages). */
  readonly priceAfter: number;
  /** Mean hourly wage after this month's adjustment (EconAgent's wage series). */
  readonly meanWage: number;
  readonly households: number;
  readonly employed: number;
  /** Goods produced (hours worked x productivity). */
  readonly production: number;
  /** Goods households wanted to buy. */
  readonly demand: number;
  /** Goods sold (demand, or the whole inventory when it fell short). */
  readonly sold: number;
  /** The firm's inventory after production, before sales (G in the imbalance). */
  readonly supply: number;
  /** phi = (D - G) / max(D, G): the imbalance prices and wages answer. */
  readonly imbalance: number;
  readonly taxRevenue: number;
  /** What each household got back. */
  readonly lumpSum: number;
  /** Production at this month's price. */
  readonly nominalGdp: number;
  /** Production at the initial price. */
  readonly realGdp: number;
  /** Interest credited on savings at the end of this month (non-zero at the end of a year). */
  readonly interestCredited: number;
  /** The yearly interest rate in force after this month (the Taylor rule moves it at year ends). */
  readonly rate: number;
  readonly meanWork: number;
  readonly meanConsumption: number;
}

export interface EconomyState {
  readonly params: EconomyParams;
  /** Household names, in the order of the arrays ("household-1", ...). */
  readonly names: readonly string[];
  /** Months completed (0 before the first). */
  readonly month: number;
  readonly households: Households;
  /** Price of the good this month. */
  readonly price: number;
  /** The first month's price (real GDP is valued at it). */
  readonly initialPrice: number;
  /** Goods the firm holds (unsold goods carry over). */
  readonly inventory: number;
  /** Yearly interest rate on savings. */
  readonly rate: number;
  /** Every month so far. */
  readonly history: readonly MonthStats[];
}

export function householdNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `household-${i + 1}`);
}

/** The economy at month 0: skills drawn from the seed, no savings, no goods, the initial rate. */
export function initialEconomy(params: EconomyParams, seed: number | string): EconomyState {
  const n = params.households;
  const skill = drawSkills(n, params, Rng.seeded(`economy:skills:${seed}`));
  const f = () => new Float64Array(n);
  const savings = f().fill(params.initialSavings);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += skill[i]!;
  mean /= n;
  const price = params.initialPrice ?? mean;
  return {
    params,
    names: householdNames(n),
    month: 0,
    households: {
      skill,
      wage: skill.slice(),
      previousWage: skill.slice(),
      savings,
      worked: new Uint8Array(n),
      income: f(),
      lastWorkIncome: f(),
      taxPaid: f(),
      spent: f(),
      goods: f(),
      wanted: f(),
      work: f(),
      consumption: f(),
    },
    price,
    initialPrice: price,
    inventory: 0,
    rate: params.initialRate,
    history: [],
  };
}

/** The year (1-based) a month (1-based) falls in. */
export function yearOf(month: number, monthsPerYear: number): number {
  return Math.floor((month - 1) / monthsPerYear) + 1;
}

/**
 * What a household knows when it decides: its own finances, and the statistics everyone sees
 * (price, inflation, unemployment, the interest rate, the tax brackets). Nothing of another
 * household's wage, savings or decisions: the public statistics are aggregates over all of them.
 *
 * The public part is one object per month, shared by every household's view of it: 10,000
 * households read the same statistics without 10,000 copies.
 */
import { z } from "zod";
import { yearlyIndicators } from "./indicators.js";
import type { EconomyState } from "./state.js";

const money = z.number().finite();
const share = z.number().min(0).max(1);

export const LastYearSchema = z.strictObject({
  year: z.number().int().min(1),
  inflation: z.number().finite().nullable(),
  wageInflation: z.number().finite().nullable(),
  unemployment: share,
  realGdpGrowth: z.number().finite().nullable(),
});
export type LastYear = z.infer<typeof LastYearSchema>;

export const PublicStatsSchema = z.strictObject({
  month: z.number().int().min(1).describe("The month about to be decided (1-based)."),
  year: z.number().int().min(1),
  monthOfYear: z.number().int().min(1),
  households: z.number().int().min(1),
  price: money.positive().describe("The price of the good this month."),
  previousPrice: money.positive().nullable().describe("Last month's price; null in the first month."),
  unemployment: share.nullable().describe("The share of households that did not work last month; null in the first month."),
  rate: z.number().finite().describe("The yearly interest rate on savings, credited at the end of the year."),
  lastYear: LastYearSchema.nullable().describe("The last complete year's indicators; null in the first year."),
  bracketCutoffs: z.array(z.number().min(0)).min(1),
  bracketRates: z.array(share).min(1),
});
export type PublicStats = z.infer<typeof PublicStatsSchema>;

export const HouseholdFinancesSchema = z.strictObject({
  hourlyWage: money.min(0),
  wageOffer: money.min(0).describe("What a month of work pays now (hours x hourly wage), before tax."),
  previousWageOffer: money.min(0).nullable().describe("What it paid last month; null in the first month."),
  worked: z.boolean().nullable().describe("Whether it worked last month; null in the first month."),
  income: money.min(0).describe("Last month's pre-tax labour income."),
  lastWorkIncome: money.min(0).describe("Pre-tax income of the last month it worked (0 if never)."),
  taxPaid: money.min(0),
  lumpSum: money.min(0).describe("What the redistribution paid it last month."),
  savings: money.min(0),
  spent: money.min(0).describe("Money spent on goods last month."),
  shortage: z.boolean().describe("True when the firm ran out before it could buy what it wanted last month."),
  lastDecision: z.strictObject({ work: share, consumption: share }).nullable().describe("Its own decision last month; null in the first month."),
});
export type HouseholdFinances = z.infer<typeof HouseholdFinancesSchema>;

export const HouseholdObservationSchema = z.strictObject({
  household: z.string().min(1),
  finances: HouseholdFinancesSchema,
  economy: PublicStatsSchema,
});
export type HouseholdObservation = z.infer<typeof HouseholdObservationSchema>;

export function publicStats(state: EconomyState): PublicStats {
  const p = state.params;
  const month = state.month + 1;
  const last = state.history[state.history.length - 1];
  const years = yearlyIndicators(state.history, p.monthsPerYear);
  const y = years[years.length - 1];
  return {
    month,
    year: Math.floor((month - 1) / p.monthsPerYear) + 1,
    monthOfYear: ((month - 1) % p.monthsPerYear) + 1,
    households: state.names.length,
    price: state.price,
    previousPrice: last ? last.price : null,
    unemployment: last ? 1 - last.employed / last.households : null,
    rate: state.rate,
    lastYear: y
      ? { year: y.year, inflation: y.inflation, wageInflation: y.wageInflation, unemployment: y.unemployment, realGdpGrowth: y.realGdpGrowth }
      : null,
    bracketCutoffs: p.bracketCutoffs,
    bracketRates: p.bracketRates,
  };
}

/** Household `i`'s view, with the month's public statistics. */
export function householdObservation(state: EconomyState, i: number, economy: PublicStats): HouseholdObservation {
  const h = state.households;
  const hours = state.params.hoursPerMonth;
  const started = state.month > 0;
  const last = state.history[state.history.length - 1];
  return {
    household: state.names[i]!,
    finances: {
      hourlyWage: h.wage[i]!,
      wageOffer: hours * h.wage[i]!,
      previousWageOffer: started ? hours * h.previousWage[i]! : null,
      worked: started ? h.worked[i] === 1 : null,
      income: h.income[i]!,
      lastWorkIncome: h.lastWorkIncome[i]!,
      taxPaid: h.taxPaid[i]!,
      lumpSum: last ? last.lumpSum : 0,
      savings: h.savings[i]!,
      spent: h.spent[i]!,
      // Relative: a rounding difference between wanted and bought is not a shortage.
      shortage: h.wanted[i]! - h.goods[i]! > 1e-9 * Math.max(1, h.wanted[i]!),
      lastDecision: started ? { work: h.work[i]!, consumption: h.consumption[i]! } : null,
    },
    economy,
  };
}

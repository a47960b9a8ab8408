/**
 * Yearly macro indicators from the monthly statistics, as EconAgent's code computes them
 * (SimpleLabor, SimpleConsumption): a year's price level and wage are the means of the monthly
 * values after each month's adjustment; inflation and wage inflation compare those means year
 * on year; unemployment is the share of household-months without work; nominal GDP values each
 * month's production at that month's price, real GDP at the first month's price.
 *
 * And the two regularities the paper checks: the Phillips curve (unemployment against wage
 * inflation, negative) and Okun's law (the change in unemployment against real GDP growth,
 * negative), as Pearson correlations over the years that have a previous year.
 */
import type { MonthStats } from "./state.js";

export interface YearRow {
  /** 1-based. */
  readonly year: number;
  readonly nominalGdp: number;
  readonly realGdp: number;
  /** Mean price after each month's adjustment. */
  readonly priceLevel: number;
  /** Mean hourly wage after each month's adjustment. */
  readonly wage: number;
  /** Household-months without work / household-months. */
  readonly unemployment: number;
  /** The yearly interest rate at the end of the year (after the Taylor rule). */
  readonly rate: number;
  readonly meanWork: number;
  readonly meanConsumption: number;
  /** Year-on-year changes; null in the first year. */
  readonly inflation: number | null;
  readonly wageInflation: number | null;
  readonly realGdpGrowth: number | null;
  readonly nominalGdpGrowth: number | null;
  /** In points of the rate (0.05 -> 0.04 is -0.01). */
  readonly unemploymentChange: number | null;
  /** Relative (0.05 -> 0.04 is -0.2), as EconAgent's code logs "Unemployment Rate Growth". */
  readonly unemploymentGrowth: number | null;
}

/** One year's sums and means from its months (`months` holds exactly that year's months). */
export interface YearSums {
  readonly nominalGdp: number;
  readonly realGdp: number;
  readonly priceLevel: number;
  readonly wage: number;
  readonly unemployment: number;
}

export function yearSums(months: readonly MonthStats[]): YearSums {
  let nominal = 0;
  let real = 0;
  let price = 0;
  let wage = 0;
  let idle = 0;
  let householdMonths = 0;
  for (const m of months) {
    nominal += m.nominalGdp;
    real += m.realGdp;
    price += m.priceAfter;
    wage += m.meanWage;
    idle += m.households - m.employed;
    householdMonths += m.households;
  }
  const n = months.length;
  return { nominalGdp: nominal, realGdp: real, priceLevel: price / n, wage: wage / n, unemployment: householdMonths ? idle / householdMonths : 0 };
}

const growth = (now: number, before: number | undefined) => (before === undefined || before === 0 ? null : now / before - 1);

/** The complete years of `history` (a partial last year is left out). */
export function yearlyIndicators(history: readonly MonthStats[], monthsPerYear: number): YearRow[] {
  const rows: YearRow[] = [];
  let prev: YearSums | undefined;
  for (let y = 0; (y + 1) * monthsPerYear <= history.length; y++) {
    const months = history.slice(y * monthsPerYear, (y + 1) * monthsPerYear);
    const s = yearSums(months);
    let work = 0;
    let consumption = 0;
    for (const m of months) {
      work += m.meanWork;
      consumption += m.meanConsumption;
    }
    rows.push({
      year: y + 1,
      ...s,
      rate: months[months.length - 1]!.rate,
      meanWork: work / months.length,
      meanConsumption: consumption / months.length,
      inflation: growth(s.priceLevel, prev?.priceLevel),
      wageInflation: growth(s.wage, prev?.wage),
      realGdpGrowth: growth(s.realGdp, prev?.realGdp),
      nominalGdpGrowth: growth(s.nominalGdp, prev?.nominalGdp),
      unemploymentChange: prev ? s.unemployment - prev.unemployment : null,
      unemploymentGrowth: growth(s.unemployment, prev?.unemployment),
    });
    prev = s;
  }
  return rows;
}

/** Pearson's correlation; null with fewer than 3 pairs or when either side does not vary. */
export function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  if (xs.length !== ys.length) throw new RangeError(`pearson: ${xs.length} values against ${ys.length}`);
  const n = xs.length;
  if (n < 3) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i]!;
    my += ys[i]!;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  // A series equal up to rounding (its spread a trillionth of its mean) does not vary.
  const flat = (ss: number, m: number) => ss === 0 || Math.sqrt(ss / n) <= 1e-12 * Math.abs(m);
  if (flat(sxx, mx) || flat(syy, my)) return null;
  return sxy / Math.sqrt(sxx * syy);
}

/** Pairs (x, y) of the rows where both are defined. */
function pairs(rows: readonly YearRow[], x: (r: YearRow) => number | null, y: (r: YearRow) => number | null): [number[], number[]] {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const r of rows) {
    const a = x(r);
    const b = y(r);
    if (a !== null && b !== null) {
      xs.push(a);
      ys.push(b);
    }
  }
  return [xs, ys];
}

type Pairing = readonly [(r: YearRow) => number | null, (r: YearRow) => number | null];

/** What each correlation pairs, year by year (a year counts where both are defined). */
const PAIRINGS = {
  phillips: [(r) => (r.wageInflation === null ? null : r.unemployment), (r) => r.wageInflation],
  okun: [(r) => r.unemploymentChange, (r) => r.realGdpGrowth],
  okunRelative: [(r) => r.unemploymentGrowth, (r) => (r.unemploymentGrowth === null ? null : r.realGdpGrowth)],
} satisfies Record<string, Pairing>;

/**
 * How many years each correlation pairs: under three it is missing for want of years, else a
 * missing one has a series without variation (the same test the correlations use).
 */
export function correlationYears(rows: readonly YearRow[]): Record<keyof typeof PAIRINGS, number> {
  const n = (p: Pairing) => pairs(rows, ...p)[0].length;
  return { phillips: n(PAIRINGS.phillips), okun: n(PAIRINGS.okun), okunRelative: n(PAIRINGS.okunRelative) };
}

/** Phillips curve: corr(unemployment, wage inflation) over the years with a previous year. */
export function phillipsCorrelation(rows: readonly YearRow[]): number | null {
  return pearson(...pairs(rows, ...PAIRINGS.phillips));
}

/** Okun's law: corr(change in unemployment, real GDP growth). */
export function okunCorrelation(rows: readonly YearRow[]): number | null {
  return pearson(...pairs(rows, ...PAIRINGS.okun));
}

/**
 * Okun's law with the relative change of unemployment (what EconAgent's code logs as
 * "Unemployment Rate Growth"). In points, Okun is -1 by construction in this economy (real GDP
 * is proportional to the hours worked); the relative change is not tied to it so exactly.
 */
export function okunRelativeCorrelation(rows: readonly YearRow[]): number | null {
  return pearson(...pairs(rows, ...PAIRINGS.okunRelative));
}

/**
 * One month of the economy, in the order of EconAgent's components (SimpleLabor,
 * PeriodicBracketTax, SimpleConsumption, SimpleSaving); docs/worlds/economy.md writes out the
 * equations and where each comes from.
 *
 *  1. Work: household i works the month (l_i = 168 h) with probability p^w_i, and earns
 *     z_i = l_i w_i. The firm produces l_i A goods per household that works.
 *  2. Taxes: each pays T(z_i) (taxes.ts); the revenue is paid back in equal shares.
 *  3. Consumption: in a random order, each spends the share p^c_i of its money (savings plus
 *     income after taxes and redistribution) on goods at price P, while the inventory lasts.
 *  4. Prices and wages: with D the goods demanded and G the goods on offer (inventory plus this
 *     month's production), phi = (D - G) / max(D, G); every wage moves by a factor
 *     1 + U(0, alpha_w phi) and the price by 1 + U(0, alpha_P phi), above their floors.
 *  5. At the end of a year: savings earn the year's interest, then (from the second year on)
 *     the central bank sets the rate by the Taylor rule,
 *     r = max(r^n + pi^t + alpha_pi (pi - pi^t) + alpha_u (u^n - u), floor).
 *
 * Pure: the state passed in is not changed, and every draw comes from `rng`, N for work, N for
 * the order of purchases, N for wages and one for the price each month, whatever the decisions
 * (so one household's decision never shifts another's luck).
 */
import type { Rng } from "../core/rng.js";
import { yearSums } from "./indicators.js";
import type { EconomyState, MonthStats } from "./state.js";
import { taxDue } from "./taxes.js";

export interface MonthResult {
  readonly state: EconomyState;
  readonly stats: MonthStats;
}

/** Steps the economy one month on the households' decisions (propensities in [0, 1]). */
export function stepEconomy(state: EconomyState, work: ArrayLike<number>, consumption: ArrayLike<number>, rng: Rng): MonthResult {
  const p = state.params;
  const old = state.households;
  const n = state.names.length;
  if (work.length !== n || consumption.length !== n) {
    throw new RangeError(`stepEconomy: ${work.length} work and ${consumption.length} consumption decisions for ${n} households`);
  }
  const t = state.month + 1;
  const hours = p.hoursPerMonth;
  const schedule = { cutoffs: p.bracketCutoffs, rates: p.bracketRates };

  const w = Float64Array.from(work);
  const c = Float64Array.from(consumption);
  const cash = new Float64Array(n);
  const worked = new Uint8Array(n);
  const income = new Float64Array(n);
  const lastWorkIncome = old.lastWorkIncome.slice();
  const taxPaid = new Float64Array(n);

  // 1. Work and production.
  let employed = 0;
  let meanWork = 0;
  let meanConsumption = 0;
  for (let i = 0; i < n; i++) {
    const wi = w[i]!;
    const ci = c[i]!;
    if (!(wi >= 0 && wi <= 1) || !(ci >= 0 && ci <= 1)) {
      throw new RangeError(`stepEconomy: ${state.names[i]}: propensities must be in [0, 1], got work ${wi}, consumption ${ci}`);
    }
    meanWork += wi;
    meanConsumption += ci;
    const works = rng.next() < wi;
    cash[i] = old.savings[i]!;
    if (works) {
      const z = hours * old.wage[i]!;
      worked[i] = 1;
      income[i] = z;
      lastWorkIncome[i] = z;
      cash[i]! += z;
      employed++;
    }
  }
  const production = employed * hours * p.productivity;

  // 2. Taxes, paid back in equal shares.
  let revenue = 0;
  for (let i = 0; i < n; i++) {
    if (income[i] === 0) continue;
    const tax = Math.min(cash[i]!, taxDue(income[i]!, schedule));
    taxPaid[i] = tax;
    cash[i]! -= tax;
    revenue += tax;
  }
  const lumpSum = revenue / n;
  for (let i = 0; i < n; i++) cash[i]! += lumpSum;

  // 3. Consumption, in a random order, while the goods last.
  const price = state.price;
  const supply = state.inventory + production;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const tmp = order[i]!;
    order[i] = order[j]!;
    order[j] = tmp;
  }
  const spent = new Float64Array(n);
  const goods = new Float64Array(n);
  const wanted = new Float64Array(n);
  let stock = supply;
  let demand = 0;
  // Summed in the same order as the demand, so that sold equals demand exactly when nobody goes short.
  let sold = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const budget = cash[i]! * c[i]!;
    const want = budget / price;
    wanted[i] = want;
    demand += want;
    if (stock >= want) {
      stock -= want;
      goods[i] = want;
      spent[i] = budget;
    } else {
      goods[i] = stock;
      spent[i] = stock * price;
      stock = 0;
    }
    sold += goods[i]!;
    cash[i]! -= spent[i]!;
  }

  // 4. Wages and the price answer the imbalance between demand and goods on offer.
  const top = Math.max(demand, supply);
  const imbalance = top > 0 ? (demand - supply) / top : 0;
  const wage = new Float64Array(n);
  let meanWage = 0;
  const wageStep = imbalance * p.maxWageInflation;
  for (let i = 0; i < n; i++) {
    wage[i] = Math.max(old.wage[i]! * (1 + wageStep * rng.next()), p.wageFloor);
    meanWage += wage[i]!;
  }
  meanWage /= n;
  const priceAfter = Math.max(price * (1 + imbalance * p.maxPriceInflation * rng.next()), p.priceFloor);

  // 5. The year's interest, then the Taylor rule.
  let interestCredited = 0;
  let rate = state.rate;
  const yearEnd = t % p.monthsPerYear === 0;
  if (yearEnd) {
    for (let i = 0; i < n; i++) {
      const gain = state.rate * cash[i]!;
      cash[i]! += gain;
      interestCredited += gain;
    }
  }
  const stats: MonthStats = {
    month: t,
    price,
    priceAfter,
    meanWage,
    households: n,
    employed,
    production,
    demand,
    sold,
    supply,
    imbalance,
    taxRevenue: revenue,
    lumpSum,
    nominalGdp: production * price,
    realGdp: production * state.initialPrice,
    interestCredited,
    rate,
    meanWork: meanWork / n,
    meanConsumption: meanConsumption / n,
  };
  const history = [...state.history, stats];
  if (yearEnd && t > p.monthsPerYear) {
    rate = taylorRate(p, history, t);
    history[history.length - 1] = { ...stats, rate };
  }

  return {
    state: {
      params: p,
      names: state.names,
      month: t,
      households: {
        skill: old.skill,
        wage,
        previousWage: old.wage,
        savings: cash,
        worked,
        income,
        lastWorkIncome,
        taxPaid,
        spent,
        goods,
        wanted,
        work: w,
        consumption: c,
      },
      price: priceAfter,
      initialPrice: state.initialPrice,
      inventory: stock,
      rate,
      history,
    },
    stats: history[history.length - 1]!,
  };
}

/** The rate for the year after the one ending at month `t` (`history` holds months 1..t). */
export function taylorRate(
  p: Pick<EconomyState["params"], "monthsPerYear" | "naturalRate" | "inflationTarget" | "inflationWeight" | "naturalUnemployment" | "unemploymentWeight" | "rateFloor">,
  history: readonly MonthStats[],
  t: number,
): number {
  const y = p.monthsPerYear;
  const thisYear = yearSums(history.slice(t - y, t));
  const lastYear = yearSums(history.slice(t - 2 * y, t - y));
  const inflation = thisYear.priceLevel / lastYear.priceLevel - 1;
  const r =
    p.naturalRate +
    p.inflationTarget +
    p.inflationWeight * (inflation - p.inflationTarget) +
    p.unemploymentWeight * (p.naturalUnemployment - thisYear.unemployment);
  return Math.max(r, p.rateFloor);
}

/**
 * A household's utility in a month: CRRA utility of the goods it consumed minus the disutility
 * of the work it did,
 *
 *   u_t = ((c_t / c_bar)^(1 - eta) - 1) / (1 - eta) - nu * l_t / 168      (log(c_t / c_bar) at eta = 1)
 *
 * with consumption in units of c_bar = 168 h x productivity, the goods one full-time month
 * produces (so a household consuming one month of output has u = 0 before the work it did), and
 * consumption below `minConsumption` counted at that floor (log utility stays finite).
 */
import type { EconomyParams } from "./params.js";

export type UtilityParams = Pick<EconomyParams, "crra" | "laborDisutility" | "hoursPerMonth" | "productivity" | "minConsumption">;

export function crra(x: number, eta: number): number {
  return eta === 1 ? Math.log(x) : (Math.pow(x, 1 - eta) - 1) / (1 - eta);
}

/** `goods` consumed in the month, `labor` the share of the month worked (0 or 1, or its expectation). */
export function flowUtility(goods: number, labor: number, p: UtilityParams): number {
  const c = Math.max(goods / (p.hoursPerMonth * p.productivity), p.minConsumption);
  return crra(c, p.crra) - p.laborDisutility * labor;
}

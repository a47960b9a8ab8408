/**
 * The progressive income tax: income within each bracket is taxed at that bracket's rate,
 * T(z) = sum_k tau_k * min(max(z - b_k, 0), b_{k+1} - b_k), with b_{K+1} = infinity
 * (PeriodicBracketTax.taxes_due). What is collected is paid back in equal shares.
 */

export interface TaxSchedule {
  /** Lower edges b_k, increasing from 0. */
  readonly cutoffs: readonly number[];
  /** Marginal rates tau_k. */
  readonly rates: readonly number[];
}

export function taxDue(income: number, s: TaxSchedule): number {
  const { cutoffs, rates } = s;
  let tax = 0;
  for (let k = 0; k < cutoffs.length; k++) {
    const lo = cutoffs[k]!;
    if (income <= lo) break;
    const hi = k + 1 < cutoffs.length ? cutoffs[k + 1]! : Infinity;
    tax += rates[k]! * (Math.min(income, hi) - lo);
  }
  return tax;
}

/** The brackets as a person reads them: "$0.00-$808.33: 10%, ..., above $42525.00: 37%". */
export function describeBrackets(s: TaxSchedule): string {
  return s.cutoffs
    .map((lo, k) => {
      const rate = `${+(s.rates[k]! * 100).toFixed(2)}%`;
      const hi = s.cutoffs[k + 1];
      return hi === undefined ? `above $${lo.toFixed(2)}: ${rate}` : `$${lo.toFixed(2)}-$${hi.toFixed(2)}: ${rate}`;
    })
    .join(", ");
}

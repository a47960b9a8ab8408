/**
 * A mean and its standard error: the sample standard deviation (n - 1) over sqrt(n), 0 for one
 * value. What the worlds' reports put beside a mean over users, points or questions, and what a
 * paired difference (B minus A at the same points) is judged by.
 */
export interface MeanError {
  readonly mean: number;
  readonly error: number;
  readonly n: number;
}

/** `what` names the values in the error for none ("users", "points"). */
export function meanError(xs: ArrayLike<number>, what = "values"): MeanError {
  const n = xs.length;
  if (n === 0) throw new RangeError(`a mean over no ${what}`);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += xs[i]!;
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (xs[i]! - mean) ** 2;
  return { mean, error: n > 1 ? Math.sqrt(ss / (n - 1) / n) : 0, n };
}

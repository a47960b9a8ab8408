/**
 * The Wilson score interval of an accuracy: where the true rate of `correct` out of `total`
 * independent questions lies at 95% confidence. Unlike the normal approximation (p ± 1.96·SE) it
 * stays inside [0, 1] and keeps its coverage at 0 or all correct and on small counts, which is
 * what a self-play round's quiz gives. Questions about one story are not independent of each
 * other: on such a set the interval is a floor on the uncertainty, not its measure.
 */

/** The two-sided 95% quantile of the standard normal. */
export const Z95 = 1.959963984540054;

export interface Interval {
  readonly low: number;
  readonly high: number;
}

export function wilsonInterval(correct: number, total: number, z = Z95): Interval {
  if (!Number.isInteger(correct) || !Number.isInteger(total) || total < 0 || correct < 0 || correct > total) {
    throw new RangeError(`wilsonInterval: expected 0 <= correct <= total, whole numbers (got ${correct} of ${total})`);
  }
  if (total === 0) return { low: 0, high: 1 };
  const p = correct / total;
  const z2 = z * z;
  const d = 1 + z2 / total;
  const centre = (p + z2 / (2 * total)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total))) / d;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** `62.5% [56.9, 67.9] (182/291)`: an accuracy in percent with its Wilson interval and counts. */
export function accuracyCell(correct: number, total: number): string {
  if (total === 0) return "– (0 questions)";
  const { low, high } = wilsonInterval(correct, total);
  return `${((100 * correct) / total).toFixed(1)}% [${(100 * low).toFixed(1)}, ${(100 * high).toFixed(1)}] (${correct}/${total})`;
}

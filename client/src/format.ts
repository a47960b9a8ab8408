/**
 * Numbers as the client writes them everywhere (a header's line, a chart's axis, legend and
 * tooltip): three significant digits, and powers of ten where fixed digits would read as zero or
 * run long. A KL of 0.00000307 is "3.07e-6" in the header and on its chart alike, not "0.0000" in
 * one and "0.00000307" in the other.
 */

function trimZeros(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

function exponential(y: number, digits: number): string {
  const [mantissa, exponent] = y.toExponential(digits - 1).split("e");
  return `${trimZeros(mantissa!)}e${Number(exponent)}`;
}

/** Whether numbers of this size are written with a power of ten. */
export function needsExponent(magnitude: number): boolean {
  return magnitude !== 0 && (magnitude < 1e-3 || magnitude >= 1e5);
}

/** `y` with `digits` significant digits (3): "0.5", "12.3", "1234", "3.07e-6", "1.2e6"; "–" when it is not a number. */
export function formatNumber(y: number | null | undefined, digits = 3): string {
  if (y === null || y === undefined || !Number.isFinite(y)) return "–";
  if (y === 0) return "0";
  const a = Math.abs(y);
  if (needsExponent(a)) return exponential(y, digits);
  if (a >= 10 ** (digits - 1)) return y.toFixed(0);
  return trimZeros(y.toPrecision(digits));
}

/**
 * An axis' tick labels: one style for the whole axis (powers of ten when its largest tick needs
 * them), so that neighbouring ticks do not switch between "8e-4" and "0.001".
 */
export function formatTicks(ticks: readonly number[]): string[] {
  const largest = Math.max(0, ...ticks.map((t) => Math.abs(t)));
  const exp = needsExponent(largest);
  return ticks.map((t) => {
    if (t === 0 || Math.abs(t) < largest * 1e-9) return "0";
    if (exp) return exponential(t, 3);
    return Math.abs(t) >= 100 ? t.toFixed(0) : trimZeros(t.toPrecision(3));
  });
}

export function pct(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? "–" : `${(100 * x).toFixed(1)}%`;
}

/**
 * A perceived number in a seat's list: integers whole, fractions to four decimals (money and
 * propensities at a glance), and four significant digits below 0.001, where four decimals would
 * read 0.00004 as "0".
 */
export function formatPerceived(v: number): string {
  if (Number.isInteger(v)) return String(v);
  if (Math.abs(v) < 1e-3) return String(Number(v.toPrecision(4)));
  return String(Number(v.toFixed(4)));
}

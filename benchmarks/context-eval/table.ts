/**
 * The evaluation's Markdown table, character for character as the social-world-model project's
 * `run_socialized_context_eval.py` prints it (file ids padded to 12, three decimals, a mean row and
 * a final-score row), so scripts that read one read the other. Numbers format as Python's
 * `f"{x:.3f}"` (ties to even) and means sum as numpy's `np.mean` does (pairwise).
 */

export interface TableRow {
  readonly fileId: string;
  readonly structural: number;
  readonly observation: number;
  readonly overall: number;
}

export function renderTable(rows: readonly TableRow[]): string {
  const header = "| File         | Structural | Observation Accuracy | Overall |\n|--------------|------------|----------------------|---------|";
  const lines = rows.map((r) => `| ${r.fileId.padEnd(12)} | ${fmt3(r.structural)} | ${fmt3(r.observation)} | ${fmt3(r.overall)} |`);
  const meanOverall = npMean(rows.map((r) => r.overall));
  const mean = `| **Mean**     | ${fmt3(npMean(rows.map((r) => r.structural)))} | ${fmt3(npMean(rows.map((r) => r.observation)))} | ${fmt3(meanOverall)} |`;
  const final = `| **Final Score** | - | - | **${fmt3(meanOverall)}** |`;
  return [header, ...lines, mean, final].join("\n");
}

/**
 * Python's format(x, ".3f"): the double's exact value rounded, ties to even. A double is exactly
 * halfway between two thousandths only when it is an odd number of sixteenths (0.0625, 0.1875...);
 * there JS's toFixed rounds up and Python to even.
 */
export function fmt3(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? "inf" : x < 0 ? "-inf" : "nan";
  const sixteenths = x * 16;
  if (Number.isInteger(sixteenths) && Math.abs(sixteenths) % 2 === 1) {
    const y = x * 1000; // exact: odd * 62.5
    const lo = Math.floor(y);
    const even = lo % 2 === 0 ? lo : lo + 1;
    return (even / 1000).toFixed(3);
  }
  return x.toFixed(3);
}

/** numpy's pairwise summation (blocks of 8 accumulators up to 128 values, halves above), then / n. */
export function npMean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : pairwiseSum(xs, 0, xs.length) / xs.length;
}

function pairwiseSum(a: readonly number[], start: number, n: number): number {
  if (n < 8) {
    // numpy starts from -0.0 so that a sum of negative zeros stays negative.
    let res = -0.0;
    for (let i = 0; i < n; i++) res += a[start + i]!;
    return res;
  }
  if (n <= 128) {
    const r = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => a[start + k]!);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let k = 0; k < 8; k++) r[k]! += a[start + i + k]!;
    let res = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!));
    for (; i < n; i++) res += a[start + i]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2);
}

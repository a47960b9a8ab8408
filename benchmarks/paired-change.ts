/**
 * How one agent's answers changed against another's on the same questions: the questions it got
 * right that the other got wrong (`gained`) and the reverse (`lost`), and the exact McNemar test
 * of whether the change is more than chance (two-sided binomial test of `gained` among the
 * `gained + lost` questions that changed, at one half). On the same questions this is far more
 * sensitive than comparing two accuracies' intervals: the questions both get right or both get
 * wrong add no noise.
 */

export interface PairedChange {
  readonly gained: number;
  readonly lost: number;
  /** The exact two-sided p-value (1 when nothing changed). */
  readonly p: number;
  /** Questions both answered. */
  readonly shared: number;
  /** The accuracy's change, (gained - lost) / shared: the mean of the per-question differences (+1, 0, -1). */
  readonly difference: number;
  /** That mean's standard error: the differences' sample standard deviation over sqrt(shared) (0 below two questions). */
  readonly standardError: number;
  /**
   * With `clusterOf`: the standard error with the questions' differences summed by cluster (the
   * questions of one cascade), which does not take questions of one cluster as independent: the
   * cluster-robust (CR1) one, sqrt(G / (G - 1) * sum over clusters of (the cluster's sum of
   * d - mean)^2) / shared, over the G clusters (0 below two).
   */
  readonly cluster?: { readonly clusters: number; readonly standardError: number };
}

/** log(n choose k), exact enough for thousands of questions. */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log((n - k + i) / i);
  return s;
}

export function mcnemarExact(gained: number, lost: number): number {
  const n = gained + lost;
  if (n === 0) return 1;
  const k = Math.min(gained, lost);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/**
 * `after` against `before`, question by question (by id); only questions both answered count.
 * `clusterOf` names the cluster of a question's id (its cascade) for the cluster-level standard
 * error. Throws when they share no question: then they were not asked the same set.
 */
export function pairedChange(before: ReadonlyMap<string, boolean>, after: ReadonlyMap<string, boolean>, clusterOf?: (id: string) => string): PairedChange {
  let gained = 0;
  let lost = 0;
  let shared = 0;
  // Per cluster: its questions and the sum of their differences.
  const clusters = new Map<string, { n: number; sum: number }>();
  for (const [id, right] of after) {
    const was = before.get(id);
    if (was === undefined) continue;
    shared++;
    const d = right === was ? 0 : right ? 1 : -1;
    if (d > 0) gained++;
    else if (d < 0) lost++;
    if (clusterOf) {
      const c = clusters.get(clusterOf(id)) ?? { n: 0, sum: 0 };
      c.n++;
      c.sum += d;
      clusters.set(clusterOf(id), c);
    }
  }
  if (shared === 0 && (before.size > 0 || after.size > 0)) throw new Error("pairedChange: the two sets of answers share no question");
  const difference = shared ? (gained - lost) / shared : 0;
  // The differences are +1 (gained), -1 (lost) and 0; their sum of squares about the mean:
  const squares = gained + lost - shared * difference * difference;
  const standardError = shared > 1 ? Math.sqrt(squares / (shared - 1) / shared) : 0;
  const change = { gained, lost, p: mcnemarExact(gained, lost), shared, difference, standardError };
  if (!clusterOf) return change;
  const g = clusters.size;
  let between = 0;
  for (const c of clusters.values()) between += (c.sum - c.n * difference) ** 2;
  return { ...change, cluster: { clusters: g, standardError: g > 1 ? Math.sqrt((g / (g - 1)) * between) / shared : 0 } };
}

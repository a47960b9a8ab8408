/**
 * ROUGE-L F-measure as Google's rouge-score package computes it (`rouge_scorer.RougeScorer(["rougeL"])`
 * without stemming): text lowercased, every run of characters other than a-z and 0-9 a separator,
 * then precision = LCS / prediction tokens, recall = LCS / reference tokens and F = 2PR / (P + R);
 * 0 when either side has no token.
 */

export function rougeTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .split(" ")
    .filter((t) => t !== "");
}

/** Length of the longest common subsequence of two token lists (dynamic programming, one row). */
export function lcsLength(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  let prev = new Array<number>(b.length + 1).fill(0);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, cur[j - 1]!);
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

export interface RougeScore {
  readonly precision: number;
  readonly recall: number;
  readonly fmeasure: number;
}

export function rougeL(prediction: string, reference: string): RougeScore {
  const p = rougeTokens(prediction);
  const r = rougeTokens(reference);
  if (p.length === 0 || r.length === 0) return { precision: 0, recall: 0, fmeasure: 0 };
  const lcs = lcsLength(r, p);
  const precision = lcs / p.length;
  const recall = lcs / r.length;
  const fmeasure = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, fmeasure };
}

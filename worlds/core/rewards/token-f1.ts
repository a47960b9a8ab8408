/**
 * Token F1 and exact match as the SQuAD v1.1 evaluator computes them (`normalize_answer`,
 * `f1_score`, `exact_match_score` of the official evaluate-v1.1.py): lowercase, punctuation
 * removed (Python's string.punctuation, so "green_crate" becomes "greencrate"), the articles a,
 * an, the removed, whitespace collapsed; F1 over the multiset of tokens in common.
 */

// Python's string.punctuation.
const PUNCTUATION = new Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");

export function normalizeAnswer(s: string): string {
  let out = "";
  for (const ch of s.toLowerCase()) if (!PUNCTUATION.has(ch)) out += ch;
  return out
    .replace(/\b(a|an|the)\b/g, " ")
    .split(/\s+/)
    .filter((t) => t !== "")
    .join(" ");
}

export function squadTokens(s: string): string[] {
  const n = normalizeAnswer(s);
  return n === "" ? [] : n.split(" ");
}

/** SQuAD's F1 between a prediction and one reference (0 when they share no token). */
export function tokenF1(prediction: string, reference: string): number {
  return bagOfTokensF1(squadTokens(prediction), squadTokens(reference));
}

/** F1 over the multiset of tokens two texts share, however they were tokenized (0 when none). */
export function bagOfTokensF1(p: readonly string[], r: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const t of r) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same++;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / p.length;
  const recall = same / r.length;
  return (2 * precision * recall) / (precision + recall);
}

/** SQuAD's exact match: equal after normalization. */
export function normalizedExactMatch(prediction: string, reference: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(reference);
}

/** SQuAD's metric_max_over_ground_truths: the best score against any of the references. */
export function maxOverReferences(score: (p: string, r: string) => number, prediction: string, references: readonly string[]): number {
  let best = 0;
  for (const r of references) best = Math.max(best, score(prediction, r));
  return best;
}

/**
 * Full ranking: the k best-scored items over the whole catalogue, a user's history left out (as
 * RecBole's full-sort evaluation sets their scores to -inf). Ties go to the lower item index, so
 * that a ranking is a function of the scores alone; a NaN score ranks last.
 */
export function topK(scores: ArrayLike<number>, k: number, exclude: Iterable<number> = []): number[] {
  const masked = new Set(exclude);
  const idx: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < scores.length; i++) {
    if (masked.has(i)) continue;
    const s = Number.isNaN(scores[i]!) ? -Infinity : scores[i]!;
    if (idx.length === k && !(s > val[k - 1]!)) continue;
    // Insert after every item scored at least as high (equal scores: lower index first).
    let at = idx.length === k ? k - 1 : idx.length;
    while (at > 0 && val[at - 1]! < s) {
      idx[at] = idx[at - 1]!;
      val[at] = val[at - 1]!;
      at--;
    }
    idx[at] = i;
    val[at] = s;
  }
  return idx;
}

/**
 * Training questions balanced by type: as many of each type, so that a rare type (ToMi's
 * first-order false belief, a tenth of the first-order questions in ToMi's own mix) weighs as much
 * in the loss as a common one. A policy trained on the natural mix learns the common answer for
 * the rare type's questions (the object's real place), which the natural mix rewards.
 */
import { Rng } from "../../worlds/core/rng.js";

/**
 * The indices of `n` items, `n / k` of each of the k types (the first of each type in the given
 * order, and the indices in that order); a type with fewer gives all it has.
 */
export function balancedByType(types: readonly string[], n: number): number[] {
  const kinds = [...new Set(types)];
  const quota = Math.floor(n / Math.max(1, kinds.length));
  const taken = new Map<string, number>();
  const kept: number[] = [];
  types.forEach((t, i) => {
    const k = taken.get(t) ?? 0;
    if (k < quota) {
      taken.set(t, k + 1);
      kept.push(i);
    }
  });
  return kept;
}

/** How many items of each type `indices` hold, for the data stage's report. */
export function countByType(types: readonly string[], indices: readonly number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const i of indices) counts[types[i]!] = (counts[types[i]!] ?? 0) + 1;
  return counts;
}

/**
 * The indices of as many items of each type as the rarest type has, drawn in a seeded order (so
 * that a common type's kept items come from the whole file, not its first part), sorted.
 */
export function equalByType(types: readonly string[], seed: number | string): number[] {
  const counts = countByType(
    types,
    types.map((_, i) => i),
  );
  const kinds = Object.keys(counts);
  if (kinds.length === 0) return [];
  const order = Rng.seeded(`equal-by-type|${seed}`).shuffle(types.map((_, i) => i));
  return balancedByType(
    order.map((i) => types[i]!),
    kinds.length * Math.min(...Object.values(counts)),
  )
    .map((p) => order[p]!)
    .sort((a, b) => a - b);
}

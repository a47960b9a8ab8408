/**
 * Households' skills (initial hourly wages), as EconAgent's SimpleLabor draws them: a Pareto
 * (Lomax) distribution, x = U^(-1/a) - 1, scaled and clipped to skill = min(m, (m - 1) x + 1),
 * so that the lowest skill is 1 and the highest m. SimpleLabor draws `skillBatches` (1000)
 * samples of N skills, sorts each, and gives the i-th ranked household the mean of the i-th
 * ranked skills: the population is a smooth Pareto profile, not one noisy sample.
 *
 * The authors' code gives agent i the i-th lowest skill; here the ranks are shuffled among the
 * households, so that a household's name says nothing about its skill.
 */
import type { Rng } from "../core/rng.js";
import type { EconomyParams } from "./params.js";

export function paretoSkill(u: number, shape: number, maxSkill: number): number {
  // u in (0, 1]: numpy's pareto(a) is the Lomax draw U^(-1/a) - 1.
  const x = Math.pow(u, -1 / shape) - 1;
  return Math.min(maxSkill, (maxSkill - 1) * x + 1);
}

/** N skills, in a random order of households. */
export function drawSkills(n: number, p: Pick<EconomyParams, "paretoShape" | "maxSkill" | "skillBatches">, rng: Rng): Float64Array {
  const sum = new Float64Array(n);
  const batch = new Float64Array(n);
  for (let b = 0; b < p.skillBatches; b++) {
    for (let i = 0; i < n; i++) batch[i] = paretoSkill(1 - rng.next(), p.paretoShape, p.maxSkill);
    batch.sort();
    for (let i = 0; i < n; i++) sum[i]! += batch[i]!;
  }
  const skills = new Float64Array(n);
  const order = rng.shuffle(Array.from({ length: n }, (_, i) => i));
  for (let i = 0; i < n; i++) skills[order[i]!] = sum[i]! / p.skillBatches;
  return skills;
}

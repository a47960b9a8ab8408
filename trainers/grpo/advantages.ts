/**
 * GRPO's advantages: every sample of a group shares its prompt, and its advantage is its reward
 * against the group's, A = (R - group mean) / (std + eps), the same for every token of the reply
 * (verl's compute_grpo_outcome_advantage). std is the group's (torch.std: unbiased, with a group
 * of one counting as mean 0 and std 1, as verl does), the whole batch's (the batch-level
 * normalization of LitePPO: one std of all rewards), or none (Dr. GRPO: A = R - group mean).
 */
import type { AdvantageStd } from "./config.js";
import { isFlatGroup } from "./dynamic-sampling.js";

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Unbiased (n - 1) standard deviation, as torch.std; 0 for fewer than two values. */
export function unbiasedStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * Advantages for rewards laid out group by group (`groups[g]` holds the rewards of prompt g's
 * samples). Returns the same layout.
 */
export function groupAdvantages(groups: readonly (readonly number[])[], std: AdvantageStd, eps: number): number[][] {
  const batchStd = std === "batch" ? unbiasedStd(groups.flat()) : 0;
  return groups.map((rewards) => {
    // verl: a group of one has mean 0 and std 1.
    const single = rewards.length === 1;
    // Equal rewards: exactly zero (summing them in floating point could leave a 1e-16 residue).
    if (!single && isFlatGroup(rewards)) return rewards.map(() => 0);
    const m = single ? 0 : mean(rewards);
    const s = std === "none" ? 0 : std === "batch" ? batchStd : single ? 1 : unbiasedStd(rewards);
    return rewards.map((r) => (std === "none" ? r - m : (r - m) / (s + eps)));
  });
}

/**
 * The advantage estimators (`advantage` in config.ts), as verl's core_algos registers them: each
 * turns the rewards of a group (every sample of a group shares its prompt) into one advantage per
 * reply, the same for every token of it.
 *
 * grpo: the reply's reward against the group's, A = (R - group mean) / (std + eps) (verl's
 * compute_grpo_outcome_advantage). std is the group's (torch.std: unbiased, with a group of one
 * counting as mean 0 and std 1, as verl does), the whole batch's (the batch-level normalization of
 * LitePPO: one std of all rewards), or none (Dr. GRPO: A = R - group mean).
 *
 * rft: rejection-sampling fine-tuning (RAFT, Dong et al. 2023; RFT, Yuan et al. 2023): the replies
 * with the group's highest reward, when it is above 0, share the group's weight, A = G / k for each
 * of the k best of G replies, and the others get 0; a group where no reply earned anything teaches
 * nothing. With one update per batch (ratio 1) the step is supervised learning on the policy's own
 * best replies. Why it is there: with a right-or-wrong reward, grpo's expected step is
 * sum_q grad p_q / std_q, which vanishes on the questions the policy is confidently wrong about
 * (p_q near 0: its groups are all wrong, or one right reply among them), while rft's expected step
 * on a group that holds a right reply is grad log p_q: the gradient of log P(reward = 1), the
 * likelihood of succeeding, which weighs the questions the policy is worst at most.
 */
import type { AdvantageStd, GrpoConfig } from "./config.js";
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

export type AdvantageSettings = Pick<GrpoConfig, "advantage" | "advantageStd" | "advantageEps">;

/**
 * Advantages for rewards laid out group by group (`groups[g]` holds the rewards of prompt g's
 * samples), by the estimator `c.advantage`. Returns the same layout.
 */
export function advantagesOf(groups: readonly (readonly number[])[], c: AdvantageSettings): number[][] {
  return c.advantage === "rft" ? groups.map(rftAdvantages) : groupAdvantages(groups, c.advantageStd, c.advantageEps);
}

/** rft: the best replies, when they earned anything, share the group's weight G. */
export function rftAdvantages(rewards: readonly number[]): number[] {
  const best = Math.max(...rewards);
  if (!(best > 0)) return rewards.map(() => 0);
  const k = rewards.filter((r) => r === best).length;
  return rewards.map((r) => (r === best ? rewards.length / k : 0));
}

/** grpo's advantages, group by group. */
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

/**
 * DAPO's dynamic sampling: a group whose samples all got the same reward has zero advantage
 * everywhere under grpo and teaches nothing, so it is dropped, and the trainer samples more prompts
 * until the batch is full again (or it gives up after a number of rollout batches and trains on
 * what it has). Which groups teach depends on the advantage estimator (`teaches`: under rft, a
 * group whose replies were all right teaches, one where none was does not).
 */
import type { AdvantageEstimator, CreditAssignment } from "./config.js";

/** True when every reward of the group is the same (nothing to learn from it). */
export function isFlatGroup(rewards: readonly number[]): boolean {
  return rewards.every((r) => r === rewards[0]);
}

/** Whether a group's rewards give any reply a nonzero advantage under the estimator (advantages.ts). */
export function teaches(rewards: readonly number[], estimator: AdvantageEstimator): boolean {
  return estimator === "rft" ? Math.max(...rewards) > 0 : !isFlatGroup(rewards);
}

/**
 * The groups worth training on under the estimator (`teaches`), in order, and how many were
 * dropped. Under per-level credit a group teaches when one of its levels does.
 */
export function keepInformativeGroups<G extends { readonly rewards: readonly number[]; readonly levelRewards?: readonly (readonly number[])[] }>(
  groups: readonly G[],
  estimator: AdvantageEstimator = "grpo",
  credit: CreditAssignment = "reply",
): { kept: G[]; dropped: number } {
  const levelsTeach = (l: readonly (readonly number[])[]) => (l[0] ?? []).some((_, k) => teaches(l.map((r) => r[k]!), estimator));
  const kept = groups.filter((g) => (credit === "level" && g.levelRewards ? levelsTeach(g.levelRewards) : teaches(g.rewards, estimator)));
  return { kept, dropped: groups.length - kept.length };
}

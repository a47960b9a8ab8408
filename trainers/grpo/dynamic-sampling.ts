/**
 * DAPO's dynamic sampling: a group whose samples all got the same reward has zero advantage
 * everywhere under grpo and teaches nothing, so it is dropped, and the trainer samples more prompts
 * until the batch is full again (or it gives up after a number of rollout batches and trains on
 * what it has). Which groups teach depends on the estimator (advantages.ts `teaches`: under rft, a
 * group whose replies were all right teaches, one where none was does not).
 */

/** True when every reward of the group is the same (nothing to learn from it). */
export function isFlatGroup(rewards: readonly number[]): boolean {
  return rewards.every((r) => r === rewards[0]);
}

/** The groups worth training on (`teaches`), in order, and how many were dropped. */
export function keepInformativeGroups<G extends { readonly rewards: readonly number[] }>(
  groups: readonly G[],
  teaches: (rewards: readonly number[]) => boolean = (r) => !isFlatGroup(r),
): { kept: G[]; dropped: number } {
  const kept = groups.filter((g) => teaches(g.rewards));
  return { kept, dropped: groups.length - kept.length };
}

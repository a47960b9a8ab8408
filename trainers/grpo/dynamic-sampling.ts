/**
 * DAPO's dynamic sampling: a group whose samples all got the same reward has zero advantage
 * everywhere and teaches nothing, so it is dropped, and the trainer samples more prompts until the
 * batch is full again (or it gives up after a number of rollout batches and trains on what it has).
 */

/** True when every reward of the group is the same (nothing to learn from it). */
export function isFlatGroup(rewards: readonly number[]): boolean {
  return rewards.every((r) => r === rewards[0]);
}

/** The groups worth training on, in order, and how many were dropped. */
export function keepInformativeGroups<G extends { readonly rewards: readonly number[] }>(groups: readonly G[]): { kept: G[]; dropped: number } {
  const kept = groups.filter((g) => !isFlatGroup(g.rewards));
  return { kept, dropped: groups.length - kept.length };
}

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
 *
 * Credit (`credit`). An answer written in levels (usersim's hierarchy: each state, then the
 * response, one sequence of the loss each under per-level generation) is scored level by level
 * by its judge. `reply`: every level's tokens get the reply's advantage, from the reply's reward
 * (the weighted mean of its levels' scores). `level` (HumanLM, which rewards each tag by its own
 * score): level k's tokens get the estimator's advantage of level k's reward among the group's
 * level-k rewards (levelAdvantagesOf), so a stance is credited for the stance it wrote and not for
 * the response after it; each level is its own group, normalized by its own spread. Under joint
 * generation a reply is one sequence, and its tokens carry the levels' advantages one by one
 * (level-tokens.ts): a token of level k's block level k's, a token outside every block (and every
 * token of a malformed reply, which is not split) the reply's.
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

/**
 * Per-level credit: rewards laid out group by group, reply by reply, level by level
 * (`groups[g][i][k]`: level k of reply i of prompt g); level k's rewards across a group are one
 * group of the estimator `c.advantage` (grpo's std "batch" is then level k's across the batch).
 * Returns the same layout. Every reply of a group has the same levels.
 */
export function levelAdvantagesOf(groups: readonly (readonly (readonly number[])[])[], c: AdvantageSettings): number[][][] {
  const levels = groups.map((g, gi) => {
    const k = g[0]?.length ?? 0;
    if (g.some((r) => r.length !== k)) throw new Error(`group ${gi}: its replies have different numbers of levels (${g.map((r) => r.length).join(", ")})`);
    return k;
  });
  const out = groups.map((g) => g.map((r) => r.map(() => 0)));
  for (let k = 0; k < Math.max(0, ...levels); k++) {
    const having = groups.flatMap((_, gi) => (levels[gi]! > k ? [gi] : []));
    const column = advantagesOf(
      having.map((gi) => groups[gi]!.map((r) => r[k]!)),
      c,
    );
    having.forEach((gi, j) => column[j]!.forEach((a, i) => (out[gi]![i]![k] = a)));
  }
  return out;
}

export type CreditSettings = AdvantageSettings & Pick<GrpoConfig, "credit">;

type CreditGroup = { readonly rewards: readonly number[]; readonly levelRewards?: readonly (readonly number[])[]; readonly point: { readonly id: string } };
/**
 * A loss sequence: `group` its group, `index` its reply there, `level` which level of that reply
 * it is (a per-level reply), `tokenLevels` the level of each of its tokens, -1 for none (a joint
 * reply that was split: level-tokens.ts).
 */
type CreditSequence = { readonly group: number; readonly index: number; readonly level?: number; readonly tokenLevels?: ArrayLike<number> };

/** A sequence's credit: one advantage, or (a split joint reply under level credit) one per token. */
export interface SequenceCredit {
  readonly advantage: number;
  readonly perToken?: Float64Array;
}

/**
 * The credit of each loss sequence: its reply's advantage under `reply` credit; under `level`
 * credit (which needs every group's level rewards: a judge that scores each level), a per-level
 * sequence its level's, a split joint reply its tokens' levels' (the reply's where a token has
 * none), an unsplit joint reply (malformed) the reply's.
 */
export function sequenceCredits(groups: readonly CreditGroup[], sequences: readonly CreditSequence[], c: CreditSettings): SequenceCredit[] {
  const byReply = advantagesOf(
    groups.map((g) => g.rewards),
    c,
  );
  if (c.credit !== "level") return sequences.map((s) => ({ advantage: byReply[s.group]![s.index]! }));
  const byLevel = levelAdvantagesOf(
    groups.map((g) => {
      if (!g.levelRewards) throw new Error(`decision point ${g.point.id}: level credit needs a judge that scores each level of a reply written in levels (usersim's); this point's judge does not`);
      return g.levelRewards;
    }),
    c,
  );
  return sequences.map((s) => {
    const levels = byLevel[s.group]![s.index]!;
    if (s.level !== undefined) return { advantage: levels[s.level]! };
    const reply = byReply[s.group]![s.index]!;
    if (!s.tokenLevels) return { advantage: reply };
    return { advantage: reply, perToken: Float64Array.from(s.tokenLevels, (k) => (k < 0 ? reply : levels[k]!)) };
  });
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

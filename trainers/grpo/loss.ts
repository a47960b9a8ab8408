/**
 * The GRPO policy loss, token by token, as verl's compute_policy_loss ("vanilla") and agg_loss
 * define it, with its derivative in each token's log-prob.
 *
 * Per token, with ratio r = exp(logp - oldLogp) (the log-ratio clamped to [-20, 20]) and the
 * sequence's advantage A (or the token's own, `advantages`):
 *   pg1 = -A r,  pg2 = -A clip(r, 1 - clipLow, 1 + clipHigh),  clipped = max(pg1, pg2)
 *   dual clip (A < 0 only): min(clipped, -A * dualClip)
 * plus klCoef * kl(logp, refLogp) when the KL is a loss term. The loss of a batch aggregates the
 * token losses linearly, each token weighted by its share:
 *   token-mean               1 / (tokens in the batch)
 *   seq-mean-token-mean      1 / (sequences * tokens of its sequence)
 *   seq-mean-token-sum       1 / sequences
 *   seq-mean-token-sum-norm  1 / horizon (the longest reply allowed: Dr. GRPO's constant), as
 *                            verl divides the summed sequence losses by the response length
 * and the entropy bonus subtracts entropyCoef times the entropy aggregated the same way.
 *
 * Because the aggregate is a weighted sum of per-token functions of logp, its gradient is the
 * engine's per-token weighted backward with weight -share * d(token loss)/d(logp): that is how the
 * trainer runs it (grad below).
 *
 * Replies sampled under a grammar (constrained decoding, `constrain`) were drawn from the masked
 * distribution, softmax over the tokens M the grammar allowed at each step (grammar-masks.ts
 * recomputes M token by token). Every log-prob here is taken under that same distribution, for
 * the current, the old and the reference policy alike, so the ratio compares the distributions the
 * reply could actually have come from. With z the logits and T the temperature, at a token a:
 *   logp(a) = z_a / T - logsumexp_{i in M} z_i / T
 *   d logp(a) / d z_i = ([i == a] - p^M_i) / T for i in M, 0 outside M   (p^M = softmax over M)
 *   entropy = -sum_{i in M} p^M_i log p^M_i
 * A token forced by the grammar (M = {a}) has logp 0, entropy 0 and no gradient. The engine's
 * policy head computes these from the masks the trainer passes (PolicyPassOptions.masks).
 *
 * Soft tokens (SofT-GRPO, `soft`; docs/soft-grpo.md). A soft-thinking reply's first K outputs
 * are not sampled tokens but noised distributions: at each, with lp_i = z_i / T -
 * logsumexp_{j in S} z_j / T (the top-p support S, renormalised), the rollout drew independent
 * standard Gumbel g_i and recorded q'_i = lp_i + g_i (i in S); the next input was the mixture of
 * embeddings weighted by y = softmax(q' / tau). The action is q' itself, so its likelihood is
 * the density of the noise that produced it under the policy's lp. The standard Gumbel has
 * CDF F(g) = exp(-exp(-g)), hence density f(g) = F'(g) = exp(-g) exp(-exp(-g)) and
 *   log f(g) = -g - exp(-g);
 * shifting by lp_i (q'_i = lp_i + g_i, unit Jacobian) gives q'_i the density f(q'_i - lp_i).
 * A soft token's log-likelihood is the mean over its support (SofT-GRPO's reference takes the
 * mean rather than the sum, so that a wide support does not dominate the sequence):
 *   logp(q') = (1 / |S|) sum_{i in S} [-(q'_i - lp_i) - exp(-(q'_i - lp_i))]
 * and its ratio r = exp(logp_new(q') - logp_old(q')) enters the same clipped surrogate, KL
 * estimators and aggregation as a token's (tokenPolicyLoss: nothing below changes; a soft token is
 * one more loss token, before the reply's). Its derivative, which the engine's Gumbel head applies
 * (Backend::gumbel_loss), with g_i = q'_i - lp_i and p = softmax over S:
 *   d logp / d lp_i = (1 - exp(-g_i)) / |S| =: a_i
 *   d logp / d z_j  = (a_j - p_j sum_i a_i) / T for j in S, 0 outside S.
 * The mixture weights y are part of the recorded action, constants of the objective: the gradient
 * reaches the embedding table through the replayed mixtures, and the logits through logp alone.
 * gumbelLogDensity below computes the same in float64 (the engine's check).
 */
import type { GrpoConfig, LossAggregation } from "./config.js";
import { klGrad, klValue } from "./kl.js";

const LOG_RATIO_CLAMP = 20;

export interface TokenLoss {
  /** The clipped surrogate's value for this token. */
  readonly loss: number;
  /** d loss / d logp. */
  readonly grad: number;
  readonly ratio: number;
  /** The clip bound was the one in force (verl's pg_clipfrac). */
  readonly clipped: boolean;
  /** The dual clip was in force (verl's pg_clipfrac_lower). */
  readonly dualClipped: boolean;
}

export type ClipSettings = Pick<GrpoConfig, "clipLow" | "clipHigh" | "dualClip">;

export function tokenPolicyLoss(logp: number, oldLogp: number, advantage: number, c: ClipSettings): TokenLoss {
  const raw = logp - oldLogp;
  const logRatio = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, raw));
  const ratioFree = raw === logRatio;
  const ratio = Math.exp(logRatio);
  const A = advantage;
  const lo = 1 - c.clipLow;
  const hi = 1 + c.clipHigh;
  const pg1 = -A * ratio;
  const bounded = Math.min(hi, Math.max(lo, ratio));
  const pg2 = -A * bounded;
  const clipped = pg2 > pg1;
  let loss = clipped ? pg2 : pg1;
  // The unclipped branch carries the gradient; the clipped one is constant in logp.
  let grad = clipped || !ratioFree ? 0 : -A * ratio;
  let dualClipped = false;
  if (A < 0 && c.dualClip > 0) {
    const pg3 = -A * c.dualClip;
    if (loss > pg3) {
      loss = pg3;
      grad = 0;
      dualClipped = true;
    }
  }
  return { loss, grad, ratio, clipped, dualClipped };
}

/**
 * Each sequence's per-token share of the aggregate, given how many loss tokens each has. A
 * sequence with no loss tokens (a masked reply) does not count as a sequence.
 */
export function aggregationShares(tokensPerSequence: readonly number[], mode: LossAggregation, horizon: number): number[] {
  const counted = tokensPerSequence.filter((n) => n > 0);
  const sequences = counted.length;
  const total = counted.reduce((a, b) => a + b, 0);
  return tokensPerSequence.map((n) => {
    if (n === 0 || sequences === 0) return 0;
    switch (mode) {
      case "token-mean":
        return 1 / total;
      case "seq-mean-token-mean":
        return 1 / (sequences * n);
      case "seq-mean-token-sum":
        return 1 / sequences;
      case "seq-mean-token-sum-norm":
        return 1 / horizon;
    }
  });
}

/** One sequence's reply tokens as the loss sees them. */
export interface LossSequence {
  /** Current log-probs of the reply's tokens. */
  readonly logp: ArrayLike<number>;
  /** Log-probs when the batch was sampled (the old policy). */
  readonly oldLogp: ArrayLike<number>;
  /** Under the reference policy (needed when the KL is a loss term). */
  readonly refLogp?: ArrayLike<number>;
  /** Entropy of each position, when the engine reported it. */
  readonly entropy?: ArrayLike<number>;
  readonly advantage: number;
  /** Per loss token, the advantage in place of `advantage` (a joint reply under level credit: each token its level's). */
  readonly advantages?: ArrayLike<number>;
  /** Tokens that count (false: masked, e.g. a truncated reply under maskTruncated). */
  readonly mask?: ArrayLike<boolean>;
}

export interface LossResult {
  /** The aggregate: policy loss + KL term - entropy bonus. */
  readonly loss: number;
  readonly policyLoss: number;
  /** The aggregated KL estimate (whether or not it is in the loss). */
  readonly kl: number;
  readonly entropy: number;
  readonly clipFraction: number;
  readonly dualClipFraction: number;
  /** Per sequence, per token: the weight for the engine's backward, -share * d(loss)/d(logp). */
  readonly weights: Float64Array[];
  /** Per sequence, per token: the entropy weight for the engine, entropyCoef * share. */
  readonly entropyWeights: Float64Array[];
  /** Tokens that counted. */
  readonly tokens: number;
}

export type LossSettings = ClipSettings & Pick<GrpoConfig, "lossAggregation" | "klCoef" | "klEstimator" | "klIn" | "entropyCoef">;

/** Loss tokens of a sequence (those its mask keeps). */
export function lossTokens(s: Pick<LossSequence, "logp" | "mask">): number {
  let n = 0;
  for (let t = 0; t < s.logp.length; t++) if (!s.mask || s.mask[t]) n++;
  return n;
}

/**
 * The aggregate loss of `seqs` and the engine's per-token weights. `shares` (one per sequence)
 * defaults to the aggregation over `seqs` alone; a trainer that splits an update into
 * micro-batches passes each micro-batch the shares computed over the whole update.
 */
export function policyLoss(seqs: readonly LossSequence[], c: LossSettings, horizon: number, shares?: readonly number[]): LossResult {
  shares ??= aggregationShares(seqs.map(lossTokens), c.lossAggregation, horizon);
  const klInLoss = c.klIn === "loss" && c.klCoef > 0;
  let policy = 0;
  let kl = 0;
  let entropy = 0;
  let clipped = 0;
  let dual = 0;
  let tokens = 0;
  const weights: Float64Array[] = [];
  const entropyWeights: Float64Array[] = [];
  seqs.forEach((s, i) => {
    const share = shares[i]!;
    const w = new Float64Array(s.logp.length);
    const e = new Float64Array(s.logp.length);
    for (let t = 0; t < s.logp.length; t++) {
      if (s.mask && !s.mask[t]) continue;
      tokens++;
      const tl = tokenPolicyLoss(s.logp[t]!, s.oldLogp[t]!, s.advantages ? s.advantages[t]! : s.advantage, c);
      policy += share * tl.loss;
      let grad = tl.grad;
      if (tl.clipped) clipped++;
      if (tl.dualClipped) dual++;
      if (s.refLogp) {
        kl += share * klValue(c.klEstimator, s.logp[t]!, s.refLogp[t]!);
        if (klInLoss) grad += c.klCoef * klGrad(c.klEstimator, s.logp[t]!, s.refLogp[t]!);
      }
      if (s.entropy) entropy += share * s.entropy[t]!;
      w[t] = -share * grad;
      e[t] = c.entropyCoef * share;
    }
    weights.push(w);
    entropyWeights.push(e);
  });
  const loss = policy + (klInLoss ? c.klCoef * kl : 0) - c.entropyCoef * entropy;
  return {
    loss,
    policyLoss: policy,
    kl,
    entropy,
    clipFraction: tokens ? clipped / tokens : 0,
    dualClipFraction: tokens ? dual / tokens : 0,
    weights,
    entropyWeights,
    tokens,
  };
}

/**
 * A soft token's log-likelihood (the mean Gumbel log-density of its noise, header above) from
 * one row of logits, and its gradient in those logits.
 */
export function gumbelLogDensity(logits: ArrayLike<number>, support: ArrayLike<number>, noised: ArrayLike<number>, temperature: number): { value: number; grad: Float64Array } {
  const n = support.length;
  if (n === 0 || noised.length !== n) throw new Error("a soft token needs a non-empty support and one noised logit per token of it");
  const u = Array.from({ length: n }, (_, k) => logits[support[k]!]! / temperature);
  const m = Math.max(...u);
  const lse = m + Math.log(u.reduce((acc, x) => acc + Math.exp(x - m), 0));
  let value = 0;
  let sumA = 0;
  const a: number[] = [];
  for (let k = 0; k < n; k++) {
    const g = noised[k]! - (u[k]! - lse);
    value += (-g - Math.exp(-g)) / n;
    a.push((1 - Math.exp(-g)) / n);
    sumA += a[k]!;
  }
  const grad = new Float64Array(logits.length);
  for (let k = 0; k < n; k++) grad[support[k]!] = (a[k]! - Math.exp(u[k]! - lse) * sumA) / temperature;
  return { value, grad };
}

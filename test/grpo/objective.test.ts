/**
 * GRPO's pieces against hand-computed examples: group advantages (group std, batch std, none),
 * the clipped surrogate per token (clip-low, clip-higher, dual clip) and its derivative, the four
 * loss aggregations, the KL estimators, DAPO's overlong penalty and dynamic sampling's filter.
 */
import { describe, expect, it } from "vitest";
import { advantagesOf, groupAdvantages, rftAdvantages, unbiasedStd } from "../../trainers/grpo/advantages.js";
import { GrpoConfigSchema, updatesPerBatch } from "../../trainers/grpo/config.js";
import { isFlatGroup, keepInformativeGroups, teaches } from "../../trainers/grpo/dynamic-sampling.js";
import { klGrad, klValue } from "../../trainers/grpo/kl.js";
import { aggregationShares, policyLoss, tokenPolicyLoss } from "../../trainers/grpo/loss.js";
import { overlongPenalty } from "../../trainers/grpo/overlong.js";

const clip = { clipLow: 0.2, clipHigh: 0.28, dualClip: 3 };

describe("advantages", () => {
  it("(R - group mean) / (unbiased group std + eps)", () => {
    // mean 0.5; unbiased std sqrt((4 * 0.25) / 3) = 0.57735...
    const [a] = groupAdvantages([[1, 0, 0, 1]], "group", 1e-6);
    const s = Math.sqrt(1 / 3);
    expect(unbiasedStd([1, 0, 0, 1])).toBeCloseTo(s, 12);
    expect(a![0]).toBeCloseTo(0.5 / (s + 1e-6), 12);
    expect(a![1]).toBeCloseTo(-0.5 / (s + 1e-6), 12);
    expect(a![0]).toBeCloseTo(0.866024, 5);
  });

  it("no std (Dr. GRPO): R - group mean", () => {
    expect(groupAdvantages([[3, 1, 2]], "none", 1e-6)).toEqual([[1, -1, 0]]);
  });

  it("batch std: one std over every reward of the batch", () => {
    // rewards 1, 0, 1, 1: mean 0.75, unbiased variance (3 * 0.0625 + 0.5625) / 3 = 0.25, std 0.5
    const [g1, g2] = groupAdvantages([[1, 0], [1, 1]], "batch", 0);
    expect(g1).toEqual([1, -1]);
    expect(g2).toEqual([0, 0]);
  });

  it("a group with equal rewards has zero advantages; a group of one is R / (1 + eps) as verl has it", () => {
    expect(groupAdvantages([[0.7, 0.7, 0.7]], "group", 1e-6)).toEqual([[0, 0, 0]]);
    expect(groupAdvantages([[2]], "group", 1e-6)[0]![0]).toBeCloseTo(2 / (1 + 1e-6), 12);
  });
});

describe("rft advantages (rejection-sampling fine-tuning)", () => {
  it("the group's best replies share the group's weight G; the others get 0", () => {
    expect(rftAdvantages([1, 0, 0, 1])).toEqual([2, 0, 0, 2]);
    expect(rftAdvantages([0, 1, 0, 0])).toEqual([0, 4, 0, 0]);
    // Graded rewards: only the best (RAFT keeps the top of each group); a format failure never.
    expect(rftAdvantages([0.5, 0.9, -1, 0.9])).toEqual([0, 2, 0, 2]);
  });

  it("an all-right group teaches (each reply 1); a group where nothing earned a reward teaches nothing", () => {
    expect(rftAdvantages([1, 1, 1])).toEqual([1, 1, 1]);
    expect(rftAdvantages([0, 0, 0])).toEqual([0, 0, 0]);
    expect(rftAdvantages([0, -1, 0])).toEqual([0, 0, 0]);
    expect(teaches([1, 1, 1], "rft")).toBe(true);
    expect(teaches([1, 1, 1], "grpo")).toBe(false);
    expect(teaches([0, -1], "rft")).toBe(false);
    expect(teaches([0, -1], "grpo")).toBe(true);
    const r = keepInformativeGroups([{ rewards: [0, 0] }, { rewards: [1, 1] }, { rewards: [1, 0] }], "rft");
    expect(r.kept).toEqual([{ rewards: [1, 1] }, { rewards: [1, 0] }]);
  });

  it("the estimator is chosen by the config (grpo unless told)", () => {
    const grpo = GrpoConfigSchema.parse({});
    expect(grpo.advantage).toBe("grpo");
    expect(advantagesOf([[1, 0]], grpo)).toEqual(groupAdvantages([[1, 0]], "group", grpo.advantageEps));
    expect(advantagesOf([[1, 0], [0, 0]], GrpoConfigSchema.parse({ advantage: "rft" }))).toEqual([[2, 0], [0, 0]]);
    expect(() => GrpoConfigSchema.parse({ advantage: "ppo" })).toThrow();
  });
});

describe("clipped surrogate per token", () => {
  const at = (ratio: number, A: number) => tokenPolicyLoss(Math.log(ratio) - 1, -1, A, clip);

  it("inside the clip range: -A r, gradient -A r", () => {
    const t = at(1.1, 1);
    expect(t.loss).toBeCloseTo(-1.1, 12);
    expect(t.grad).toBeCloseTo(-1.1, 12);
    expect(t.clipped).toBe(false);
  });

  it("positive advantage above 1 + clipHigh: clipped to -A (1 + clipHigh), no gradient (clip-higher at 0.28)", () => {
    const t = at(1.5, 1);
    expect(t.loss).toBeCloseTo(-1.28, 12);
    expect(t.grad).toBe(0);
    expect(t.clipped).toBe(true);
    // Below 1 - clipLow a positive advantage keeps the unclipped (pessimistic) term.
    const low = at(0.5, 1);
    expect(low.loss).toBeCloseTo(-0.5, 12);
    expect(low.grad).toBeCloseTo(-0.5, 12);
    expect(low.clipped).toBe(false);
  });

  it("negative advantage below 1 - clipLow: clipped to -A (1 - clipLow)", () => {
    const t = at(0.5, -1);
    expect(t.loss).toBeCloseTo(0.8, 12);
    expect(t.grad).toBe(0);
    expect(t.clipped).toBe(true);
  });

  it("dual clip: a negative advantage's loss is at most -A c", () => {
    const under = at(2, -1);
    expect(under.loss).toBeCloseTo(2, 12);
    expect(under.grad).toBeCloseTo(2, 12);
    expect(under.dualClipped).toBe(false);
    const over = at(4, -1);
    expect(over.loss).toBeCloseTo(3, 12);
    expect(over.grad).toBe(0);
    expect(over.dualClipped).toBe(true);
    const off = tokenPolicyLoss(Math.log(4), 0, -1, { ...clip, dualClip: 0 });
    expect(off.loss).toBeCloseTo(4, 12);
  });

  it("the gradient is the derivative of the loss where it is smooth", () => {
    for (const [ratio, A] of [[1.05, 0.7], [0.9, -1.3], [0.5, 2], [2.5, -0.4]] as const) {
      const h = 1e-6;
      const lp = Math.log(ratio);
      const fd = (tokenPolicyLoss(lp + h, 0, A, clip).loss - tokenPolicyLoss(lp - h, 0, A, clip).loss) / (2 * h);
      expect(tokenPolicyLoss(lp, 0, A, clip).grad).toBeCloseTo(fd, 6);
    }
  });
});

describe("loss aggregation", () => {
  // Sequence A: advantage 1, two tokens at ratio 1 (token losses -1, -1).
  // Sequence B: advantage -0.5, three tokens at ratio 1 (token losses 0.5 each).
  const seqs = [
    { logp: [-1, -2], oldLogp: [-1, -2], advantage: 1 },
    { logp: [-0.5, -0.5, -3], oldLogp: [-0.5, -0.5, -3], advantage: -0.5 },
  ];
  const base = { ...clip, klCoef: 0, klEstimator: "k3" as const, klIn: "loss" as const, entropyCoef: 0 };

  it("shares per mode", () => {
    expect(aggregationShares([2, 3], "token-mean", 4)).toEqual([1 / 5, 1 / 5]);
    expect(aggregationShares([2, 3], "seq-mean-token-mean", 4)).toEqual([1 / 4, 1 / 6]);
    expect(aggregationShares([2, 3], "seq-mean-token-sum", 4)).toEqual([1 / 2, 1 / 2]);
    expect(aggregationShares([2, 3], "seq-mean-token-sum-norm", 4)).toEqual([1 / 4, 1 / 4]);
    expect(aggregationShares([2, 0, 3], "seq-mean-token-sum", 4)).toEqual([1 / 2, 0, 1 / 2]);
  });

  it("values: token-mean -0.1, seq-mean-token-mean -0.25, seq-mean-token-sum -0.25, seq-mean-token-sum-norm (horizon 4) -0.125", () => {
    expect(policyLoss(seqs, { ...base, lossAggregation: "token-mean" }, 4).loss).toBeCloseTo(-0.1, 12);
    expect(policyLoss(seqs, { ...base, lossAggregation: "seq-mean-token-mean" }, 4).loss).toBeCloseTo(-0.25, 12);
    expect(policyLoss(seqs, { ...base, lossAggregation: "seq-mean-token-sum" }, 4).loss).toBeCloseTo(-0.25, 12);
    expect(policyLoss(seqs, { ...base, lossAggregation: "seq-mean-token-sum-norm" }, 4).loss).toBeCloseTo(-0.125, 12);
  });

  it("engine weights are -share * d(loss)/d(logp)", () => {
    const r = policyLoss(seqs, { ...base, lossAggregation: "token-mean" }, 4);
    // A: d/dlogp(-A r) = -1, share 1/5 -> weight 0.2; B: d = 0.5 -> weight -0.1.
    expect(Array.from(r.weights[0]!)).toEqual([0.2, 0.2].map((x) => expect.closeTo(x, 12)));
    expect(Array.from(r.weights[1]!)).toEqual([-0.1, -0.1, -0.1].map((x) => expect.closeTo(x, 12)));
  });

  it("masked tokens do not count; KL in the loss and the entropy bonus add up as stated", () => {
    const masked = [{ ...seqs[0]!, mask: [true, false] }, seqs[1]!];
    // 4 tokens: (-1 + 1.5) / 4
    expect(policyLoss(masked, { ...base, lossAggregation: "token-mean" }, 4).loss).toBeCloseTo(0.125, 12);
    const withKl = [
      { logp: [-1], oldLogp: [-1], refLogp: [-1.5], entropy: [2], advantage: 0 },
      { logp: [-1], oldLogp: [-1], refLogp: [-0.5], entropy: [1], advantage: 0 },
    ];
    const r = policyLoss(withKl, { ...base, lossAggregation: "token-mean", klCoef: 0.1, klEstimator: "k1", entropyCoef: 0.01 }, 4);
    // k1: (0.5 + -0.5) / 2 = 0; entropy (2 + 1) / 2 = 1.5
    expect(r.kl).toBeCloseTo(0, 12);
    expect(r.entropy).toBeCloseTo(1.5, 12);
    expect(r.loss).toBeCloseTo(-0.015, 12);
    // d(0.1 * k1 / 2) / dlogp = 0.05 -> weight -0.05; entropy weight 0.01 / 2.
    expect(r.weights[0]![0]).toBeCloseTo(-0.05, 12);
    expect(r.entropyWeights[1]![0]).toBeCloseTo(0.005, 12);
  });

  it("clip fractions count tokens", () => {
    const r = policyLoss([{ logp: [Math.log(1.5), 0, Math.log(4)], oldLogp: [0, 0, 0], advantage: -1 }], { ...base, lossAggregation: "token-mean" }, 4);
    // ratio 1.5 with A < 0: unclipped (pessimistic); ratio 1: neither; ratio 4: dual-clipped.
    expect(r.clipFraction).toBe(0);
    expect(r.dualClipFraction).toBeCloseTo(1 / 3, 12);
  });
});

describe("KL estimators", () => {
  it("k1, k2, k3 and their derivatives at logp - refLogp = 0.5", () => {
    expect(klValue("k1", -1, -1.5)).toBeCloseTo(0.5, 12);
    expect(klValue("k2", -1, -1.5)).toBeCloseTo(0.125, 12);
    expect(klValue("k3", -1, -1.5)).toBeCloseTo(Math.exp(-0.5) - 0.5, 12);
    expect(klValue("k3", -1, -1.5)).toBeCloseTo(0.1065307, 6);
    expect(klGrad("k1", -1, -1.5)).toBe(1);
    expect(klGrad("k2", -1, -1.5)).toBeCloseTo(0.5, 12);
    expect(klGrad("k3", -1, -1.5)).toBeCloseTo(1 - Math.exp(-0.5), 12);
    // k3 is never negative and 0 at equal policies.
    expect(klValue("k3", -2, -2)).toBe(0);
    expect(klValue("k3", -3, -1)).toBeGreaterThan(0);
  });

  it("k3 is clamped to 10 as verl's low_var_kl is", () => {
    expect(klValue("k3", -20, 0)).toBe(10);
    expect(klGrad("k3", -20, 0)).toBe(0);
  });
});

describe("overlong penalty and dynamic sampling", () => {
  it("DAPO's soft overlong punishment", () => {
    expect(overlongPenalty(15, 20, 5, 1)).toBeCloseTo(0, 12);
    expect(overlongPenalty(17, 20, 5, 1)).toBeCloseTo(-0.4, 12);
    expect(overlongPenalty(20, 20, 5, 0.5)).toBeCloseTo(-0.5, 12);
    expect(overlongPenalty(20, 20, 0, 1)).toBe(0);
  });

  it("drops groups whose rewards are all equal", () => {
    expect(isFlatGroup([1, 1, 1])).toBe(true);
    expect(isFlatGroup([1, 0, 1])).toBe(false);
    const r = keepInformativeGroups([{ rewards: [0, 0] }, { rewards: [1, 0] }, { rewards: [-1, -1] }]);
    expect(r.kept).toEqual([{ rewards: [1, 0] }]);
    expect(r.dropped).toBe(2);
  });
});

describe("config", () => {
  it("defaults as the field runs them, and refuses inconsistent settings", () => {
    const c = GrpoConfigSchema.parse({});
    expect(c).toMatchObject({ groupSize: 8, clipLow: 0.2, clipHigh: 0.2, dualClip: 3, lossAggregation: "token-mean", klCoef: 0.001, klEstimator: "k3", advantageStd: "group", entropyCoef: 0, temperature: 1 });
    expect(updatesPerBatch(GrpoConfigSchema.parse({ prompts: 8, miniBatch: 2, epochs: 2 }))).toBe(8);
    expect(GrpoConfigSchema.safeParse({ prompts: 8, miniBatch: 3 }).success).toBe(false);
    expect(GrpoConfigSchema.safeParse({ maxNewTokens: 8, overlongBuffer: 8 }).success).toBe(false);
    expect(GrpoConfigSchema.safeParse({ lossAggregation: "sum" }).success).toBe(false);
  });
});

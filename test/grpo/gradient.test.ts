/**
 * The trainer's update is the gradient of the GRPO objective: the engine's per-token-weighted
 * backward (weights -share * d loss / d logp, entropy weights entropyCoef * share) against central
 * finite differences of the objective itself, computed from the engine's log-probs and entropies
 * at a sampling temperature, in float64, for every loss aggregation, with the KL to a reference
 * policy in the loss and an entropy bonus; and the same with replies sampled under a grammar,
 * every log-prob (current, old, reference) and entropy under its masks. Old log-probs are set off
 * the current ones so that some tokens sit inside the clip range and some are clipped. SofT-GRPO's
 * soft thinking tokens (their log-likelihood the Gumbel noise density) join the same objective.
 * Per-level replies under level credit: each level a sequence after its own prompt, with its
 * level's advantage (advantages.ts: sequenceCredits), so one reply's tokens carry several; and
 * joint replies under level credit, whose tokens carry their levels' advantages one by one.
 */
import { describe, expect, it } from "vitest";
import { centralDifferences } from "../native/finite-differences.js";
import { PolicyModel } from "../../models/model.js";
import { qwen2Config } from "../../models/config.js";
import { sequenceCredits } from "../../trainers/grpo/advantages.js";
import { GrpoConfigSchema, LOSS_AGGREGATIONS, type LossAggregation } from "../../trainers/grpo/config.js";
import { MaskPool } from "../../trainers/grpo/grammar-masks.js";
import { policyLoss, type LossSequence } from "../../trainers/grpo/loss.js";
import { replyValues, sequenceBatch, type Sequence } from "../../trainers/grpo/sequences.js";
import type { SoftTrace } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";

const engine = {
  vocabSize: 17,
  hiddenSize: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 4,
  intermediateSize: 12,
  maxPositionEmbeddings: 32,
  rmsNormEps: 1e-6,
  ropeTheta: 100,
  tieWordEmbeddings: true,
  attentionBias: true,
};

function model(seed: string): PolicyModel {
  const m = new PolicyModel(qwen2Config(engine, { bos: null, eos: [1] }), { dtype: "float64" });
  const rng = Rng.seeded(seed);
  const p = m.params();
  for (let i = 0; i < p.length; i++) p[i] = (rng.next() - 0.5) * 1.4;
  return m;
}

const seqs: Sequence[] = [
  { prompt: [3, 5, 7], reply: [2, 9, 1] },
  { prompt: [4, 4], reply: [11, 1] },
  { prompt: [6, 8, 10, 12], reply: [13, 14, 15, 1] },
];
const advantages = [1.2, -0.8, 0.4];

// The replies' masks as a grammar would give them: a few allowed tokens, a forced one (the end of
// turn where nothing else fits), lists shared between replies.
const pool = new MaskPool();
const grammarSeqs: Sequence[] = seqs.map((s) => ({
  ...s,
  allowed: s.reply.map((t, j) => pool.intern(t === 1 ? Int32Array.of(1) : Int32Array.from(new Set([2, 9, 11, t, 13 + (j % 3)])).sort())),
}));

// Soft-thinking replies (SofT-GRPO): two or three soft tokens before each reply, supports of
// several sizes, noised logits around the log-probs, mixture weights softmax(q').
function trace(supports: number[][], seed: string): SoftTrace {
  const rng = Rng.seeded(seed);
  const offsets = [0];
  const ids: number[] = [];
  const noised: number[] = [];
  const weights: number[] = [];
  for (const sup of supports) {
    const q = sup.map(() => -1.5 + rng.next() * 2);
    const e = q.map((x) => Math.exp(x));
    const sum = e.reduce((a, b) => a + b, 0);
    ids.push(...sup);
    noised.push(...q);
    weights.push(...e.map((x) => x / sum));
    offsets.push(ids.length);
  }
  const argmax = supports.map((sup, j) => sup[noised.slice(offsets[j], offsets[j + 1]).indexOf(Math.max(...noised.slice(offsets[j], offsets[j + 1])))]!);
  return { offsets: Int32Array.from(offsets), ids: Int32Array.from(ids), noised: Float32Array.from(noised), weights: Float32Array.from(weights), argmax: Int32Array.from(argmax) };
}
const softSeqs: Sequence[] = [
  { ...grammarSeqs[0]!, soft: trace([[4, 2, 9], [7], [1, 3, 5, 8]], "t0") },
  { ...grammarSeqs[1]!, soft: trace([[11, 12], [6, 0, 16]], "t1") },
  { ...grammarSeqs[2]!, soft: trace([[2, 3], [5, 9, 10], [15]], "t2") },
];

// Two per-level replies of two levels each (the second level's prompt holds the first level's
// tokens), credited level by level: level rewards [1, 0] and [0, 0.5] give each level +-1/sqrt(2).
const levelSeqs: Sequence[] = [
  { prompt: [3, 5, 7], reply: [2, 9, 1] },
  { prompt: [3, 5, 7, 2, 9], reply: [11, 1] },
  { prompt: [3, 5, 7], reply: [13, 14, 1] },
  { prompt: [3, 5, 7, 13, 14], reply: [15, 12, 1] },
];
const levelAdvantages = sequenceCredits(
  [{ point: { id: "p" }, rewards: [0.5, 0.25], levelRewards: [[1, 0], [0, 0.5]] }],
  [0, 1].flatMap((index) => [0, 1].map((level) => ({ group: 0, index, level }))),
  GrpoConfigSchema.parse({ generation: "per-level", credit: "level" }),
).map((x) => x.advantage);

// Two joint replies of two levels each under level credit: one sequence each, its tokens split by
// level (-1: outside both, the reply's advantage), so each token carries its own advantage.
const jointCredits = sequenceCredits(
  [{ point: { id: "p" }, rewards: [0.5, 0.25, 0], levelRewards: [[1, 0], [0, 0.5], [0.25, 0.25]] }],
  [
    { group: 0, index: 0, tokenLevels: [0, 1, -1] },
    { group: 0, index: 1, tokenLevels: [0, 0, 1, 1] },
    { group: 0, index: 2 },
  ],
  GrpoConfigSchema.parse({ credit: "level" }),
);
const jointSeqs: Sequence[] = [seqs[0]!, { prompt: [4, 4], reply: [11, 12, 13, 1] }, seqs[1]!];

describe("the GRPO update is the objective's gradient", () => {
  const cases: [string, LossAggregation, Sequence[], number[], (Float64Array | undefined)[]?][] = [
    ...LOSS_AGGREGATIONS.map((mode): [string, LossAggregation, Sequence[], number[]] => [mode, mode, seqs, advantages]),
    ["seq-mean-token-mean, replies sampled under a grammar (masked log-probs)", "seq-mean-token-mean", grammarSeqs, advantages],
    ["token-mean, SofT-GRPO: soft thinking tokens (Gumbel noise densities) before replies under a grammar", "token-mean", softSeqs, advantages],
    ["token-mean, per-level replies under level credit (each level its own advantage)", "token-mean", levelSeqs, levelAdvantages],
    ["seq-mean-token-mean, joint replies under level credit (each token its level's advantage)", "seq-mean-token-mean", jointSeqs, jointCredits.map((x) => x.advantage), jointCredits.map((x) => x.perToken)],
  ];
  for (const [name, mode, seqs, advantages, perToken] of cases) {
    it(name, async () => {
      const policy = model("policy");
      const ref = model("reference");
      const c = GrpoConfigSchema.parse({ lossAggregation: mode, klCoef: 0.3, klEstimator: "k3", entropyCoef: 0.05, temperature: 0.9, clipLow: 0.2, clipHigh: 0.28 });
      const { batch, masks, soft } = sequenceBatch(seqs);
      const at = async (m: PolicyModel) => {
        const r = await m.policyPass(batch, false, { temperature: c.temperature, entropy: true, ...(masks ? { masks } : {}), ...(soft ? { soft } : {}) });
        return { logp: replyValues(r.logprobs, seqs, batch.seqLen), entropy: replyValues(r.entropy!, seqs, batch.seqLen) };
      };
      const refLogp = (await at(ref)).logp;
      const start = await at(policy);
      // Old log-probs: most tokens inside the clip range, every third one far outside it.
      const oldLogp = start.logp.map((lp, i) => lp.map((x, t) => ((i + t) % 3 === 2 ? x - 1 : x + 0.05 * (t - 1))));
      const objective = async () => {
        const cur = await at(policy);
        const ls: LossSequence[] = seqs.map((_, i) => ({ logp: cur.logp[i]!, oldLogp: oldLogp[i]!, refLogp: refLogp[i]!, entropy: cur.entropy[i]!, advantage: advantages[i]!, ...(perToken?.[i] ? { advantages: perToken[i] } : {}) }));
        return policyLoss(ls, c, 6);
      };

      const res = await objective();
      const w = sequenceBatch(seqs, res.weights, res.entropyWeights);
      policy.trained.zeroGrad();
      await policy.policyPass(w.batch, true, { temperature: c.temperature, entropyWeights: w.entropyWeights!, ...(w.masks ? { masks: w.masks } : {}), ...(w.soft ? { soft: w.soft } : {}) });
      const grad = Float64Array.from(policy.native.grads());
      expect(res.clipFraction).toBeGreaterThan(0);

      const rng = Rng.seeded(`picks-${mode}`);
      const picks = policy.tensors().flatMap((t) => rng.sample(Array.from({ length: t.size }, (_, j) => j), Math.min(t.size, 8)).map((k) => t.offset + k));
      const { maxErr, maxGrad } = await centralDifferences(policy.params(), picks, grad, async () => (await objective()).loss);
      expect(maxGrad).toBeGreaterThan(1e-3);
      expect(maxErr).toBeLessThan(1e-6 * Math.max(1, maxGrad));
    });
  }
});

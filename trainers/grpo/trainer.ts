/**
 * The GRPO loop. Each step: take the next decision points in a seeded order, sample G replies per
 * point with the current policy, score them, (dynamic sampling: drop groups with equal rewards and
 * sample more), log every reply as episodes, compute the old policy's log-probs (and the reference
 * policy's) with teacher forcing, turn rewards into group advantages, then make one or more AdamW
 * updates on the clipped surrogate (loss.ts), each through the engine's per-token-weighted
 * backward. Checkpoints (policy, optimizer, data position) every `saveEvery` steps; a run resumed
 * from one continues exactly as the uninterrupted run would have.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import type { CheckpointFiles } from "../../models/checkpoint.js";
import { NativeCompleter } from "../../models/generate.js";
import type { PolicyModel } from "../../models/model.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import { naming } from "../../store/io-error.js";
import { checkWrite } from "../../store/write-fence.js";
import { hashString } from "../../worlds/core/rng.js";
import { learningRate } from "../sft/schedule.js";
import { mean, sequenceCredits, unbiasedStd } from "./advantages.js";
import { updatesPerBatch, type GrpoConfig } from "./config.js";
import type { DecisionPoint, PointSource } from "./decision-point.js";
import { keepInformativeGroups } from "./dynamic-sampling.js";
import { pointOrder } from "./point-order.js";
import { allowedTokens, MaskPool } from "./grammar-masks.js";
import { klValue } from "./kl.js";
import { aggregationShares, lossTokens, policyLoss, type LossSequence } from "./loss.js";
import { type StepMetrics } from "./metrics.js";
import { saveTrainedModel, saveTrainerCheckpoint } from "../common/checkpoint-folders.js";
import { dropoutSeed } from "../common/dropout-seed.js";
import { trimStepLog } from "../common/step-log.js";
import { rollout, type Group } from "./rollout.js";
import { replyValues, sequenceBatch, sequenceLength, thinkingLength, type Sequence } from "./sequences.js";
import { GRPO_STATE_FORMAT, type GrpoState } from "./state.js";

export interface GrpoRun {
  readonly out: string;
  readonly model: PolicyModel;
  readonly tokenizer: PolicyTokenizer;
  readonly files: CheckpointFiles;
  /**
   * The frozen reference policy (needed when klCoef > 0): a model of its own, or, in a LoRA run,
   * the base model with the adapter set aside (PolicyModel.withoutAdapter).
   */
  readonly reference?: Pick<PolicyModel, "policyPass">;
  readonly source: PointSource;
  readonly config: GrpoConfig;
  /** A LoRA run: its settings and base model (saved in the state; resume refuses others). */
  readonly lora?: LoraRunSettings;
  readonly saveEvery: number;
  readonly keep: number;
  /** Where a resumed run starts. */
  readonly start?: { readonly step: number; readonly cursor: number; readonly updates: number };
  /** The store run the rollouts are logged to. */
  readonly log?: { readonly episodes: EpisodeLog; readonly runId: string };
  readonly onStep?: (m: StepMetrics) => void;
  readonly signal?: AbortSignal;
}

export interface LoraRunSettings {
  readonly settings: unknown;
  readonly base: string;
}

export interface GrpoResult {
  readonly steps: number;
  readonly interrupted: boolean;
  readonly last: StepMetrics | null;
}

/**
 * What a resumed run must share with the run that wrote the checkpoint. The leak penalty is
 * named only when on, so that checkpoints written before it existed resume as they were; so is
 * a LoRA run's adapter settings and base, soft thinking's settings, per-level generation and credit,
 * and the solved points kept by kind.
 */
export function grpoSettings(config: GrpoConfig, dataId: string, lora?: LoraRunSettings): Record<string, unknown> {
  const { leakPenalty, soft, thinkingSteps, tau, balance, generation, credit, keepSolvedByKind, ...rest } = config;
  return {
    ...rest,
    ...(leakPenalty > 0 ? { leakPenalty } : {}),
    ...(Object.keys(keepSolvedByKind).length > 0 ? { keepSolvedByKind } : {}),
    ...(balance !== "none" ? { balance } : {}),
    ...(soft ? { soft, thinkingSteps, tau } : {}),
    ...(generation !== "joint" ? { generation } : {}),
    ...(credit !== "reply" ? { credit } : {}),
    data: dataId,
    ...(lora ? { lora } : {}),
  };
}

interface Sample extends Sequence {
  readonly group: number;
  /** Its place in the group. */
  readonly index: number;
  /** Per-level generation: which level of the reply this sequence is. */
  readonly level?: number;
  /** Joint generation under level credit: each token's level (-1: none; rollout.ts). */
  readonly tokenLevels?: Int16Array;
  readonly truncated: boolean;
  oldLogp?: Float64Array;
  refLogp?: Float64Array;
  entropy?: Float64Array;
  advantage: number;
  /** Per token, in place of `advantage` (a joint reply under level credit). */
  advantages?: Float64Array;
  mask?: boolean[];
}

export async function trainGrpo(run: GrpoRun): Promise<GrpoResult> {
  const c = run.config;
  const { model, tokenizer } = run;
  // The tokens that end a reply, as the completer samples them (the masks' stop tokens).
  const stopTokens: ReadonlySet<number> = new Set(tokenizer.stopTokenIds);
  if (c.klCoef > 0 && !run.reference) throw new Error("klCoef > 0 needs the reference policy");
  const completer = new NativeCompleter("grpo", model, tokenizer);
  const maxPositions = model.engine.maxPositionEmbeddings;
  const metricsFile = join(run.out, "metrics.jsonl");
  let step = run.start?.step ?? 0;
  let cursor = run.start?.cursor ?? 0;
  let updates = run.start?.updates ?? 0;
  trimStepLog(metricsFile, step);
  const perBatch = updatesPerBatch(c);
  const schedule = { lr: c.lr, minLr: c.minLr ?? c.lr, warmupSteps: c.warmupSteps, totalSteps: c.scheduleSteps ?? c.steps * perBatch };
  const settings = grpoSettings(c, run.source.dataId, run.lora);
  const checkpoint = (done: number) => {
    const state: GrpoState = { format: GRPO_STATE_FORMAT, step: done, cursor, updates, runId: run.log?.runId ?? null, settings };
    saveTrainerCheckpoint(run.out, model, run.files, state, run.keep);
  };
  let last: StepMetrics | null = null;
  const order = pointOrder(run.source, c.balance, c.seed);

  for (; step < c.steps; step++) {
    if (run.signal?.aborted) {
      checkpoint(step);
      return { steps: step, interrupted: true, last };
    }
    const t0 = performance.now();

    // ---- rollouts ----
    const groups: Group[] = [];
    let dropped = 0;
    let batches = 0;
    let rolloutSeconds = 0;
    let tooLong = 0;
    const all: Group[] = [];
    while (groups.length < c.prompts && batches < c.maxRolloutBatches) {
      const points: DecisionPoint[] = [];
      for (const index of order(cursor, c.prompts)) points.push(await run.source.point(index));
      cursor += c.prompts;
      const b = batches++;
      const r = await rollout(points, {
        completer,
        model,
        tokenizer,
        config: c,
        maxPositions,
        seedOf: (i, j) => hashString(`grpo:${c.seed}:${step}:${b}:${i}:${j}`),
      });
      rolloutSeconds += r.seconds;
      tooLong += r.tooLong.length;
      all.push(...r.groups);
      if (c.dynamicSampling) {
        const k = keepInformativeGroups(r.groups, c.advantage, c.credit);
        dropped += k.dropped;
        groups.push(...k.kept);
      } else {
        groups.push(...r.groups);
        break;
      }
    }
    groups.splice(c.prompts);
    // Nothing fits at the very start: the run would "train" every step on nothing and say it is done.
    if (all.length === 0 && tooLong > 0 && step === (run.start?.step ?? 0)) {
      throw new PromptsTooLong(`every decision point of step ${step + 1} (${tooLong}) is too long for the model: prompt + ${c.maxNewTokens} new tokens exceed its max_position_embeddings (${maxPositions}); use shorter prompts (vanilla mode), fewer new tokens, or a model with a longer context`);
    }
    if (run.log) {
      for (let g = 0; g < all.length; g++) await run.source.logGroup(run.log.episodes, run.log.runId, all[g]!.point, all[g]!.replies.map((x) => x.scored), { step: step + 1, group: g, prompt: all[g]!.prompt });
    }

    // ---- old and reference log-probs (teacher forcing, at the sampling temperature) ----
    // A reply sampled under a grammar is scored under the same masks (grammar-masks.ts).
    const masks = new MaskPool();
    // A per-level reply is one sequence per level (its own prompt, masks and budget), each with
    // the reply's advantage or, under level credit, its level's: its loss is over the tokens it
    // sampled, under the masks it sampled them. A joint reply under level credit is one sequence
    // whose tokens carry their levels' advantages.
    const samples: Sample[] = groups.flatMap((g, gi) =>
      g.replies.flatMap((r, index) =>
        r.segments
          ? r.segments.map((seg, level): Sample => ({
              prompt: seg.promptIds,
              reply: seg.ids,
              ...(seg.constraint ? { allowed: allowedTokens(seg.constraint, seg.ids, seg.budget, stopTokens, masks) } : {}),
              group: gi,
              index,
              level,
              truncated: seg.truncated,
              advantage: 0,
              ...(c.maskTruncated && seg.truncated ? { mask: new Array<boolean>(seg.ids.length).fill(false) } : {}),
            }))
          : [
              {
                prompt: g.promptIds,
                reply: r.ids,
                ...(g.constraint ? { allowed: allowedTokens(g.constraint, r.ids, g.budget, stopTokens, masks) } : {}),
                ...(r.soft ? { soft: r.soft } : {}),
                ...(r.tokenLevels ? { tokenLevels: r.tokenLevels } : {}),
                group: gi,
                index,
                truncated: r.truncated,
                advantage: 0,
                ...(c.maskTruncated && r.truncated ? { mask: new Array<boolean>((r.soft?.argmax.length ?? 0) + r.ids.length).fill(false) } : {}),
              },
            ],
      ),
    );
    let passTokens = 0;
    const tTrain = performance.now();
    for (const mb of chunks(samples, c.microBatch)) {
      const { batch, masks, soft } = sequenceBatch(mb);
      const old = await model.policyPass(batch, false, { temperature: c.temperature, entropy: true, ...(masks ? { masks } : {}), ...(soft ? { soft } : {}) });
      const lp = replyValues(old.logprobs, mb, batch.seqLen);
      const ent = replyValues(old.entropy!, mb, batch.seqLen);
      mb.forEach((s, i) => {
        s.oldLogp = lp[i]!;
        s.entropy = ent[i]!;
      });
      if (run.reference && c.klCoef > 0) {
        const ref = await run.reference.policyPass(batch, false, { temperature: c.temperature, ...(masks ? { masks } : {}), ...(soft ? { soft } : {}) });
        replyValues(ref.logprobs, mb, batch.seqLen).forEach((v, i) => (mb[i]!.refLogp = v));
      }
      passTokens += mb.reduce((a, s) => a + sequenceLength(s), 0);
    }

    // ---- rewards (KL folded in, when asked) and advantages ----
    if (c.klIn === "reward" && c.klCoef > 0) {
      for (const s of samples) {
        let kl = 0;
        for (let t = 0; t < s.oldLogp!.length; t++) kl += klValue(c.klEstimator, s.oldLogp![t]!, s.refLogp![t]!);
        const rewards = groups[s.group]!.rewards;
        rewards[s.index] = rewards[s.index]! - c.klCoef * kl;
        // Level credit: a level pays for its own tokens' divergence (a joint reply's, token by token).
        const levels = groups[s.group]!.levelRewards?.[s.index];
        if (levels && s.level !== undefined) levels[s.level] = levels[s.level]! - c.klCoef * kl;
        if (levels && s.tokenLevels) {
          s.tokenLevels.forEach((k, t) => {
            if (k >= 0) levels[k] = levels[k]! - c.klCoef * klValue(c.klEstimator, s.oldLogp![t]!, s.refLogp![t]!);
          });
        }
      }
    }
    sequenceCredits(groups, samples, c).forEach((credit, i) => {
      samples[i]!.advantage = credit.advantage;
      if (credit.perToken) samples[i]!.advantages = credit.perToken;
    });

    // ---- updates ----
    let clipSum = 0;
    let dualSum = 0;
    let tokenSum = 0;
    let lastLoss = 0;
    let lastPolicyLoss = 0;
    let gradNorm = 0;
    let lr = learningRate(schedule, Math.max(0, updates));
    if (samples.length > 0) {
      const perMini = c.miniBatch === 0 ? groups.length : c.miniBatch;
      for (let epoch = 0; epoch < c.epochs; epoch++) {
        for (let m0 = 0; m0 < groups.length; m0 += perMini) {
          const mini = samples.filter((s) => s.group >= m0 && s.group < m0 + perMini);
          // The policy is still the one that sampled: its log-probs are the old ones.
          const unchanged = epoch === 0 && m0 === 0;
          const shares = aggregationShares(
            mini.map((s) => lossTokens({ logp: s.oldLogp!, ...(s.mask ? { mask: s.mask } : {}) })),
            c.lossAggregation,
            c.maxNewTokens,
          );
          model.trained.zeroGrad();
          let loss = 0;
          let policy = 0;
          let offset = 0;
          for (const [k, mb] of chunks(mini, c.microBatch).entries()) {
            const mbShares = shares.slice(offset, offset + mb.length);
            offset += mb.length;
            let logp: Float64Array[];
            let entropy: Float64Array[];
            if (unchanged) {
              logp = mb.map((s) => s.oldLogp!);
              entropy = mb.map((s) => s.entropy!);
            } else {
              const { batch, masks, soft } = sequenceBatch(mb);
              const cur = await model.policyPass(batch, false, { temperature: c.temperature, entropy: c.entropyCoef > 0, ...(masks ? { masks } : {}), ...(soft ? { soft } : {}) });
              logp = replyValues(cur.logprobs, mb, batch.seqLen);
              entropy = cur.entropy ? replyValues(cur.entropy, mb, batch.seqLen) : mb.map((s) => s.entropy!);
              passTokens += mb.reduce((a, s) => a + sequenceLength(s), 0);
            }
            const seqs: LossSequence[] = mb.map((s, i) => ({
              logp: logp[i]!,
              oldLogp: s.oldLogp!,
              ...(s.refLogp ? { refLogp: s.refLogp } : {}),
              entropy: entropy[i]!,
              advantage: s.advantage,
              ...(s.advantages ? { advantages: s.advantages } : {}),
              ...(s.mask ? { mask: s.mask } : {}),
            }));
            const res = policyLoss(seqs, c, c.maxNewTokens, mbShares);
            loss += res.loss;
            policy += res.policyLoss;
            clipSum += res.clipFraction * res.tokens;
            dualSum += res.dualClipFraction * res.tokens;
            tokenSum += res.tokens;
            if (res.tokens === 0) continue;
            const { batch, entropyWeights, masks, soft } = sequenceBatch(mb, res.weights, c.entropyCoef > 0 ? res.entropyWeights : undefined);
            // A LoRA adapter's dropout acts in this pass only: the ratios above are of the policy
            // without dropout (the rollout's), its gradient of the dropout-perturbed objective.
            await model.policyPass(batch, true, {
              temperature: c.temperature,
              ...(entropyWeights ? { entropyWeights } : {}),
              ...(masks ? { masks } : {}),
              ...(soft ? { soft } : {}),
              dropoutSeed: dropoutSeed(c.seed, updates, k),
            });
            passTokens += mb.reduce((a, s) => a + sequenceLength(s), 0);
          }
          gradNorm = model.trained.gradNorm();
          lr = learningRate(schedule, updates);
          const gradScale = c.gradClip > 0 && gradNorm > c.gradClip ? c.gradClip / gradNorm : 1;
          model.trained.adamwStep({ lr, beta1: c.beta1, beta2: c.beta2, eps: c.eps, weightDecay: c.weightDecay, step: updates + 1, gradScale });
          updates++;
          lastLoss = loss;
          lastPolicyLoss = policy;
        }
      }
    }
    const trainSeconds = (performance.now() - tTrain) / 1000;

    // ---- metrics ----
    const replies = groups.flatMap((g) => g.replies.map((r) => r.scored));
    const raw = replies.map((r) => r.reward);
    let klTok = 0;
    let klN = 0;
    let entTok = 0;
    let entN = 0;
    for (const s of samples) {
      // The KL runs over soft tokens too; soft tokens have no entropy here (0): that metric is the answer tokens'.
      for (let t = 0; t < s.oldLogp!.length; t++) {
        if (t >= thinkingLength(s)) {
          entTok += s.entropy![t]!;
          entN++;
        }
        if (s.refLogp) {
          klTok += klValue(c.klEstimator, s.oldLogp![t]!, s.refLogp[t]!);
          klN++;
        }
      }
    }
    const m: StepMetrics = {
      step: step + 1,
      reward: mean(raw),
      rewardStd: unbiasedStd(raw),
      accuracy: mean(replies.map((r) => r.exact)),
      formatRate: mean(replies.map((r) => (r.format ? 1 : 0))),
      ...(c.leakPenalty > 0 ? { leakRate: mean(replies.map((r) => ((r.leaks ?? 0) > 0 ? 1 : 0))) } : {}),
      f1: mean(replies.map((r) => r.f1)),
      rougeL: mean(replies.map((r) => r.rougeL)),
      kl: run.reference && c.klCoef > 0 ? (klN ? klTok / klN : 0) : null,
      entropy: entN ? entTok / entN : 0,
      clipFraction: tokenSum ? clipSum / tokenSum : 0,
      dualClipFraction: tokenSum ? dualSum / tokenSum : 0,
      loss: lastLoss,
      policyLoss: lastPolicyLoss,
      responseLength: mean(replies.map((r) => r.tokens)),
      responseLengthMax: replies.reduce((a, r) => Math.max(a, r.tokens), 0),
      truncatedRate: mean(groups.flatMap((g) => g.replies.map((r) => (r.truncated ? 1 : 0)))),
      groups: groups.length,
      droppedGroups: dropped,
      rolloutBatches: batches,
      updates,
      lr,
      gradNorm,
      seconds: (performance.now() - t0) / 1000,
      rolloutSeconds,
      tokensPerSecond: trainSeconds > 0 ? passTokens / trainSeconds : 0,
      tooLong,
    };
    last = m;
    // A self-play round's thread of a server declared dead by its group writes nothing more (store/write-fence.ts).
    checkWrite(metricsFile);
    naming(metricsFile, () => appendFileSync(metricsFile, JSON.stringify(m) + "\n"));
    run.onStep?.(m);
    if ((step + 1) % run.saveEvery === 0 && step + 1 < c.steps) checkpoint(step + 1);
  }
  checkpoint(step);
  saveTrainedModel(run.out, model, run.files);
  return { steps: step, interrupted: false, last };
}

function chunks<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** The first step found no decision point short enough for the model: there is nothing to train on. */
export class PromptsTooLong extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PromptsTooLong";
  }
}

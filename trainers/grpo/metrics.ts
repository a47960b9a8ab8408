/**
 * What one GRPO step reports: to the progress bar, to OUT/metrics.jsonl (one record per step) and
 * to the socket.io progress stream (kind "trainer").
 */

export interface StepMetrics {
  readonly step: number;
  /** Mean reward of the batch's replies (before any KL penalty), and its spread. */
  readonly reward: number;
  readonly rewardStd: number;
  /** Mean exact answer match (the benchmark judge's accuracy on sampled replies). */
  readonly accuracy: number;
  /** Share of replies in the strict format. */
  readonly formatRate: number;
  readonly f1: number;
  readonly rougeL: number;
  /** Token-mean KL estimate to the reference policy at rollout (null without a reference). */
  readonly kl: number | null;
  /** Token-mean entropy of the policy at rollout. */
  readonly entropy: number;
  /** Share of tokens whose ratio was clipped (and dual-clipped), over the step's updates. */
  readonly clipFraction: number;
  readonly dualClipFraction: number;
  /** The aggregated loss of the last update (policy + KL term - entropy bonus) and its policy part. */
  readonly loss: number;
  readonly policyLoss: number;
  readonly responseLength: number;
  readonly responseLengthMax: number;
  /** Replies cut at maxNewTokens. */
  readonly truncatedRate: number;
  /** Groups trained on, groups dropped by dynamic sampling, rollout batches drawn. */
  readonly groups: number;
  readonly droppedGroups: number;
  readonly rolloutBatches: number;
  readonly updates: number;
  readonly lr: number;
  readonly gradNorm: number;
  readonly seconds: number;
  readonly rolloutSeconds: number;
  /** Tokens through the trainer's passes per second (prompt and reply). */
  readonly tokensPerSecond: number;
  /** Decision points left out because prompt + reply would not fit the model. */
  readonly tooLong: number;
  /** Share of replies stating a fact their agent never perceived (when the leak penalty is on). */
  readonly leakRate?: number;
}

export function progressNote(m: StepMetrics): string {
  const kl = m.kl === null ? "" : ` kl ${m.kl.toFixed(4)}`;
  return `reward ${m.reward.toFixed(3)} acc ${(100 * m.accuracy).toFixed(1)}%${kl} ent ${m.entropy.toFixed(3)} clip ${(100 * m.clipFraction).toFixed(1)}% len ${m.responseLength.toFixed(1)}`;
}

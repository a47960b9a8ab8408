/**
 * The GRPO reward of a reply to a prediction task, in three terms:
 *
 *   format: the whole reply must be exactly an action of the task's schema (JSON, strict objects,
 *           the task's target). Anything else gets `formatFailure` (-1) and nothing more.
 *   type:   1 when the action is the label's type (comment, repost, like, ignore), else 0.
 *   rougeL: ROUGE-L F1 of the reply's content against the label's (scoring.ts: rouge-score's
 *           tokens, CJK characters one each), counted when the label has content.
 *
 *   reward = type weight x type + rougeL weight x rougeL     (or formatFailure)
 */
import { strictFormat } from "../core/rewards/strict-format.js";
import { contentOf, reactionSchemaFor, type ReactionAction } from "./action.js";
import { contentRougeL } from "./scoring.js";
import type { SocialTask } from "./tasks.js";

export interface SocialRewardWeights {
  readonly type: number;
  readonly rougeL: number;
  /** The reward of a reply that is not exactly the schema (default -1). */
  readonly formatFailure: number;
}

export const SOCIAL_REWARD_WEIGHTS: SocialRewardWeights = { type: 1, rougeL: 1, formatFailure: -1 };

export interface SocialReward {
  readonly reward: number;
  readonly format: boolean;
  readonly formatError?: string;
  readonly action?: ReactionAction;
  readonly type: number;
  readonly rougeL: number;
}

export function socialReward(reply: string, task: SocialTask, weights: SocialRewardWeights = SOCIAL_REWARD_WEIGHTS): SocialReward {
  const parsed = strictFormat(reply, reactionSchemaFor(task.parent));
  if (!parsed.ok) return { reward: weights.formatFailure, format: false, formatError: parsed.error, type: 0, rougeL: 0 };
  const type = parsed.action.action === task.label.type ? 1 : 0;
  const rougeL = task.label.content.trim() === "" ? 0 : contentRougeL(contentOf(parsed.action), task.label.content);
  return { reward: weights.type * type + weights.rougeL * rougeL, format: true, action: parsed.action, type, rougeL };
}

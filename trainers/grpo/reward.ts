/**
 * The reward of one reply at a decision point, from the world's reward functions: the strict format
 * check against the action schema (a failure gets the lowest reward, `formatFailure`, and nothing
 * else), then the weighted sum of exact answer match, token F1 and ROUGE-L against the reference,
 * a format bonus, the written trace's share of lines right (a policy that writes its own context,
 * `context=self`), DAPO's overlong penalty, and the leak penalty: minus `leakPenalty` for each
 * fact the reply states that its agent never perceived (worlds/core/leak-audit.ts). A point with a
 * judge of its own (usersim's alignment judge) is scored by it instead, plus the overlong penalty.
 */
import { strictFormat } from "../../worlds/core/rewards/strict-format.js";
import { rougeL } from "../../worlds/core/rewards/rouge-l.js";
import { tokenF1 } from "../../worlds/core/rewards/token-f1.js";
import type { GrpoConfig } from "./config.js";
import type { DecisionPoint, Judged, ScoredReply } from "./decision-point.js";
import { overlongPenalty } from "./overlong.js";

export type RewardSettings = Pick<GrpoConfig, "rewards" | "formatFailure" | "maxNewTokens" | "overlongBuffer" | "overlongPenalty"> & Partial<Pick<GrpoConfig, "leakPenalty">>;

/** A reply as the sampler gave it. */
export interface SampledReply {
  readonly text: string;
  readonly tokens: number;
  readonly finish: string;
  readonly logprob: number;
}

/**
 * The replies to one point scored: by the point's own judge when it has one (the whole group in
 * one call), else each by the reward functions above.
 */
export async function scoreGroup(point: DecisionPoint, replies: readonly SampledReply[], c: RewardSettings): Promise<ScoredReply[]> {
  const judged = point.judge ? await point.judge(replies.map((r) => r.text)) : undefined;
  return replies.map((r, i) => scoreReply(point, r, c, judged?.[i]));
}

export function scoreReply(point: DecisionPoint, reply: SampledReply, c: RewardSettings, judged?: Judged): ScoredReply {
  const overlong = overlongPenalty(reply.tokens, c.maxNewTokens, c.overlongBuffer, c.overlongPenalty);
  const base = { text: reply.text, tokens: reply.tokens, finish: reply.finish, logprob: reply.logprob, overlong };
  if (judged) {
    // The world's judge: its format, its reward (the reward weights are the judge's own).
    // Each level's reward: its own score, or the reply's where it has none; a malformed reply's
    // levels all get the format failure, and every level the reply's overlong penalty.
    const levels = (own: (l: number | null) => number) => (judged.levels ? { levelRewards: judged.levels.map((l) => own(l) + overlong) } : {});
    if (!judged.format) return { ...base, reward: c.formatFailure + overlong, format: false, formatError: judged.formatError ?? "malformed", exact: 0, f1: 0, rougeL: 0, ...levels(() => c.formatFailure) };
    return { ...base, reward: judged.reward + overlong, format: true, action: judged.action, exact: judged.score, f1: 0, rougeL: 0, ...levels((l) => l ?? judged.reward) };
  }
  const parsed = point.strict ? point.strict(reply.text) : strictFormat(reply.text, point.schema);
  if (!parsed.ok) {
    return { ...base, reward: c.formatFailure + overlong, format: false, formatError: parsed.error, exact: 0, f1: 0, rougeL: 0 };
  }
  const exact = point.exact(parsed.action);
  const text = point.answerText(parsed.action);
  const w = c.rewards;
  // The text measures cost something (ROUGE-L is quadratic): only computed when they count.
  const f1 = w.f1 > 0 ? tokenF1(text, point.reference) : 0;
  const rouge = w.rougeL > 0 ? (point.rougeL ? point.rougeL(text) : rougeL(text, point.reference).fmeasure) : 0;
  const penalty = c.leakPenalty ?? 0;
  const leaks = penalty > 0 && point.leaks ? point.leaks(parsed.action, reply.text) : undefined;
  const trace = w.trace > 0 && point.trace ? point.trace(reply.text) : undefined;
  const reward = w.exact * exact + w.f1 * f1 + w.rougeL * rouge + w.trace * (trace ?? 0) + w.format + overlong - penalty * (leaks ?? 0);
  return { ...base, reward, format: true, action: parsed.action, exact, f1, rougeL: rouge, ...(leaks !== undefined ? { leaks } : {}), ...(trace !== undefined ? { trace } : {}) };
}

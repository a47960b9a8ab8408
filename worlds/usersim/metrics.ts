/**
 * The benchmark's numbers over a set of judged replies:
 *
 *   accuracy     the mean alignment (judge.ts), in [0, 1]; a malformed reply counts 0
 *   states[d]    the mean score of state d over the replies that have a ground truth for it
 *                (malformed ones count 0); `structured` of them were judged exactly
 *   response     the mean response similarity (malformed: 0)
 *   formatRate   the share of replies that keep the format
 *   meanReward   the mean reward (malformed: -1), what GRPO sees
 */
import type { Hierarchy } from "./hierarchy.js";
import type { Judgement } from "./judge.js";

export interface StateSummary {
  /** null when no reply had a ground truth for it. */
  readonly mean: number | null;
  readonly judged: number;
  readonly structured: number;
}

export interface AlignmentSummary {
  readonly items: number;
  readonly wellFormed: number;
  readonly formatRate: number;
  readonly accuracy: number;
  readonly meanReward: number;
  readonly states: Readonly<Record<string, StateSummary>>;
  readonly response: number;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function summarizeJudgements(judgements: readonly Judgement[], h: Hierarchy): AlignmentSummary {
  const states: Record<string, StateSummary> = {};
  for (const d of h.states) {
    const scored = judgements.map((j) => j.states[d.name]).filter((s) => s !== undefined && s.score !== null);
    states[d.name] = {
      mean: scored.length ? mean(scored.map((s) => s!.score!)) : null,
      judged: scored.length,
      structured: scored.filter((s) => s!.method === "structured").length,
    };
  }
  const wellFormed = judgements.filter((j) => j.wellFormed).length;
  return {
    items: judgements.length,
    wellFormed,
    formatRate: judgements.length ? wellFormed / judgements.length : 0,
    accuracy: mean(judgements.map((j) => j.alignment)),
    meanReward: mean(judgements.map((j) => j.reward)),
    states,
    response: mean(judgements.map((j) => j.response)),
  };
}

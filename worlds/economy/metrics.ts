/**
 * The report of a set of replies at decision points, in the columns the economy's training
 * report compares Base and trained policies with:
 *
 * - parseRate: share of replies that are a JSON object (JSON.parse of the trimmed reply);
 * - formatFailures: share of replies that are not exactly a decision (reward -1);
 * - work / consumption mean and std (population std) over the well-formed decisions: the std
 *   shows whether a policy still decides differently in different situations (no mode collapse);
 * - reward: mean reward, -1 for a malformed reply, else the normalized utility in [0, 1];
 * - utility: mean discounted utility U of the well-formed decisions, and the mean of the best
 *   decisions' U at the same points (the ceiling).
 */
import type { DecisionPoint } from "./decision-point.js";
import { scoreReply } from "./reward.js";
import { meanError as meanOf, type MeanError } from "../core/mean-error.js";

export interface DecisionReport {
  readonly points: number;
  readonly parseRate: number;
  readonly formatFailures: number;
  readonly workMean: number | null;
  readonly workStd: number | null;
  readonly consumptionMean: number | null;
  readonly consumptionStd: number | null;
  readonly reward: number;
  readonly utility: number | null;
  readonly bestUtility: number | null;
}

/** Mean and population standard deviation (null for none). */
export function meanStd(xs: readonly number[]): [number | null, number | null] {
  if (xs.length === 0) return [null, null];
  let m = 0;
  for (const x of xs) m += x;
  m /= xs.length;
  let v = 0;
  for (const x of xs) v += (x - m) * (x - m);
  return [m, Math.sqrt(v / xs.length)];
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text.trim());
    return v !== null && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}

export function decisionReport(points: readonly DecisionPoint[], replies: readonly string[]): DecisionReport {
  if (points.length !== replies.length) throw new RangeError(`${replies.length} replies for ${points.length} decision points`);
  if (points.length === 0) throw new RangeError("no decision points to report on");
  let parsed = 0;
  let failures = 0;
  let reward = 0;
  const work: number[] = [];
  const consumption: number[] = [];
  const utility: number[] = [];
  const best: number[] = [];
  for (let k = 0; k < points.length; k++) {
    if (isJsonObject(replies[k]!)) parsed++;
    const s = scoreReply(points[k]!, replies[k]!);
    reward += s.reward;
    if (!s.format) {
      failures++;
      continue;
    }
    work.push(s.decision.work);
    consumption.push(s.decision.consumption);
    utility.push(s.utility);
    best.push(points[k]!.best.utility);
  }
  const n = points.length;
  const [workMean, workStd] = meanStd(work);
  const [consumptionMean, consumptionStd] = meanStd(consumption);
  return {
    points: n,
    parseRate: parsed / n,
    formatFailures: failures / n,
    workMean,
    workStd,
    consumptionMean,
    consumptionStd,
    reward: reward / n,
    utility: meanStd(utility)[0],
    bestUtility: meanStd(best)[0],
  };
}

export type { MeanError };

/** A mean over the points and its standard error; null for no points. */
function meanError(xs: readonly number[]): MeanError | null {
  return xs.length ? meanOf(xs, "points") : null;
}

/**
 * Two sets of replies at the same points, point by point (B minus A): how many replies differ,
 * and the mean reward and utility differences with their standard errors. Two policies' report
 * rows can agree to three decimals while their replies differ at most points; the paired
 * difference and its error say whether that is a tie within the noise of the points or the same
 * replies.
 */
export interface PairedDifference {
  readonly points: number;
  /** Points whose replies differ as written. */
  readonly differing: number;
  /** Points where both decided (well-formed) and the decisions differ. */
  readonly differentDecisions: number;
  /** Reward difference over every point (a malformed reply counts -1). */
  readonly reward: MeanError;
  /** Utility difference over the points where both replies are well-formed (null: none). */
  readonly utility: MeanError | null;
}

export function pairedDifference(points: readonly DecisionPoint[], a: readonly string[], b: readonly string[]): PairedDifference {
  if (a.length !== points.length || b.length !== points.length) throw new RangeError(`${a.length} and ${b.length} replies for ${points.length} decision points`);
  if (points.length === 0) throw new RangeError("no decision points to compare on");
  let differing = 0;
  let differentDecisions = 0;
  const reward: number[] = [];
  const utility: number[] = [];
  for (let k = 0; k < points.length; k++) {
    if (a[k] !== b[k]) differing++;
    const sa = scoreReply(points[k]!, a[k]!);
    const sb = scoreReply(points[k]!, b[k]!);
    reward.push(sb.reward - sa.reward);
    if (sa.format && sb.format) {
      utility.push(sb.utility - sa.utility);
      if (sa.decision.work !== sb.decision.work || sa.decision.consumption !== sb.decision.consumption) differentDecisions++;
    }
  }
  return { points: points.length, differing, differentDecisions, reward: meanError(reward)!, utility: meanError(utility) };
}

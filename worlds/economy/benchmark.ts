/**
 * The economy's decision points as a benchmark (`bench economy --data points.jsonl`): each point
 * is a question, the household's monthly prompt; the answer is the decision's JSON, judged by the
 * strict format and the discounted utility (reward.ts). A reply counts as correct when its
 * normalized utility is within NEAR_BEST of the best decision's (1); the graded score is the
 * reward itself, and the benchmark's metrics are the training report's columns (metrics.ts).
 *
 * The question's `story` is the household's view as JSON (what the point recorded), so the
 * simulation agent's solver, EconAgent's heuristic, decides from what the household saw and
 * nothing else. There is no simulation mode: a household's month is not a story to retell.
 */
import type { Benchmark, BenchItem, GroundTruth, Mode, Verdict } from "../question/benchmark.js";
import { BenchmarkOptionError } from "../question/benchmark.js";
import type { QuestionTask } from "../question/world.js";
import type { Solver } from "../question/solver.js";
import { strictFormat } from "../core/rewards/strict-format.js";
import { HouseholdDecisionSchema, type HouseholdDecision } from "./action.js";
import { readDecisionPointFile, type DecisionPoint } from "./decision-point.js";
import { decisionReport, type DecisionReport } from "./metrics.js";
import { HouseholdObservationSchema } from "./observation.js";
import { heuristicPolicy } from "./policies.js";
import { DECISION_REQUEST, describeEconomy, renderDecision, renderObservation } from "./prompts.js";
import { FORMAT_FAILURE, scoreDecision } from "./reward.js";
import { EconomyWorld } from "./world.js";

/** A reply is correct when its reward (normalized utility) is at least this. */
export const NEAR_BEST = 0.95;

export const ECONOMY_TYPES = ["work", "idle"] as const;

export interface EconomyBenchItem extends BenchItem {
  readonly point: DecisionPoint;
}

/** A decision as the prompt asks for it: compact JSON, work first. */
export function decisionJson(d: HouseholdDecision): string {
  return JSON.stringify({ work: d.work, consumption: d.consumption });
}

/** Answers a random agent or a person's form may pick from: the world's grid of decisions. */
const CANDIDATES: readonly string[] = new EconomyWorld().options().map(decisionJson);

/** The household's month as a one-timestep socialized context, acting as the best decision does. */
export function pointContext(p: DecisionPoint): GroundTruth["context"] {
  const name = p.household;
  return {
    agents_names: [name],
    socialized_context: [
      {
        timestep: String(p.month),
        state: describeEconomy(p.view.economy, null),
        observations: [`${name}: ${renderObservation(p.view)}`],
        actions: [`${name}: ${renderDecision(p.best)}`],
      },
      { timestep: String(p.month + 1), state: "none", observations: [`${name}: none`], actions: [`${name}: none`] },
    ],
  };
}

export class EconomyBenchmark implements Benchmark<EconomyBenchItem> {
  readonly name = "economy";
  readonly title = "Economy decision points";
  readonly types = ECONOMY_TYPES;
  readonly causes = {};

  load(file: string): EconomyBenchItem[] {
    return readDecisionPointFile(file).map(({ point, line }, index) => ({
      id: point.id,
      index,
      source: { file, line },
      type: point.best.work >= 0.5 ? "work" : "idle",
      question: DECISION_REQUEST,
      answer: decisionJson(point.best),
      point,
    }));
  }

  task(item: EconomyBenchItem, mode: Mode): QuestionTask {
    if (mode !== "vanilla") throw new BenchmarkOptionError("the economy benchmark asks in vanilla mode only (a household's month has no story for the world model to retell)");
    return {
      benchmark: this.name,
      itemId: item.id,
      mode,
      story: JSON.stringify(item.point.view),
      question: item.question,
      candidates: CANDIDATES,
      prompt: renderObservation(item.point.view),
    };
  }

  async groundTruth(item: EconomyBenchItem): Promise<GroundTruth> {
    return { context: pointContext(item.point), contextId: item.id, label: item.answer as string, agrees: true };
  }

  judge(item: EconomyBenchItem, answer: string): Verdict {
    const parsed = strictFormat(answer, HouseholdDecisionSchema);
    if (!parsed.ok) return { correct: false, score: 0, detail: { answer, format: false, reward: FORMAT_FAILURE, error: parsed.error } };
    const s = scoreDecision(item.point, parsed.action);
    if (!s.format) return { correct: false, score: 0, detail: { answer, format: false, reward: s.reward } };
    return { correct: s.reward >= NEAR_BEST, score: s.reward, detail: { answer, format: true, reward: s.reward, utility: s.utility } };
  }

  answerText(_item: EconomyBenchItem, label: string | readonly string[]): string | undefined {
    return typeof label === "string" ? label : undefined;
  }

  /** The training report's columns over the run's answers (their texts are in the verdicts' details). */
  metrics(items: readonly EconomyBenchItem[], verdicts: readonly Verdict[]): Readonly<Record<string, number>> {
    const answers = verdicts.map((v) => String((v.detail as { answer?: unknown } | undefined)?.answer ?? ""));
    return reportMetrics(decisionReport(items.map((i) => i.point), answers));
  }
}

/** A decision report as benchmark metrics (the means that have no value are left out). */
export function reportMetrics(r: DecisionReport): Record<string, number> {
  const out: Record<string, number> = { parseRate: r.parseRate, formatFailures: r.formatFailures, reward: r.reward };
  for (const key of ["workMean", "workStd", "consumptionMean", "consumptionStd", "utility", "bestUtility"] as const) {
    const v = r[key];
    if (v !== null) out[key] = v;
  }
  return out;
}

/**
 * The simulation agent's answer: EconAgent's heuristic on the view the question carries (its
 * consumption rule drawn with seed 0: which of the two rules a household keeps is its own trait,
 * not something the view records).
 */
export const economySolver: Solver = (task) => {
  let view: unknown;
  try {
    view = JSON.parse(task.story);
  } catch {
    throw new Error(`economy question ${task.itemId}: its story is not the household's view (JSON)`);
  }
  const parsed = HouseholdObservationSchema.safeParse(view);
  if (!parsed.success) throw new Error(`economy question ${task.itemId}: its story is not the household's view (${parsed.error.issues[0]?.message})`);
  return { answer: decisionJson(heuristicPolicy(0).decide(parsed.data)) };
};

/**
 * The economy world (EconAgent, Li et al., ACL 2024): households decide each month how willing
 * they are to work and what share of their money to spend, as JSON; wages, progressive taxes
 * paid back in equal shares, a firm sector whose price and wages answer the imbalance between
 * demand and goods, and a central bank's Taylor rule make the economy around them.
 * docs/worlds/economy.md has the equations, parameters and file formats.
 *
 * Everything the rest of the program needs from this world is exported here: `world` (what the
 * registry lists: rooms, decision-point files, the benchmark and its solver, the trainer's
 * points) and the economy's own API (the simulation, its agents and indicators, for `simulate`).
 */
import type { WorldEntry } from "../core/world-entry.js";
import { economySolver, EconomyBenchmark } from "./benchmark.js";
import { economyDecisions } from "./decisions.js";
import { serializeDecisionPoints } from "./decision-point.js";
import { generateDecisionPoints } from "./generator.js";
import { ECONOMY_DEFAULTS } from "./params.js";
import { economyScenarios } from "./scenario.js";

export const world: WorldEntry = {
  name: "economy",
  title: "Economy (EconAgent)",
  scenario: economyScenarios,
  generator: {
    describe: "decision points (JSON Lines): household-months of a heuristic run of the default economy, with the path that followed and the best decision",
    async generate(n, seed, out, onProgress) {
      const points = generateDecisionPoints({ params: ECONOMY_DEFAULTS, seed, count: n });
      onProgress?.(n);
      return { data: out, files: [{ path: out, text: serializeDecisionPoints(points) }] };
    },
  },
  benchmark: { options: [], create: async () => new EconomyBenchmark() },
  solver: economySolver,
  decisions: economyDecisions,
};

export { ECONAGENT_FALLBACK, HOUSEHOLD_DECISION_JSON_SCHEMA, HouseholdDecisionSchema, IDLE, type HouseholdDecision } from "./action.js";
export { decisionJson, EconomyBenchmark, NEAR_BEST, reportMetrics, type EconomyBenchItem } from "./benchmark.js";
export {
  DecisionPointSchema,
  parseDecisionPoints,
  readDecisionPointFile,
  serializeDecisionPoints,
  type DecisionPath,
  type DecisionPoint,
  type PointParams,
} from "./decision-point.js";
export { stepEconomy, taylorRate, type MonthResult } from "./dynamics.js";
export { generateDecisionPoints, type PointOptions } from "./generator.js";
export { correlationYears, okunCorrelation, okunRelativeCorrelation, pearson, phillipsCorrelation, yearlyIndicators, type YearRow } from "./indicators.js";
export { decisionReport, meanStd, pairedDifference, type DecisionReport, type MeanError, type PairedDifference } from "./metrics.js";
export {
  HouseholdObservationSchema,
  householdObservation,
  publicStats,
  type HouseholdFinances,
  type HouseholdObservation,
  type PublicStats,
} from "./observation.js";
export { ECONOMY_DEFAULTS, EconomyParamsFields, EconomyParamsSchema, economyParams, type EconomyParams, type EconomyParamsInput } from "./params.js";
export {
  HEURISTIC_DEFAULTS,
  DEFAULT_HOUSEHOLD_RULE,
  HOUSEHOLD_RULES,
  RESPONSIVE_STRENGTH,
  consumptionRule,
  fixedPolicy,
  heuristicDecision,
  heuristicPolicy,
  householdRule,
  randomPolicy,
  responsivePolicy,
  type ConsumptionRule,
  type HeuristicOptions,
  type HouseholdPolicy,
} from "./policies.js";
export { DECISION_REQUEST, describeEconomy, renderDecision, renderObservation } from "./prompts.js";
export { FORMAT_FAILURE, ceilingDecision, decisionBounds, decisionUtility, normalizedUtility, pathUtility, scoreDecision, scoreReply, type DecisionScore } from "./reward.js";
export {
  economyScenario,
  EconomyRoomOptionsSchema,
  householdAgent,
  ROOM_HOUSEHOLDS,
  ROOM_MAX_HOUSEHOLDS,
  ruleOrThrow,
  type EconomyScenario,
  type HouseholdAgent,
} from "./scenario.js";
export { simulateEconomy, summarizeRun, type EconomyRun, type SimulateOptions, type SimulatedMonth } from "./simulate.js";
export { drawSkills, paretoSkill } from "./skills.js";
export { householdNames, initialEconomy, type EconomyState, type Households, type MonthStats } from "./state.js";
export { describeBrackets, taxDue, type TaxSchedule } from "./taxes.js";
export { crra, flowUtility, type UtilityParams } from "./utility.js";
export { EconomyWorld, householdIndex, type MonthEventData } from "./world.js";
export { EconomyRunner, LOGGED_HOUSEHOLDS, MonthDataSchema, type Deciders, type EconomyRunOptions, type ReplyCounts } from "./run.js";

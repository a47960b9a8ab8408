/**
 * The economy world (EconAgent, Li et al., ACL 2024): households decide each month how willing
 * they are to work and what share of their money to spend, as JSON; wages, progressive taxes
 * paid back in equal shares, a firm sector whose price and wages answer the imbalance between
 * demand and goods, and a central bank's Taylor rule make the economy around them.
 * docs/worlds/economy.md has the equations, parameters and file formats.
 *
 * Everything the rest of the program needs from this world is exported here.
 */
export { ECONAGENT_FALLBACK, HOUSEHOLD_DECISION_JSON_SCHEMA, HouseholdDecisionSchema, IDLE, type HouseholdDecision } from "./action.js";
export {
  DecisionPointSchema,
  parseDecisionPoints,
  serializeDecisionPoints,
  type DecisionPath,
  type DecisionPoint,
  type PointParams,
} from "./decision-point.js";
export { stepEconomy, taylorRate, type MonthResult } from "./dynamics.js";
export { generateDecisionPoints, type PointOptions } from "./generator.js";
export { okunCorrelation, pearson, phillipsCorrelation, yearlyIndicators, type YearRow } from "./indicators.js";
export { decisionReport, type DecisionReport } from "./metrics.js";
export {
  HouseholdObservationSchema,
  householdObservation,
  publicStats,
  type HouseholdFinances,
  type HouseholdObservation,
  type PublicStats,
} from "./observation.js";
export { ECONOMY_DEFAULTS, EconomyParamsSchema, economyParams, type EconomyParams, type EconomyParamsInput } from "./params.js";
export {
  HEURISTIC_DEFAULTS,
  consumptionRule,
  fixedPolicy,
  heuristicDecision,
  heuristicPolicy,
  randomPolicy,
  type ConsumptionRule,
  type HeuristicOptions,
  type HouseholdPolicy,
} from "./policies.js";
export { DECISION_REQUEST, describeEconomy, renderDecision, renderObservation } from "./prompts.js";
export { FORMAT_FAILURE, ceilingDecision, decisionBounds, decisionUtility, normalizedUtility, pathUtility, scoreDecision, scoreReply, type DecisionScore } from "./reward.js";
export { economyScenario, householdAgent, seatPolicy, type EconomyScenario, type HouseholdAgent, type SeatPolicy } from "./scenario.js";
export { simulateEconomy, summarizeRun, type EconomyRun, type SimulateOptions, type SimulatedMonth } from "./simulate.js";
export { drawSkills, paretoSkill } from "./skills.js";
export { householdNames, initialEconomy, type EconomyState, type Households, type MonthStats } from "./state.js";
export { describeBrackets, taxDue, type TaxSchedule } from "./taxes.js";
export { crra, flowUtility, type UtilityParams } from "./utility.js";
export { EconomyWorld, householdIndex } from "./world.js";

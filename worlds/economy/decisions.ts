/**
 * The economy's decision points as a trainer takes them (`train grpo --world economy`): household-
 * months of a seeded heuristic run of the default economy (generator.ts), each asked as the
 * household's monthly prompt and rewarded with the decision's normalized utility (reward.ts); the
 * strict format is the trainer's (a reply that is not exactly the decision's JSON gets its
 * format-failure reward, -1 by default).
 */
import type { DecisionSet, ScoredDecision } from "../core/scored-decision.js";
import { HouseholdDecisionSchema, type HouseholdDecision } from "./action.js";
import { pointContext } from "./benchmark.js";
import type { DecisionPoint } from "./decision-point.js";
import { generateDecisionPoints } from "./generator.js";
import { ECONOMY_DEFAULTS } from "./params.js";
import { renderDecision, renderObservation } from "./prompts.js";
import { scoreDecision } from "./reward.js";

/** A decision point as a trainer's scored decision. */
export function scoredDecision(p: DecisionPoint): ScoredDecision {
  return {
    id: p.id,
    agent: p.household,
    timestep: p.month,
    seed: typeof p.seed === "number" ? p.seed : 0,
    title: `Economy: ${p.household}, month ${p.month}`,
    observation: renderObservation(p.view),
    schema: HouseholdDecisionSchema,
    best: { work: p.best.work, consumption: p.best.consumption },
    reward: (action) => scoreDecision(p, action as HouseholdDecision).reward,
    render: (action) => renderDecision(action as HouseholdDecision),
    context: pointContext(p),
  };
}

export const economyDecisions: DecisionSet = {
  describe: "household-months of the default economy (100 households, 240 months) run by heuristic households, rewarded with the decision's normalized utility",
  async points(count, seed) {
    return generateDecisionPoints({ params: ECONOMY_DEFAULTS, seed, count }).map(scoredDecision);
  },
};

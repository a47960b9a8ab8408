/**
 * The recommendation world's decision points, as `train grpo --world rec` takes them: generated
 * users (the generator's default catalogue), recallers fitted on their training items, and one
 * point per user at the validation item: the observation is the history and the recallers' first
 * picks (prompts.ts), the action the weights over the recallers (action.ts), the reward NDCG@10
 * of the merged list against the valid item. The test items stay held out for `bench rec`. The
 * best action is the weights of the 1/10 simplex grid that rank the item highest (the first such).
 */
import type { DecisionSet, ScoredDecision } from "../core/scored-decision.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { RecWeightsSchema, scoreAction, type RecWeights } from "./action.js";
import { simplexGrid } from "./best-mixture.js";
import { generateRec } from "./generator.js";
import { renderObservation, renderWeights } from "./prompts.js";
import { fitRecaller, RECALLERS } from "./recallers/fit.js";
import type { Recaller } from "./recallers/recaller.js";
import { casesOf, leaveLastOut, trainSetOf, type RecCase, type RecSplit } from "./split.js";

export const DECISION_K = 10;
const AGENT = "recommender";

/** The grid weights that rank the target highest (ties: the first on the grid). */
function bestWeights(split: RecSplit, c: RecCase, recallers: readonly Recaller[]): RecWeights {
  let best: RecWeights | undefined;
  let bestNdcg = -1;
  for (const w of simplexGrid(RECALLERS.length, 10)) {
    const action = { weights: { pop: w[0]!, itemknn: w[1]!, bpr: w[2]! } };
    const ndcg = scoreAction(action, c, split, recallers, DECISION_K).ndcg;
    if (ndcg > bestNdcg) [best, bestNdcg] = [action, ndcg];
  }
  return best!;
}

export function decisionPoint(split: RecSplit, c: RecCase, recallers: readonly Recaller[], seed: number): ScoredDecision {
  const user = split.users[c.user]!.user;
  const observation = renderObservation(split, c, recallers);
  const best = bestWeights(split, c, recallers);
  const context: SocializedContext = {
    agents_names: [AGENT],
    socialized_context: [
      { timestep: "0", state: `user ${user} has watched ${c.history.length} films`, observations: [`${AGENT}: ${observation}`], actions: [`${AGENT}: ${renderWeights(best.weights)}`] },
      { timestep: "1", state: `user ${user} watches ${split.items[c.target]!.title}`, observations: [`${AGENT}: none`], actions: [`${AGENT}: none`] },
    ],
  };
  return {
    id: `rec-${seed}-u${user}`,
    agent: AGENT,
    timestep: 0,
    seed,
    title: `Recommendation: user ${user}`,
    observation,
    schema: RecWeightsSchema,
    best,
    reward: (action) => scoreAction(RecWeightsSchema.parse(action), c, split, recallers, DECISION_K).ndcg,
    render: (action) => JSON.stringify(action),
    context,
  };
}

export const recDecisions: DecisionSet = {
  describe: "generated users' next items (the validation item of a leave-last-out split), the action the weights over pop, itemknn and bpr, rewarded with NDCG@10 of the merged list",
  async points(count, seed) {
    const gen = generateRec({ users: count }, seed);
    const split = leaveLastOut(gen.dataset);
    const train = trainSetOf(split);
    const recallers = RECALLERS.map((name) => fitRecaller(name, train, { bpr: { seed } }));
    return casesOf(split, "valid")
      .slice(0, count)
      .map((c) => decisionPoint(split, c, recallers, seed));
  },
};

/**
 * The recommendation world's decision points, as `train grpo --world rec` takes them: generated
 * users (the generator's default catalogue), recallers fitted on their training items, and one
 * point per user at the validation item: the observation is the history and the recallers' first
 * picks (prompts.ts), the action the weights over the recallers (action.ts), the reward NDCG@10
 * of the merged list against the valid item. The test items stay held out for `bench rec`. The
 * best action is the weights of the 1/10 simplex grid that rank the item highest (the first such).
 * The world's set weighs its own pop, itemknn and bpr; a higher layer adds recallers the world
 * cannot fit itself (SASRec on the model runtime: trainers/rec/decisions.ts) with recDecisionSet.
 */
import type { DecisionSet, ScoredDecision } from "../core/scored-decision.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { recWeightsSchema, scoreAction, type RecWeights } from "./action.js";
import { gridNdcgs, simplexGrid } from "./best-mixture.js";
import { generateRec } from "./generator.js";
import { renderObservation, renderWeights } from "./prompts.js";
import { fitRecaller, RECALLERS } from "./recallers/fit.js";
import type { Recaller } from "./recallers/recaller.js";
import { casesOf, leaveLastOut, trainSetOf, type RecCase, type RecSplit, type TrainSet } from "./split.js";

export const DECISION_K = 10;
const AGENT = "recommender";

/** The grid weights that rank the target highest (ties: the first on the grid). */
function bestWeights(split: RecSplit, c: RecCase, recallers: readonly Recaller[]): RecWeights {
  const grid = simplexGrid(recallers.length, 10);
  const ndcgs = gridNdcgs(recallers, c, split.items.length, DECISION_K, grid);
  let best = 0;
  for (let g = 1; g < grid.length; g++) if (ndcgs[g]! > ndcgs[best]!) best = g;
  return { weights: Object.fromEntries(recallers.map((r, t) => [r.name, grid[best]![t]!])) };
}

export function decisionPoint(split: RecSplit, c: RecCase, recallers: readonly Recaller[], seed: number): ScoredDecision {
  const user = split.users[c.user]!.user;
  const observation = renderObservation(split, c, recallers);
  const best = bestWeights(split, c, recallers);
  const schema = recWeightsSchema(recallers.map((r) => r.name));
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
    schema,
    best,
    reward: (action) => scoreAction(schema.parse(action), c, split, recallers, DECISION_K).ndcg,
    render: (action) => JSON.stringify(action),
    context,
  };
}

/** A recaller fitted above the world, on the decision points' training items. */
export interface ExtraRecaller {
  readonly name: string;
  fit(train: TrainSet, seed: number): Recaller;
}

/** The decision points with weights over the world's recallers and `extra` ones, in that order. */
export function recDecisionSet(extra: readonly ExtraRecaller[] = []): DecisionSet {
  const names = [...RECALLERS, ...extra.map((e) => e.name)];
  return {
    describe: `generated users' next items (the validation item of a leave-last-out split), the action the weights over ${names.join(", ")}, rewarded with NDCG@10 of the merged list`,
    async points(count, seed) {
      const gen = generateRec({ users: count }, seed);
      const split = leaveLastOut(gen.dataset);
      const train = trainSetOf(split);
      const recallers = [...RECALLERS.map((name) => fitRecaller(name, train, { bpr: { seed } })), ...extra.map((e) => e.fit(train, seed))];
      return casesOf(split, "valid")
        .slice(0, count)
        .map((c) => decisionPoint(split, c, recallers, seed));
    },
  };
}

export const recDecisions: DecisionSet = recDecisionSet();

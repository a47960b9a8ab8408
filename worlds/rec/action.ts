/**
 * The recommender's actions, as JSON (decoding is constrained to these schemas):
 *
 *   {"items": [2571, 1196, ...]}                      a ranked list of 1 to 100 MovieIDs (a repeat counts once, at its first place)
 *   {"weights": {"pop": 0.2, "itemknn": 0.5, "bpr": 0.3}}   weights over the recallers, merged
 *                                                      as recallers/mixture.ts merges them
 *
 * The weights name exactly the recallers at hand: the world's pop, itemknn and bpr, and those a
 * higher layer adds (SASRec, trained on the model runtime: trainers/rec/).
 *
 * Either is rewarded with NDCG@k (and HR@k) of the list it gives against the held-out next item.
 * A reply that is not exactly one of them gets the trainer's format failure (-1); weights that
 * are all 0 rank nothing and get 0.
 */
import { z } from "zod";
import { hitAt, ndcgAt } from "./metrics.js";
import { topK } from "./ranking.js";
import { RECALLERS } from "./recallers/fit.js";
import { mixtureRecaller } from "./recallers/mixture.js";
import type { Recaller } from "./recallers/recaller.js";
import type { RecCase, RecSplit } from "./split.js";

const Weight = z.number().min(0).max(1);

export interface RecWeights {
  readonly weights: Readonly<Record<string, number>>;
}

/** Weights over exactly the recallers `names`, each 0 to 1. */
export function recWeightsSchema(names: readonly string[]): z.ZodType<RecWeights> {
  return z.object({ weights: z.object(Object.fromEntries(names.map((n) => [n, Weight]))).strict() }).strict() as unknown as z.ZodType<RecWeights>;
}

/** Weights over the world's own recallers (pop, itemknn, bpr). */
export const RecWeightsSchema = recWeightsSchema(RECALLERS);

/** A ranked list of 1 to 100 MovieIDs; an item named again wastes its place, as in the room's list (world.ts). */
export const RecRankingSchema = z.object({ items: z.array(z.number().int().min(0)).min(1).max(100) }).strict();
export type RecRanking = z.infer<typeof RecRankingSchema>;

export type RecAction = RecWeights | RecRanking;

export interface RecScore {
  readonly ndcg: number;
  readonly hr: number;
  /** The top k the action gave, as MovieIDs. */
  readonly ranked: readonly number[];
}

/** The ranked list (dense indices) of weights over the recallers, the history masked; empty when all weights are 0. */
export function weightsRanking(recallers: readonly Recaller[], w: RecWeights["weights"], c: RecCase, items: number, k: number): number[] {
  if (!(recallers.reduce((a, r) => a + (w[r.name] ?? 0), 0) > 0)) return [];
  const out = new Float64Array(items);
  mixtureRecaller(recallers, w).score(c.user, c.history, out);
  return topK(out, k, c.history);
}

/** NDCG@k and HR@k of an action for one case (recallers: the fitted ones its weights name). */
export function scoreAction(action: RecAction, c: RecCase, split: RecSplit, recallers: readonly Recaller[], k: number): RecScore {
  const ranked = "weights" in action ? weightsRanking(recallers, action.weights, c, split.items.length, k) : action.items.map((id) => split.itemIndex.get(id) ?? -1);
  const relevant = new Set([c.target]);
  return { ndcg: ndcgAt(ranked, relevant, k), hr: hitAt(ranked, relevant, k), ranked: ranked.slice(0, k).map((i) => (i >= 0 ? split.items[i]!.id : -1)) };
}

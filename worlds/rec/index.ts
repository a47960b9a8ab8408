/**
 * The recommendation world: users with histories of interactions with items (movies); a
 * recommender sees a user's history and the item metadata and ranks the items, and is rewarded by
 * NDCG@k and HR@k against the user's held-out next item. docs/recommendation.md has the formats,
 * the split, the metrics and the recallers. What the rest of the program needs, in one place:
 *
 *   data        MovieLens-1M's files, read and written          dataset.ts, movielens.ts
 *   generator   synthetic users with latent preferences          generator.ts, preferences.ts
 *   split       leave-last-out, as RecBole builds it             split.ts
 *   scoring     NDCG@k, HR@k (RecBole's), full ranking           metrics.ts, ranking.ts, evaluate.ts
 *   recallers   popularity, item-kNN, BPR-MF, their mixture,     recallers/*.ts, best-mixture.ts
 *               the oracle that knows the latent truth
 *   actions     a ranked list, or weights over the recallers     action.ts
 *   prompts     the recommender's observation                    prompts.ts
 *   decisions   the points `train grpo --world rec` learns from  decisions.ts
 *   room        a user watching films, a recommender's seat        world.ts, scenario.ts
 */
import { join } from "node:path";
import type { WorldEntry } from "../core/world-entry.js";
import { recDecisions } from "./decisions.js";
import { generateRec } from "./generator.js";
import { MOVIES_FILE, RATINGS_FILE, serializeMovieLens } from "./movielens.js";
import { PREFERENCES_FILE } from "./preferences.js";
import { recScenarios } from "./scenario.js";

export const world: WorldEntry = {
  name: "rec",
  title: "Recommendation (MovieLens-1M format)",
  generator: {
    describe: "users with latent preferences and their interaction histories, as MovieLens-1M's ratings.dat and movies.dat, with the latent truth in preferences.json (--out names the folder; N counts users)",
    unit: "users",
    output: "folder",
    async generate(n, seed, out, onProgress) {
      const gen = generateRec({ users: n }, seed, onProgress);
      const files = serializeMovieLens(gen.dataset);
      return {
        data: out,
        files: [
          { path: join(out, MOVIES_FILE), text: files.movies },
          { path: join(out, PREFERENCES_FILE), text: JSON.stringify(gen.preferences) + "\n" },
          // Last: a folder with ratings.dat is complete.
          { path: join(out, RATINGS_FILE), text: files.ratings },
        ],
      };
    },
  },
  decisions: recDecisions,
  scenario: recScenarios,
};

export { MOVIELENS_GENRES, type Movie, type Rating, type RecDataset } from "./dataset.js";
export { MOVIES_FILE, RATINGS_FILE, parseMovies, parseRatings, readMovieLens, serializeMovieLens } from "./movielens.js";
export { generateRec, RecGeneratorOptionsSchema, type GeneratedRec, type RecGeneratorOptions } from "./generator.js";
export { PREFERENCES_FILE, PreferencesSchema, parsePreferences, readPreferences, utility, type Preferences } from "./preferences.js";
export { casesOf, leaveLastOut, splitStats, trainSetOf, type Phase, type RecCase, type RecSplit, type TrainSet, type UserSequence } from "./split.js";
export { hitAt, meanError, ndcgAt, pairedDifference, type MeanError, type TopKScore } from "./metrics.js";
export { topK } from "./ranking.js";
export { evaluate, recommend, type CaseScores } from "./evaluate.js";
export { bestMixture, gridBuffers, gridNdcgs, gridNdcgsByRanking, simplexGrid, standardisedScores, type BestMixture, type GridBuffers, type GridScorer, type MixtureSearch } from "./best-mixture.js";
export type { Recaller } from "./recallers/recaller.js";
export { fitPopularity } from "./recallers/popularity.js";
export { fitItemKnn, type ItemKnnOptions } from "./recallers/item-knn.js";
export { BPR_DEFAULTS, fitBpr, type BprModel, type BprOptions } from "./recallers/bpr.js";
export { mixtureRecaller, MixtureError, normaliseWeights, parseWeights, standardise, type Weights } from "./recallers/mixture.js";
export { oracleRecaller, OracleMismatch } from "./recallers/oracle.js";
export { fitRecaller, isRecallerName, RECALLERS, type FitOptions, type RecallerName } from "./recallers/fit.js";
export { RecRankingSchema, recWeightsSchema, RecWeightsSchema, scoreAction, weightsRanking, type RecAction, type RecRanking, type RecScore, type RecWeights } from "./action.js";
export { HISTORY_SHOWN, PREVIEW, renderObservation, renderWeights, weightsRequest } from "./prompts.js";
export { DECISION_K, decisionPoint, recDecisions, recDecisionSet, type ExtraRecaller } from "./decisions.js";
export { RecListSchema, RecWorld, RECOMMENDER, ROOM_K, type RecList, type RecObservationData, type RecRoomState, type RecStepScore } from "./world.js";
export { mixtureRecommender, recScenario, recScenarios, RecRoomOptionsSchema, ROOM_CANDIDATES, ROOM_MAX_ITEMS, ROOM_MAX_USERS, ROOM_MIXTURE, type RecRoomOptions, type RecScenario } from "./scenario.js";

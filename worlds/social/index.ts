/**
 * The social-media world (issue 28): users with profiles in a follow graph, posts spreading
 * through ranked feeds, interaction trees at depths 0 and 1, the exact record of who has seen
 * what. The world's one entry point: its scenario for rooms, generator, benchmark and solver (the
 * registry's `world`), and what the rest of the program uses of it:
 *
 * - the World and its state, actions (zod), observations, mental states, the rule agent, the
 *   room scenario (the social room builds its own, of any size);
 * - the engine for headless runs at scale (typed arrays; measurements/social-scale.ts);
 * - data: the interaction-tree format and reader, the flat JSONL importer, the generator;
 * - the benchmark: tasks, prompts, scoring (accuracy, macro-F1, ROUGE-L, BERTScore), the
 *   baselines (random, majority, simulation), the GRPO reward.
 */
import type { WorldEntry } from "../core/world-entry.js";
import { BenchmarkOptionError } from "../question/benchmark.js";
import { SocialBenchmark } from "./benchmark.js";
import { generateSocial } from "./generator.js";
import { socialScenarios } from "./scenario.js";
import { socialSolver } from "./solver.js";
import { socialFacts } from "./leak-facts.js";
import { factHelp, SOCIAL_FACTS } from "./facts.js";

export const world: WorldEntry = {
  name: "social",
  title: "Social media",
  scenario: socialScenarios,
  generator: {
    describe: "interaction trees (JSONL, the documented format) with the latent ground truth; N counts trees (about 13 prediction tasks each)",
    unit: "trees",
    async generate(n, seed, out, onProgress) {
      return { data: out, files: [{ path: out, text: generateSocial(n, seed, {}, onProgress).jsonl }] };
    },
  },
  benchmark: {
    options: ["embedder", "depth", "context"],
    flags: SOCIAL_FACTS.map((f) => ({ key: f.key, help: factHelp(f) })),
    async create(opts) {
      if (opts.depth !== undefined && !(Number.isInteger(opts.depth) && opts.depth >= 0)) throw new BenchmarkOptionError(`--depth: expected a non-negative integer, got ${opts.depth}`);
      try {
        // An ONNX encoder's folder is opened now: a bad one stops the command before a run exists.
        return new SocialBenchmark(opts);
      } catch (err) {
        if (err instanceof BenchmarkOptionError) throw err;
        throw new BenchmarkOptionError(`--embedder: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  },
  solver: socialSolver,
  trainOn: "generated",
  facts: socialFacts,
};

export { actionSchemaFor, contentOf, describeAction, reactionSchemaFor, REACTION_TYPES, SocialActionSchema, type ReactionAction, type ReactionType, type SocialAction } from "./action.js";
export { MajorityPredictor, RandomPredictor, SimulationPredictor, type SocialPredictor } from "./baselines.js";
export { decide, drawsFor, kindProbabilities, likeliestDecision, reactProbability, type DecisionInput, type Draws } from "./behavior.js";
export { bertScore, bertScoreOfStates, OnnxTokenEncoder, type BertScore, type TokenEncoder, type TokenStates } from "./bertscore.js";
export { importFlat, importFlatFile, type FlatImport } from "./flat-import.js";
export { parseTrees, readTreeFile, serializeTrees, TreeSchema, type SocialTree, type SourcedTree } from "./format.js";
export { generateSocial, generateSocialTree, type GeneratedSocial, type SocialGeneratorOptions } from "./generator.js";
export { buildFollowGraph, followersOf, followingOf, follows, graphBytes, type FollowGraph } from "./graph.js";
export { nameOf as userName, topInterest } from "./population.js";
export { generateNetwork, type Network, type NetworkOptions } from "./network.js";
export { compactPrompt, factsLine, SOCIAL_INSTRUCTIONS, taskJsonSchema, taskPrompt } from "./prompts.js";
export { agreementFact, FACT_KEYS, factHelp, factsTitle, factWithoutShort, NEEDS_SHORT, interestWords, SOCIAL_FACTS, type FactKey, type FactScene, type FactsOptions, type SocialFact } from "./facts.js";
export { socialReward, SOCIAL_REWARD_WEIGHTS, type SocialReward, type SocialRewardWeights } from "./rewards.js";
export { MAX_ROOM_USERS, playableScenario, socialScenario, type SocialScenario, type SocialScenarioOptions } from "./scenario.js";
export { contentRougeL, macroF1, readReply, scoreSocial, scoreTask, type DepthScores, type ScoredTask, type SocialScores } from "./scoring.js";
export { renderScreen, screenOf, type Screen, type ScreenEntry, type ScreenItem } from "./screen.js";
export { DEFAULT_SIM_CONFIG, SocialSim, VIA_NAMES, type SimConfig } from "./sim.js";
export { labelReply, replyFor, tasksOf, type SocialTask } from "./tasks.js";
export { visibleSide, type Side } from "./text.js";
export { STYLES, TOPICS } from "./vocabulary.js";
export { itemsSeenBy, type SeenItem } from "./seen-items.js";
export { KIND_NAMES, type KindName } from "./items.js";
export { initialSocialState, intentActions, latentIntentsOf, RuleAgent, ruleAction, SocialWorld, type SocialObservation, type SocialPost, type SocialState } from "./world.js";
export { SocialBenchmark, type SocialBenchItem } from "./benchmark.js";
export { groundTruthContext, visibleContext } from "./contexts.js";

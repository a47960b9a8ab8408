/**
 * The social-media world (issue 28): users with profiles in a follow graph, posts spreading
 * through ranked feeds, interaction trees at depths 0 and 1, the exact record of who has seen
 * what. Everything the rest of the program needs from this world is exported here:
 *
 * - the World and its state, actions (zod), observations, mental states, the rule agent, the
 *   room scenario;
 * - the engine for headless runs at scale (typed arrays; measure-scale.ts measures it);
 * - data: the interaction-tree format and reader, the flat JSONL importer, the generator;
 * - the benchmark: tasks, prompts, scoring (accuracy, macro-F1, ROUGE-L, BERTScore), the
 *   baselines (random, majority, simulation), the GRPO reward.
 */
export { actionSchemaFor, contentOf, reactionSchemaFor, REACTION_TYPES, SocialActionSchema, type ReactionAction, type ReactionType, type SocialAction } from "./action.js";
export { MajorityPredictor, RandomPredictor, SimulationPredictor, type SocialPredictor } from "./baselines.js";
export { decide, drawsFor, kindProbabilities, likeliestDecision, reactProbability, type DecisionInput, type Draws } from "./behavior.js";
export { bertScore, bertScoreOfStates, OnnxTokenEncoder, type BertScore, type TokenEncoder, type TokenStates } from "./bertscore.js";
export { importFlat, importFlatFile, type FlatImport } from "./flat-import.js";
export { parseTrees, readTreeFile, serializeTrees, TreeSchema, type SocialTree, type SourcedTree } from "./format.js";
export { generateSocial, generateSocialTree, type GeneratedSocial, type SocialGeneratorOptions } from "./generator.js";
export { buildFollowGraph, followersOf, followingOf, follows, type FollowGraph } from "./graph.js";
export { generateNetwork, type Network, type NetworkOptions } from "./network.js";
export { SOCIAL_INSTRUCTIONS, taskJsonSchema, taskPrompt } from "./prompts.js";
export { socialReward, SOCIAL_REWARD_WEIGHTS, type SocialReward, type SocialRewardWeights } from "./rewards.js";
export { socialScenario, type SocialScenario, type SocialScenarioOptions } from "./scenario.js";
export { contentRougeL, macroF1, readReply, scoreSocial, scoreTask, type DepthScores, type ScoredTask, type SocialScores } from "./scoring.js";
export { renderScreen, screenOf, type Screen, type ScreenEntry, type ScreenItem } from "./screen.js";
export { DEFAULT_SIM_CONFIG, SocialSim, VIA_NAMES, type SimConfig } from "./sim.js";
export { labelReply, replyFor, tasksOf, type SocialTask } from "./tasks.js";
export { STYLES, TOPICS } from "./vocabulary.js";
export { initialSocialState, intentActions, ruleAction, SocialWorld, type SocialObservation, type SocialPost, type SocialState } from "./world.js";

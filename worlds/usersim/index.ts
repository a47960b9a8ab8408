/**
 * The user-simulation world (HumanLM's recipe): a simulated user replies to a conversation by
 * first stating its latent states (stance, emotion, belief, value, goal, communication: the
 * hierarchy file's tags, in its order), then its response. What the rest of the program needs
 * from it, in one place:
 *
 *   world       UsersimWorld, its state and actions              world.ts
 *   hierarchy   HumanLM's hierarchy files                        hierarchy.ts
 *   reply       the reply's zod schema, text form and regex     reply.ts
 *   data        conversation records, JSONL and Parquet          records.ts, profile.ts
 *   generator   users and replies with exact latent truth       generator.ts, latent.ts, realize.ts
 *   judge       the offline judge, rewards, benchmark numbers   judge.ts, metrics.ts
 *   agents      random, heuristic, simulation (the ceiling)     baselines.ts
 *   prompts     the user's prompts, the LLM judge's rubric      prompts.ts, prompts/*.txt
 *   episodes    a record's episode, a room's scenario           scenario.ts
 */
export {
  UsersimWorld,
  initialUsersimState,
  renderThread,
  renderUserView,
  checkName,
  type UsersimAction,
  type UsersimState,
  type UsersimInit,
} from "./world.js";
export {
  DEFAULT_HIERARCHY,
  DEFAULT_HIERARCHY_JSON,
  RESPONSE_ONLY_HIERARCHY,
  RESPONSE,
  readHierarchyFile,
  parseHierarchy,
  hierarchyJson,
  readLevelPrompt,
  isResponseOnly,
  tags,
  maxChars,
  type Dimension,
  type Hierarchy,
} from "./hierarchy.js";
export { replySchema, replyShape, renderReply, parseReply, replyTextPattern, STATE_PATTERN, type Reply } from "./reply.js";
export { readConversationsFile, parseConversationsJsonl, parseConversationsParquet, RecordSchema, type ConversationRecord, type ThreadMessage, type PastReply } from "./records.js";
export { renderProfile, PersonaSchema, type Persona } from "./profile.js";
export { LatentSchema, LATENT_DIMENSIONS, latentTexts, isLatentDimension, type Latent, type LatentDimension } from "./latent.js";
export { realizeReply } from "./realize.js";
export { generateUsersim, generateRecord, generateUser, type GeneratedRecord, type GeneratedUsersim } from "./generator.js";
export {
  judgeReply,
  judgeText,
  malformedJudgement,
  scoreState,
  checkWeights,
  MALFORMED_REWARD,
  type Judgement,
  type JudgeOptions,
  type Reference,
  type StateScore,
  type Weights,
} from "./judge.js";
export { summarizeJudgements, type AlignmentSummary, type StateSummary } from "./metrics.js";
export { simulationReply, heuristicReply, randomReply, replyFromLatent, UNKNOWN_STATE, type UserView } from "./baselines.js";
export {
  systemPrompt,
  levelPrompt,
  judgePrompt,
  judgeReference,
  parseJudgeReply,
  judgeCacheKey,
  rubricFor,
  JudgeVerdictSchema,
  type JudgeRequest,
  type Speaker,
} from "./prompts.js";
export { stateOfRecord, referenceOf, referenceText, usersimScenario, type UsersimScenario } from "./scenario.js";

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
 *   episodes    a record's episode, a room's scenario           scenario.ts, simulated-user.ts
 *   benchmark   records as graded benchmark items               benchmark.ts, llm-judge.ts,
 *               free text by embedding similarity               embedding-similarity.ts
 */
import type { WorldEntry } from "../core/world-entry.js";
import { BenchmarkOptionError } from "../question/benchmark.js";
import { simulationAnswer, UsersimBenchmark } from "./benchmark.js";
import { generateUsersim } from "./generator.js";
import { DEFAULT_HIERARCHY, readHierarchyFile } from "./hierarchy.js";
import type { FreeTextScorer } from "./embedding-similarity.js";
import type { Weights } from "./judge.js";
import { usersimScenarios } from "./scenario.js";

export const world: WorldEntry = {
  name: "usersim",
  title: "User simulation",
  scenario: usersimScenarios,
  generator: {
    describe: "conversation records (JSONL, HumanLM's layout) with exact latent ground truth: users, threads and their replies; 80/10/10 train/val/test splits",
    unit: "conversation records",
    async generate(n, seed, out, onProgress) {
      const gen = generateUsersim(n, seed, onProgress);
      return { data: out, files: [{ path: out, text: gen.jsonl }] };
    },
  },
  benchmark: {
    options: ["hierarchy", "weights", "split", "judgeModel", "embedder"],
    async create(opts) {
      const hierarchy = opts.hierarchy !== undefined ? readHierarchyFile(opts.hierarchy) : DEFAULT_HIERARCHY;
      // Loaded only when asked for (onnxruntime with it); a bad model folder stops the command before a run exists.
      let freeText: FreeTextScorer | undefined;
      // The LLM judge scores the free text itself (and falls back on ROUGE-L): an embedder would go unused while the report named it.
      if (opts.embedder !== undefined && opts.judgeModel) throw new BenchmarkOptionError("--embedder: scores the offline judge's free text; with --judge the model scores it (give one of the two)");
      if (opts.embedder !== undefined) {
        try {
          freeText = await (await import("./embedding-similarity.js")).embeddingSimilarity(opts.embedder);
        } catch (err) {
          throw new BenchmarkOptionError(`--embedder: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      try {
        return new UsersimBenchmark({
          hierarchy,
          ...(opts.weights !== undefined ? { weights: parseWeights(opts.weights) } : {}),
          ...(opts.split !== undefined ? { split: opts.split } : {}),
          ...(opts.judgeModel ? { judgeModel: opts.judgeModel } : {}),
          ...(freeText ? { freeText } : {}),
        });
      } catch (err) {
        throw new BenchmarkOptionError(`--${(err as Error).message}`);
      }
    },
  },
  solver: (task) => ({ answer: simulationAnswer(task) }),
};

/** "response=2,belief=0" -> {response: 2, belief: 0} (the tags are checked against the hierarchy by the judge). */
export function parseWeights(spec: string): Weights {
  const out: Record<string, number> = {};
  for (const part of spec.split(",")) {
    const m = /^\s*([a-z][a-z0-9_]*)\s*=\s*([0-9.eE+-]+)\s*$/.exec(part);
    if (!m || !Number.isFinite(Number(m[2]))) throw new BenchmarkOptionError(`--weights: expected TAG=WEIGHT pairs separated by commas, got "${part}"`);
    if (Object.hasOwn(out, m[1]!)) throw new BenchmarkOptionError(`--weights: ${m[1]} is given twice`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

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
export { replySchema, replyShape, renderReply, replyLevels, parseReply, replyTextPattern, levelTextPattern, STATE_PATTERN, type Reply } from "./reply.js";
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
  levelPromptParts,
  WRITTEN_OPEN,
  WRITTEN_CLOSE,
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
export { UsersimBenchmark, usersimPrompt, usersimLevels, simulationAnswer, type UsersimBenchItem, type UsersimBenchmarkOptions } from "./benchmark.js";
export { LlmJudge, type LlmJudgeOptions, type LlmJudgeStats } from "./llm-judge.js";
export { SimulatedUser, FollowUpAgent, leaning, topicNamed } from "./simulated-user.js";
export { usersimScenarios } from "./scenario.js";

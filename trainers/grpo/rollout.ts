/**
 * Rollouts: G replies per decision point from the current policy, sampled in one batch by the
 * native engine (temperature, top-k, top-p; a seeded stream per reply, so a rerun samples the same
 * replies), under the point's action grammar unless `constrain` is off, each scored with the
 * world's reward functions. With `soft` (SofT-GRPO) each reply first thinks in soft tokens
 * (soft-completer.ts), which the reply keeps for the trainer.
 */
import { actionSpec, choiceBudget, compiledConstraint } from "../../agents/policy/action-grammar.js";
import { turnMessages } from "../../agents/policy/action.js";
import { decodeLevels, levelDecoding } from "../../agents/policy/level-decoding.js";
import { hashString } from "../../worlds/core/rng.js";
import { levelPromptText } from "../../worlds/question/world.js";
import type { NativeCompleter } from "../../models/generate.js";
import type { PolicyModel } from "../../models/model.js";
import type { SoftTrace } from "../../models/native.js";
import type { Completion } from "../../models/sampling.js";
import type { TokenAutomaton } from "../../models/grammar/index.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import type { GrpoConfig } from "./config.js";
import type { DecisionPoint, ScoredReply } from "./decision-point.js";
import { scoreGroup } from "./reward.js";
import { completeSoft } from "./soft-completer.js";
import { tokenLevels } from "./level-tokens.js";

export interface Reply {
  /** Its tokens (per-level: every level's, in order). */
  readonly ids: readonly number[];
  readonly truncated: boolean;
  readonly scored: ScoredReply;
  /** The soft tokens it thought in first (soft thinking). */
  readonly soft?: SoftTrace;
  /**
   * Per-level generation: each level as it was sampled, after its own prompt, under its own
   * grammar and budget (the group's prompt, constraint and budget are then the first level's
   * prompt and the levels' budgets in all). The loss scores each level's tokens under its masks.
   */
  readonly segments?: readonly ReplySegment[];
  /**
   * Joint generation under level credit: the level each of its tokens belongs to (-1: none), for
   * a well-formed reply written in levels (level-tokens.ts); absent for a malformed one.
   */
  readonly tokenLevels?: Int16Array;
}

export interface ReplySegment {
  readonly promptIds: readonly number[];
  readonly ids: readonly number[];
  readonly truncated: boolean;
  readonly constraint?: TokenAutomaton;
  readonly budget: number;
}

export interface Group {
  readonly point: DecisionPoint;
  /** The rendered prompt (chat template applied) and its tokens. */
  readonly prompt: string;
  readonly promptIds: readonly number[];
  /** The grammar the replies were sampled under, if any, with `budget` tokens each. */
  readonly constraint?: TokenAutomaton;
  /** The new tokens the replies were sampled with (maxNewTokens, or more for a choice: pointDecoding). */
  readonly budget: number;
  readonly replies: readonly Reply[];
  /** Rewards as the advantage sees them (the KL penalty folded in, when it is). */
  rewards: number[];
  /** Per reply, each level's reward, where the judge scored the levels: what `credit: level` uses. */
  levelRewards?: number[][];
}

export interface RolloutOptions {
  readonly completer: NativeCompleter;
  /** The policy (soft thinking samples from it directly). */
  readonly model: PolicyModel;
  readonly tokenizer: PolicyTokenizer;
  readonly config: GrpoConfig;
  /** The longest sequence the model takes (prompt + reply). */
  readonly maxPositions: number;
  /** Seed of reply j at point i. */
  readonly seedOf: (point: number, sample: number) => number;
}

export interface Rollout {
  readonly groups: Group[];
  /** Points left out because prompt + a whole reply does not fit the model. */
  readonly tooLong: DecisionPoint[];
  readonly seconds: number;
  readonly generatedTokens: number;
}

/** A point's prompt as the policy is asked it, its token ids, and whether a reply of `replyTokens` tokens still fits the model. */
export function preparePrompt(point: DecisionPoint, tokenizer: PolicyTokenizer, replyTokens: number, maxPositions: number): { prompt: string; ids: number[]; fits: boolean } {
  const prompt = tokenizer.applyChatTemplate(point.messages, { addGenerationPrompt: true });
  const ids = tokenizer.encode(prompt);
  return { prompt, ids, fits: ids.length + replyTokens <= maxPositions };
}

/** How a point's replies are decoded: under its grammar (none when constrain is off), within `budget` new tokens. */
export interface PointDecoding {
  readonly grammar?: TokenAutomaton;
  readonly budget: number;
  /** The budget was raised above maxNewTokens to the point's longest choice. */
  readonly raised: boolean;
}

/**
 * A point's grammar and budget. The budget is maxNewTokens, raised for a `choice` grammar (the
 * world's valid actions under constrain options, a cited line of a compact context) to what its
 * longest choice may need (choiceBudget), as the policy agent raises its max_new_tokens when it
 * acts: the decoder leaves out every choice that cannot finish in the tokens left, so a lower
 * budget would silently train on the short choices only, and the agent the policy becomes would
 * meet choices in evaluation that it never sampled in training. Raised rather than refused: the
 * choices are the data's (a story's lines, a world's actions this turn), so a long one may first
 * turn up hundreds of steps into a run, and a budget of at least the longest choice changes no
 * mask of a choice grammar (every choice can finish anyway): it only gives the longest choices
 * their reach. Other grammars are refused when maxNewTokens may cut them: their budget shapes the
 * replies (how long a free answer may grow), which is the user's setting to make.
 */
export function pointDecoding(point: DecisionPoint, tokenizer: PolicyTokenizer, c: Pick<GrpoConfig, "constrain" | "maxNewTokens">): PointDecoding {
  const spec = c.constrain === "off" ? undefined : (point.grammar ?? actionSpec(point.schema, point.options, c.constrain));
  if (!spec) return { budget: c.maxNewTokens, raised: false };
  const grammar = compiledConstraint(tokenizer, spec);
  const budget = Math.max(c.maxNewTokens, choiceBudget(spec));
  if (grammar.minBudget > budget)
    throw new Error(`decision point ${point.id}: its action grammar may need up to ${grammar.minBudget} tokens, more than maxNewTokens (${c.maxNewTokens}); raise it, or sample without the grammar (constrain: off)`);
  return { grammar, budget, raised: budget > c.maxNewTokens };
}

/**
 * The budget each point of a batch is sampled with: its own, except that the points raised for
 * their choices share the largest raised budget, so that a batch is decoded in at most two calls
 * (a choice grammar's masks are the same under every budget from its longest choice up).
 */
export function batchBudgets(decodings: readonly PointDecoding[], maxNewTokens: number): number[] {
  const shared = Math.max(maxNewTokens, ...decodings.map((d) => (d.raised ? d.budget : 0)));
  return decodings.map((d) => (d.raised ? shared : maxNewTokens));
}

/**
 * The most new tokens a point's reply can take: its budget; one more for a raised point, whose
 * reply, sampled under a shared budget, may be its longest choice written a byte a token and then
 * the end-of-sequence token.
 */
export function replyTokens(d: PointDecoding): number {
  return d.budget + (d.raised ? 1 : 0);
}

/** Runs `sample` once per distinct budget, one after another (one model decodes at a time), over the rows with that budget; every row's result in order. */
export async function sampleByBudget<T>(budgets: readonly number[], sample: (rows: number[], budget: number) => Promise<readonly T[]>): Promise<T[]> {
  const out = new Array<T>(budgets.length);
  for (const budget of new Set(budgets)) {
    const rows = budgets.flatMap((b, i) => (b === budget ? [i] : []));
    const results = await sample(rows, budget);
    rows.forEach((r, k) => (out[r] = results[k]!));
  }
  return out;
}

export async function rollout(points: readonly DecisionPoint[], o: RolloutOptions): Promise<Rollout> {
  const t0 = performance.now();
  const c = o.config;
  if (c.generation === "per-level") return perLevelRollout(points, o, t0);
  const thinking = c.soft ? c.thinkingSteps : 0;
  const prepared: { point: DecisionPoint; prompt: string; ids: number[]; index: number; decoding: PointDecoding }[] = [];
  const tooLong: DecisionPoint[] = [];
  points.forEach((point, index) => {
    const decoding = pointDecoding(point, o.tokenizer, c);
    const { prompt, ids, fits } = preparePrompt(point, o.tokenizer, replyTokens(decoding) + thinking, o.maxPositions);
    if (!fits) tooLong.push(point);
    else prepared.push({ point, prompt, ids, index, decoding });
  });
  const budgets = batchBudgets(
    prepared.map((p) => p.decoding),
    c.maxNewTokens,
  );
  const rows: { prompt: number[]; seed: number; grammar: TokenAutomaton | undefined; budget: number }[] = [];
  prepared.forEach((p, g) => {
    for (let j = 0; j < c.groupSize; j++) rows.push({ prompt: p.ids, seed: o.seedOf(p.index, j), grammar: p.decoding.grammar, budget: budgets[g]! });
  });
  const constrained = prepared.some((p) => p.decoding.grammar);
  const completions = await sampleByBudget(
    rows.map((r) => r.budget),
    (picked, maxNewTokens): Promise<readonly (Completion & { readonly soft?: SoftTrace })[]> => {
      const prompts = picked.map((i) => rows[i]!.prompt);
      const seeds = picked.map((i) => rows[i]!.seed);
      const grammar = constrained ? picked.map((i) => rows[i]!.grammar) : undefined;
      return c.soft
        ? completeSoft(o.model, o.tokenizer, prompts, { ...c, maxNewTokens }, seeds, grammar)
        : o.completer.complete(prompts, { maxNewTokens, temperature: c.temperature, topK: c.topK, topP: c.topP }, seeds, grammar);
    },
  );
  let generatedTokens = 0;
  const groups = await Promise.all(
    prepared.map(async (p, g): Promise<Group> => {
      const comps = completions.slice(g * c.groupSize, (g + 1) * c.groupSize);
      for (const comp of comps) generatedTokens += comp.tokens.length;
      // DAPO's overlong shaping measures a reply against its point's own budget (not the batch's).
      const scored = await scoreGroup(
        p.point,
        comps.map((comp) => ({ text: comp.text, tokens: comp.tokens.length, finish: comp.finishReason, logprob: comp.logprobs.reduce((a, b) => a + b, 0) })),
        { ...c, maxNewTokens: p.decoding.budget },
      );
      // Level credit: each well-formed reply's tokens split by its levels' tags.
      const names = c.credit === "level" ? p.point.levels?.levels.items.map((l) => l.name) : undefined;
      const decode = (ids: readonly number[]) => o.tokenizer.decode(ids);
      const replies = comps.map((comp, j): Reply => {
        const levels = names && scored[j]!.format ? tokenLevels(comp.text, comp.tokens, decode, names) : undefined;
        return {
          ids: comp.tokens,
          truncated: comp.finishReason === "length",
          scored: scored[j]!,
          ...(comp.soft ? { soft: comp.soft } : {}),
          ...(levels ? { tokenLevels: levels } : {}),
        };
      });
      const constraint = p.decoding.grammar;
      return { point: p.point, prompt: p.prompt, promptIds: p.ids, ...(constraint ? { constraint } : {}), budget: budgets[g]!, replies, rewards: replies.map((r) => r.scored.reward), ...groupLevelRewards(replies, names?.length) };
    }),
  );
  return { groups, tooLong, seconds: (performance.now() - t0) / 1000, generatedTokens };
}

/**
 * How many tokens a point's per-level reply may take in the model's context at its last level, at
 * most: that level's prompt, the levels before it as its prompt shows them (each within its
 * budget, and the words around them), and its own budget; the largest over levels. Used to leave
 * out points that cannot fit, as a joint reply's prompt + maxNewTokens; level-decoding.ts checks
 * each level's real prompt again.
 */
export function perLevelLength(point: DecisionPoint, tokenizer: PolicyTokenizer, constrain: GrpoConfig["constrain"]): { length: number; budget: number; prompt: string; promptIds: number[] } {
  const r = point.levels!;
  const around = tokenizer.encode(`${r.levels.writtenOpen}${r.levels.writtenClose}`).length;
  let before = 0;
  let length = 0;
  let first: { prompt: string; ids: number[] } | undefined;
  r.levels.items.forEach((_, k) => {
    const prompt = tokenizer.applyChatTemplate(turnMessages(levelPromptText(r.levels, k, []), r.system), { addGenerationPrompt: true });
    const ids = tokenizer.encode(prompt);
    first ??= { prompt, ids };
    const { budget } = levelDecoding(tokenizer, r.levels, k, constrain);
    length = Math.max(length, ids.length + (k > 0 ? around + before + k : 0) + budget);
    before += budget;
  });
  return { length, budget: before, prompt: first!.prompt, promptIds: first!.ids };
}

/**
 * Per-level rollouts (HumanLM's): each point's G replies written level by level
 * (level-decoding.ts), every level of every row of the batch decoded together; reply j of point i
 * takes the joint reply's seed at its first level, and seeds derived from it at the next ones, as
 * the policy agent does. A reply is scored as a whole (the levels' texts joined), its overlong
 * penalty against the levels' budgets in all.
 */
async function perLevelRollout(points: readonly DecisionPoint[], o: RolloutOptions, t0: number): Promise<Rollout> {
  const c = o.config;
  const missing = points.find((p) => !p.levels);
  if (missing) throw new Error(`decision point ${missing.id}: per-level generation needs an answer written in levels (usersim's hierarchy); this point has none (use --generation joint)`);
  const prepared: { point: DecisionPoint; index: number; prompt: string; promptIds: number[]; budget: number }[] = [];
  const tooLong: DecisionPoint[] = [];
  points.forEach((point, index) => {
    const { length, budget, prompt, promptIds } = perLevelLength(point, o.tokenizer, c.constrain);
    if (length > o.maxPositions) tooLong.push(point);
    else prepared.push({ point, index, prompt, promptIds, budget });
  });
  const requests = prepared.flatMap((p) => Array.from({ length: c.groupSize }, () => p.point.levels!));
  const answers = await decodeLevels(o.completer, o.tokenizer, requests, { temperature: c.temperature, topK: c.topK, topP: c.topP }, {
    constrain: c.constrain,
    maxPositions: o.maxPositions,
    seedOf: (row, level) => {
      const seed = o.seedOf(prepared[Math.floor(row / c.groupSize)]!.index, row % c.groupSize);
      return level === 0 ? seed : hashString(`${seed}|level ${level}`);
    },
  });
  let generatedTokens = 0;
  const groups = await Promise.all(
    prepared.map(async (p, g): Promise<Group> => {
      const mine = answers.slice(g * c.groupSize, (g + 1) * c.groupSize);
      const replies0 = mine.map((a) => {
        const segments = a.segments.map((s): ReplySegment => ({
          promptIds: s.promptIds,
          ids: s.completion.tokens,
          truncated: s.completion.finishReason === "length",
          ...(s.constraint ? { constraint: s.constraint } : {}),
          budget: s.budget,
        }));
        const ids = segments.flatMap((s) => s.ids);
        generatedTokens += ids.length;
        const logprob = a.segments.reduce((sum, s) => sum + s.completion.logprobs.reduce((x, y) => x + y, 0), 0);
        const truncated = segments.some((s) => s.truncated);
        return { text: a.text, ids, segments, truncated, logprob, finish: truncated ? "length" : a.segments[a.segments.length - 1]!.completion.finishReason };
      });
      const scored = await scoreGroup(
        p.point,
        replies0.map((r) => ({ text: r.text, tokens: r.ids.length, finish: r.finish, logprob: r.logprob })),
        { ...c, maxNewTokens: p.budget },
      );
      const replies = replies0.map((r, j): Reply => ({ ids: r.ids, truncated: r.truncated, scored: scored[j]!, segments: r.segments }));
      return { point: p.point, prompt: p.prompt, promptIds: p.promptIds, budget: p.budget, replies, rewards: replies.map((r) => r.scored.reward), ...groupLevelRewards(replies, p.point.levels!.levels.items.length) };
    }),
  );
  return { groups, tooLong, seconds: (performance.now() - t0) / 1000, generatedTokens };
}

/** A group's level rewards, when the judge scored every reply's `levels` levels (Judged.levels). */
function groupLevelRewards(replies: readonly Reply[], levels: number | undefined): { levelRewards?: number[][] } {
  return levels !== undefined && replies.every((r) => r.scored.levelRewards?.length === levels) ? { levelRewards: replies.map((r) => [...r.scored.levelRewards!]) } : {};
}

/**
 * Rollouts: G replies per decision point from the current policy, sampled in one batch by the
 * native engine (temperature, top-k, top-p; a seeded stream per reply, so a rerun samples the same
 * replies), under the point's action grammar unless `constrain` is off, each scored with the
 * world's reward functions. With `soft` (SofT-GRPO) each reply first thinks in soft tokens
 * (soft-completer.ts), which the reply keeps for the trainer.
 */
import { actionConstraint, compiledConstraint } from "../../agents/policy/action-grammar.js";
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

export interface Reply {
  readonly ids: readonly number[];
  readonly truncated: boolean;
  readonly scored: ScoredReply;
  /** The soft tokens it thought in first (soft thinking). */
  readonly soft?: SoftTrace;
}

export interface Group {
  readonly point: DecisionPoint;
  /** The rendered prompt (chat template applied) and its tokens. */
  readonly prompt: string;
  readonly promptIds: readonly number[];
  /** The grammar the replies were sampled under (with maxNewTokens tokens each), if any. */
  readonly constraint?: TokenAutomaton;
  readonly replies: readonly Reply[];
  /** Rewards as the advantage sees them (the KL penalty folded in, when it is). */
  rewards: number[];
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
  /** Points left out because prompt + maxNewTokens does not fit the model. */
  readonly tooLong: DecisionPoint[];
  readonly seconds: number;
  readonly generatedTokens: number;
}

/** A point's prompt as the policy is asked it, its token ids, and whether a whole reply still fits the model. */
export function preparePrompt(point: DecisionPoint, tokenizer: PolicyTokenizer, maxNewTokens: number, maxPositions: number): { prompt: string; ids: number[]; fits: boolean } {
  const prompt = tokenizer.applyChatTemplate(point.messages, { addGenerationPrompt: true });
  const ids = tokenizer.encode(prompt);
  return { prompt, ids, fits: ids.length + maxNewTokens <= maxPositions };
}

/** The grammar a point's replies are sampled under (undefined: constrain is off). */
export function pointGrammar(point: DecisionPoint, tokenizer: PolicyTokenizer, c: Pick<GrpoConfig, "constrain" | "maxNewTokens">): TokenAutomaton | undefined {
  if (c.constrain === "off") return undefined;
  const g = point.grammar ? compiledConstraint(tokenizer, point.grammar) : actionConstraint(tokenizer, point.schema, point.options, c.constrain);
  if (g && g.minBudget > c.maxNewTokens)
    throw new Error(`decision point ${point.id}: its action grammar may need up to ${g.minBudget} tokens, more than maxNewTokens (${c.maxNewTokens}); raise it, or sample without the grammar (constrain: off)`);
  return g;
}

export async function rollout(points: readonly DecisionPoint[], o: RolloutOptions): Promise<Rollout> {
  const t0 = performance.now();
  const c = o.config;
  const prepared: { point: DecisionPoint; prompt: string; ids: number[]; index: number }[] = [];
  const tooLong: DecisionPoint[] = [];
  points.forEach((point, index) => {
    const { prompt, ids, fits } = preparePrompt(point, o.tokenizer, c.maxNewTokens + (c.soft ? c.thinkingSteps : 0), o.maxPositions);
    if (!fits) tooLong.push(point);
    else prepared.push({ point, prompt, ids, index });
  });
  const grammars = prepared.map((p) => pointGrammar(p.point, o.tokenizer, c));
  const prompts: number[][] = [];
  const seeds: number[] = [];
  const constraints: (TokenAutomaton | undefined)[] = [];
  prepared.forEach((p, g) => {
    for (let j = 0; j < c.groupSize; j++) {
      prompts.push(p.ids);
      seeds.push(o.seedOf(p.index, j));
      constraints.push(grammars[g]);
    }
  });
  const sampling = { maxNewTokens: c.maxNewTokens, temperature: c.temperature, topK: c.topK, topP: c.topP };
  const grammar = grammars.some((g) => g) ? constraints : undefined;
  const completions: readonly (Completion & { readonly soft?: SoftTrace })[] = !prompts.length
    ? []
    : c.soft
      ? await completeSoft(o.model, o.tokenizer, prompts, c, seeds, grammar)
      : await o.completer.complete(prompts, sampling, seeds, grammar);
  let generatedTokens = 0;
  const groups = await Promise.all(
    prepared.map(async (p, g): Promise<Group> => {
      const comps = completions.slice(g * c.groupSize, (g + 1) * c.groupSize);
      for (const comp of comps) generatedTokens += comp.tokens.length;
      const scored = await scoreGroup(
        p.point,
        comps.map((comp) => ({ text: comp.text, tokens: comp.tokens.length, finish: comp.finishReason, logprob: comp.logprobs.reduce((a, b) => a + b, 0) })),
        c,
      );
      const replies = comps.map((comp, j): Reply => ({
        ids: comp.tokens,
        truncated: comp.finishReason === "length",
        scored: scored[j]!,
        ...(comp.soft ? { soft: comp.soft } : {}),
      }));
      return { point: p.point, prompt: p.prompt, promptIds: p.ids, ...(grammars[g] ? { constraint: grammars[g] } : {}), replies, rewards: replies.map((r) => r.scored.reward) };
    }),
  );
  return { groups, tooLong, seconds: (performance.now() - t0) / 1000, generatedTokens };
}

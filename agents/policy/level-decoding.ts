/**
 * Per-level generation (HumanLM's): an answer whose form has levels (usersim's hierarchy: each
 * state, then the response) is written one level at a time. Level k is asked by its own prompt,
 * after the texts of the levels written before it, and decoded under its own grammar (the level's
 * anchored pattern) within its own budget (its `max_tokens`, raised to what the grammar needs to
 * finish, as the policy agent raises max_new_tokens). The answer is the levels' texts joined by the
 * form's separator, a text of the form's whole pattern.
 *
 * Rows are decoded together, a level at a time (one completer call per level and budget), each row
 * and level from its own seed. Each level's completion is kept with the prompt, grammar and budget
 * it was sampled under: the trainer scores a reply's tokens under exactly those masks.
 */
import type { Completion, Completer } from "../../models/sampling.js";
import type { TokenAutomaton } from "../../models/grammar/index.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import { levelPromptText, type AnswerLevels } from "../../worlds/question/world.js";
import { turnMessages } from "./action.js";
import { answerFormSpec, compiledConstraint } from "./action-grammar.js";
import type { ConstrainMode } from "./options.js";

/** One answer to write level by level. */
export interface LevelRequest {
  readonly levels: AnswerLevels;
  /** A system message before each level's prompt (the agent's `system`). */
  readonly system?: string;
}

/** One level of an answer as it was sampled. */
export interface LevelSegment {
  readonly name: string;
  /** The level's prompt, chat template applied, and its tokens. */
  readonly prompt: string;
  readonly promptIds: readonly number[];
  readonly completion: Completion;
  /** The grammar it was sampled under (none when constrain is off), with `budget` new tokens. */
  readonly constraint?: TokenAutomaton;
  readonly budget: number;
}

export interface LevelAnswer {
  /** The levels' texts joined by the form's separator. */
  readonly text: string;
  readonly segments: readonly LevelSegment[];
}

export interface LevelSampling {
  readonly temperature: number;
  readonly topK?: number;
  readonly topP?: number;
}

export interface LevelDecodingOptions {
  readonly constrain: ConstrainMode;
  /** Seed of row `row`'s level `level`. */
  readonly seedOf: (row: number, level: number) => number;
  /** The model's context: a level whose prompt and budget do not fit is refused, naming it. */
  readonly maxPositions?: number;
}

/** A level's grammar (undefined when constrain is off) and budget. */
export function levelDecoding(tokenizer: PolicyTokenizer, levels: AnswerLevels, index: number, constrain: ConstrainMode): { constraint?: TokenAutomaton; budget: number } {
  const level = levels.items[index]!;
  if (constrain === "off") return { budget: level.maxTokens };
  const constraint = compiledConstraint(tokenizer, answerFormSpec({ type: "pattern", pattern: level.pattern }));
  return { constraint, budget: Math.max(level.maxTokens, constraint.minBudget) };
}

export async function decodeLevels(completer: Completer, tokenizer: PolicyTokenizer, requests: readonly LevelRequest[], sampling: LevelSampling, o: LevelDecodingOptions): Promise<LevelAnswer[]> {
  const written = requests.map(() => [] as string[]);
  const segments = requests.map(() => [] as LevelSegment[]);
  const depth = Math.max(0, ...requests.map((r) => r.levels.items.length));
  for (let k = 0; k < depth; k++) {
    const rows: { row: number; prompt: string; ids: number[]; constraint?: TokenAutomaton; budget: number }[] = [];
    requests.forEach((r, row) => {
      if (k >= r.levels.items.length) return;
      const prompt = tokenizer.applyChatTemplate(turnMessages(levelPromptText(r.levels, k, written[row]!), r.system), { addGenerationPrompt: true });
      const ids = tokenizer.encode(prompt);
      const { constraint, budget } = levelDecoding(tokenizer, r.levels, k, o.constrain);
      if (o.maxPositions !== undefined && ids.length + budget > o.maxPositions)
        throw new Error(`level "${r.levels.items[k]!.name}": its prompt (${ids.length} tokens, after ${k} levels) and its budget (${budget} tokens) exceed the model's context (${o.maxPositions}); lower the level's max_tokens in the hierarchy, or use a model with a longer context`);
      rows.push({ row, prompt, ids, ...(constraint ? { constraint } : {}), budget });
    });
    // One call per budget (the levels of one hierarchy share theirs), one model decoding at a time.
    for (const budget of new Set(rows.map((r) => r.budget))) {
      const picked = rows.filter((r) => r.budget === budget);
      const constrained = picked.some((r) => r.constraint);
      const done = await completer.complete(
        picked.map((r) => r.ids),
        { maxNewTokens: budget, temperature: sampling.temperature, topK: sampling.topK ?? 0, topP: sampling.topP ?? 1 },
        picked.map((r) => o.seedOf(r.row, k)),
        constrained ? picked.map((r) => r.constraint) : undefined,
      );
      picked.forEach((r, i) => {
        const completion = done[i]!;
        written[r.row]!.push(completion.text);
        segments[r.row]!.push({ name: requests[r.row]!.levels.items[k]!.name, prompt: r.prompt, promptIds: r.ids, completion, ...(r.constraint ? { constraint: r.constraint } : {}), budget });
      });
    }
  }
  return requests.map((r, row) => ({ text: written[row]!.join(r.levels.separator), segments: segments[row]! }));
}

/**
 * A benchmark question as a world: one respondent observes the prompt (story and question) and
 * answers; the reward is the official scorer's verdict. Running questions through the game loop
 * gives them the same deadlines, validation, fallbacks and logs as any other world, and lets a
 * person take the respondent's seat in a room.
 */
import { z } from "zod";
import type { Observation, StepContext, StepResult, World } from "../core/world.js";

export interface QuestionTask {
  readonly benchmark: string;
  readonly itemId: string;
  readonly mode: "vanilla" | "simulation";
  /** The story or conversation, as the benchmark gives it. */
  readonly story: string;
  readonly question: string;
  /** Multiple-choice options, when the benchmark has them. */
  readonly choices?: readonly string[];
  /** Plausible answers (for the random baseline and a person's answer form). */
  readonly candidates?: readonly string[];
  /**
   * Every answer the scorer can count right is one of `candidates` (ToMi's containers), rather
   * than a sample of them (usersim's random replies): a person's answer outside them is refused.
   */
  readonly answerInCandidates?: boolean;
  /** The full text prompt a language model is given. */
  readonly prompt: string;
  /**
   * The grammar the answer is written in, where the benchmark asks for one of its own (AnswerForm);
   * absent: one free line of text.
   */
  readonly answerForm?: AnswerForm;
}

/**
 * A question's answer written in a grammar of its own. The world's action stays the free
 * `{answer}` (its text): a policy samples the answer under this grammar, the one the trainers
 * sample the same question under, and a reply outside it still reaches the benchmark's judge
 * (which scores it) instead of being replaced by the loop's fallback.
 *
 * - `json`: the answer is itself an action, written as JSON of this schema (the social world's
 *   reaction on the asked item);
 * - `pattern`: the answer's text matches this anchored pattern (`^...$`; its only lookaheads are
 *   length bounds `(?=C{m,n}L)` before a group, which the grammar compiler counts: usersim's
 *   tagged reply, `replyTextPattern`, bounds each state so).
 */
export type AnswerForm =
  | { readonly type: "json"; readonly schema: Readonly<Record<string, unknown>> }
  | { readonly type: "pattern"; readonly pattern: string; readonly levels?: AnswerLevels };

/**
 * An answer that may also be written level by level (HumanLM's per-level generation of usersim's
 * hierarchy): each level asked by a prompt of its own, after the levels written before it, and
 * written under its own anchored pattern within its own token budget. The levels' texts joined by
 * `separator` are a text of the form's whole pattern.
 */
export interface AnswerLevels {
  readonly items: readonly AnswerLevel[];
  /** What joins two levels' texts in the whole answer. */
  readonly separator: string;
  /** Around the levels written so far (joined by `separator`) in a later level's prompt. */
  readonly writtenOpen: string;
  readonly writtenClose: string;
  /** After every level's prompt: what the respondent sees (usersim: the profile and the thread). */
  readonly context: string;
}

export interface AnswerLevel {
  /** The level's name (usersim: its tag). */
  readonly name: string;
  /** The level's text, as one anchored pattern (`^...$`). */
  readonly pattern: string;
  /** Its generation budget in tokens (the hierarchy's `max_tokens`). */
  readonly maxTokens: number;
  /** Its prompt: `before`, then the levels written so far (when there are any), then `after`. */
  readonly before: string;
  readonly after: string;
}

/** The prompt of level `index`, after the texts of the levels written before it (all of them, or none to size the prompt alone). */
export function levelPromptText(levels: AnswerLevels, index: number, written: readonly string[]): string {
  const level = levels.items[index];
  if (!level) throw new Error(`no level ${index} (the answer has ${levels.items.length})`);
  if (written.length !== index && written.length !== 0) throw new Error(`level ${index} comes after ${index} levels, not ${written.length}`);
  const before = written.length ? `${levels.writtenOpen}${written.join(levels.separator)}${levels.writtenClose}` : "";
  return `${level.before}${before}${level.after}${levels.context}`;
}

/** Observation data that is a benchmark question (the question world's respondent sees one). */
export function questionTaskOf(data: unknown): QuestionTask | undefined {
  const t = data as Partial<QuestionTask> | undefined;
  return t &&
    typeof t.benchmark === "string" &&
    typeof t.prompt === "string" &&
    typeof t.story === "string" &&
    typeof t.question === "string" &&
    (t.mode === "vanilla" || t.mode === "simulation")
    ? (t as QuestionTask)
    : undefined;
}

export const AnswerSchema = z.object({
  answer: z.string().max(4000).describe("The answer to the question."),
});
export type Answer = z.infer<typeof AnswerSchema>;

const patterned = new Map<string, z.ZodType<Answer>>();

/** The answer schema a policy writes a task's answer under: the free answer, held to the task's pattern when its answer has one. */
export function answerGrammarSchema(task: QuestionTask): z.ZodType<Answer> {
  if (task.answerForm?.type !== "pattern") return AnswerSchema;
  const pattern = task.answerForm.pattern;
  let s = patterned.get(pattern);
  if (!s) patterned.set(pattern, (s = z.object({ answer: z.string().max(4000).regex(new RegExp(pattern)).describe("The answer to the question.") })));
  return s;
}

export interface QuestionState {
  readonly task: QuestionTask;
  readonly respondent: string;
  readonly answer?: string;
  readonly done: boolean;
}

export class QuestionWorld implements World<QuestionState, Answer> {
  readonly name = "question";

  constructor(private readonly score: (task: QuestionTask, answer: string) => number) {}

  static initial(task: QuestionTask, respondent = "respondent"): QuestionState {
    return { task, respondent, done: false };
  }

  agents(state: QuestionState): readonly string[] {
    return [state.respondent];
  }

  actionSchema(): z.ZodType<Answer> {
    return AnswerSchema;
  }

  noop(): Answer {
    return { answer: "" };
  }

  isNoop(action: Answer): boolean {
    return action.answer.trim() === "";
  }

  options(state: QuestionState): readonly Answer[] | undefined {
    const c = state.task.candidates ?? state.task.choices;
    return c ? c.map((answer) => ({ answer })) : undefined;
  }

  observe(state: QuestionState): Observation {
    if (state.done) return { text: "" };
    return { text: state.task.prompt, data: state.task };
  }

  describe(state: QuestionState): string {
    if (!state.done) return `${state.task.question}`;
    return state.answer ? `${state.respondent} answered: ${state.answer}` : `${state.respondent} did not answer.`;
  }

  renderAction(_state: QuestionState, _agent: string, action: Answer): string {
    return `answers: ${action.answer}`;
  }

  isTerminal(state: QuestionState): boolean {
    return state.done;
  }

  step(state: QuestionState, actions: ReadonlyMap<string, Answer>, _ctx: StepContext<never>): StepResult<QuestionState> {
    const answer = actions.get(state.respondent)?.answer.trim() ?? "";
    const reward = answer === "" ? 0 : this.score(state.task, answer);
    const { task, respondent } = state;
    return {
      // Built field by field: a run steps this world once per question (a spread of the state took
      // a twentieth of a ToMi val run).
      state: answer ? { task, respondent, answer, done: true } : { task, respondent, done: true },
      events: [{ text: `${respondent} answered: ${answer || "(nothing)"}`, observers: [respondent], actor: respondent }],
      rewards: { [respondent]: reward },
    };
  }
}

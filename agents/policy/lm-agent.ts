/**
 * A language-model policy as a game-loop agent: the observation becomes the user's message (after
 * an optional system message), rendered with the checkpoint's chat template; the model's reply is
 * read back as an action (parseAction). The exact prompt and raw reply go into the episode log,
 * so logged episodes can train the next policy. Sampling is seeded per turn (and episode), and held to the
 * action's grammar (action-grammar.ts: `constrain=schema`, the default; `options`; `off`), so the
 * reply always parses as a valid action. A question over a compact socialized context (simulation
 * mode) is answered by citing one of the context's lines; the answer is the cited line's value.
 * With `context=self` the policy writes the context itself (who saw the asked object where), then
 * the line it answers from; the answer is again the reply's last line, and the whole reply, trace
 * included, is the logged raw reply.
 * With `soft_thinking=K` the reply comes after K soft tokens (a SofT-GRPO policy evaluated as it
 * was trained); what they read as goes into the log.
 * A benchmark question (the question world's turn: a room's quiz, `bench`) is answered at
 * `answer_temperature` where it is given, a world's turn at `temperature`.
 */
import { AgentFailure, type Agent, type AgentReply, type AgentTurn } from "../../worlds/core/agent.js";
import { hashString } from "../../worlds/core/rng.js";
import { parseAction, turnMessages } from "./action.js";
import { actionSpec, choiceBudget, citationSpec, compiledConstraint, writtenSpec } from "./action-grammar.js";
import { askedQuestion, writtenContextRefusal } from "./question-prompt.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import { questionTaskOf } from "../../worlds/question/world.js";
import type { Completer } from "../../models/sampling.js";
import type { AnswerLevels } from "../../worlds/question/world.js";
import { decodeLevels } from "./level-decoding.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import { softThinkingOf, type LmAgentOptions } from "./options.js";

export class LanguageModelAgent implements Agent {
  constructor(
    readonly id: string,
    private readonly backend: () => Promise<{ completer: Completer; tokenizer: PolicyTokenizer }>,
    private readonly options: LmAgentOptions,
  ) {}

  async refusal(world: string, mode: "vanilla" | "simulation"): Promise<string | undefined> {
    return mode === "simulation" ? writtenContextRefusal(world, this.options.context) : undefined;
  }

  async act(turn: AgentTurn): Promise<AgentReply> {
    const { completer, tokenizer } = await this.backend();
    // A benchmark question in simulation mode is asked over the story's socialized context.
    const task = questionTaskOf(turn.observation.data);
    const asked = task?.mode === "simulation" ? await askedQuestion(task, this.options.context) : undefined;
    const text = asked?.text ?? turn.observation.text;
    const messages = turnMessages(text, this.options.system);
    const prompt = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
    const item = (turn.observation.data as { itemId?: string } | undefined)?.itemId ?? "";
    // The episode's seed is in it: the turns of a looping room's episodes share world, agent and
    // timestep, and without it every episode would draw the same numbers.
    const seed = hashString(`${this.options.seed}|${turn.episode ?? ""}|${turn.world}|${turn.agent}|${turn.timestep}|${item}`);
    const form = task?.answerForm;
    if (this.options.generation === "per-level" && form?.type === "pattern" && form.levels) return this.actPerLevel(turn, form.levels, completer, tokenizer, seed);
    // The grammar: over a compact context the reply cites one of its lines (the answer is that line's
    // value); a question whose answer has a form of its own (the social world's JSON reaction,
    // usersim's tagged reply) is answered in that form; anything else in the action's.
    // With a context to write, the reply is its trace and then the answer line (writtenSpec).
    const spec = asked?.written
      ? writtenSpec(asked.written, this.options.constrain)
      : asked?.cited
      ? citationSpec(asked.cited.lines, this.options.constrain)
      : actionSpec(turn.actionSchema, turn.options, this.options.constrain, task?.answerForm);
    const constraint = spec && compiledConstraint(tokenizer, spec);
    // A budget below what the grammar may need to finish an action is raised to it: a valid action
    // beats a cut one; and for a choice (options, a cited line), to what the longest choice needs,
    // so that the budget never decides which is taken (the decoder drops what cannot finish in time).
    const maxNewTokens = Math.max(this.options.max_new_tokens, constraint?.minBudget ?? 0, choiceBudget(spec));
    const soft = softThinkingOf(this.options);
    const temperature = task ? (this.options.answer_temperature ?? this.options.temperature) : this.options.temperature;
    const [c] = await completer.complete(
      [prompt],
      { maxNewTokens, temperature, topK: this.options.top_k, topP: this.options.top_p, ...(soft ? { softThinking: soft } : {}) },
      [seed],
      constraint ? [constraint] : undefined,
    );
    const info = {
      promptTokens: c!.promptTokens,
      completionTokens: c!.tokens.length,
      logprob: c!.logprobs.reduce((a, b) => a + b, 0),
      finishReason: c!.finishReason,
      ...(c!.thinking !== undefined ? { thinking: c!.thinking } : {}),
      ...(constraint ? { constrained: this.options.constrain } : {}),
      // The context was the policy's to write: bench scores the reply's trace (benchmarks/written-fidelity.ts).
      ...(asked?.written ? { context: this.options.context } : {}),
    };
    // A reply that is no action still goes into the log with its prompt (the loop logs an
    // AgentFailure's partial reply beside the fallback's action): a policy's mistakes are data too.
    let action: unknown;
    try {
      action = parseAction(asked?.cited || asked?.written ? citedAnswer(c!.text) : c!.text, turn.actionSchema);
    } catch (err) {
      throw new AgentFailure((err as Error).message, { prompt, raw: c!.text, info });
    }
    return { action, prompt, raw: c!.text, info };
  }

  /**
   * HumanLM's per-level generation: each level by a request of its own (level-decoding.ts), each
   * level's seed derived from the turn's. The log keeps every level's prompt and what it wrote;
   * the turn's prompt is the first level's.
   */
  private async actPerLevel(turn: AgentTurn, levels: AnswerLevels, completer: Completer, tokenizer: PolicyTokenizer, seed: number): Promise<AgentReply> {
    const temperature = this.options.answer_temperature ?? this.options.temperature;
    const [answer] = await decodeLevels(completer, tokenizer, [{ levels, ...(this.options.system !== undefined ? { system: this.options.system } : {}) }], { temperature, topK: this.options.top_k, topP: this.options.top_p }, {
      constrain: this.options.constrain,
      seedOf: (_row, level) => (level === 0 ? seed : hashString(`${seed}|level ${level}`)),
    });
    const segs = answer!.segments;
    const info = {
      generation: "per-level",
      promptTokens: segs.reduce((a, s) => a + s.completion.promptTokens, 0),
      completionTokens: segs.reduce((a, s) => a + s.completion.tokens.length, 0),
      logprob: segs.reduce((a, s) => a + s.completion.logprobs.reduce((x, y) => x + y, 0), 0),
      finishReason: segs.some((s) => s.completion.finishReason === "length") ? "length" : segs[segs.length - 1]!.completion.finishReason,
      levels: segs.map((s) => ({
        name: s.name,
        prompt: s.prompt,
        raw: s.completion.text,
        promptTokens: s.completion.promptTokens,
        completionTokens: s.completion.tokens.length,
        budget: s.budget,
        finishReason: s.completion.finishReason,
      })),
      ...(segs.some((s) => s.constraint) ? { constrained: this.options.constrain } : {}),
    };
    const prompt = segs[0]?.prompt ?? "";
    try {
      return { action: parseAction(answer!.text, turn.actionSchema), prompt, raw: answer!.text, info };
    } catch (err) {
      throw new AgentFailure((err as Error).message, { prompt, raw: answer!.text, info });
    }
  }
}

/**
 * A language-model policy as a game-loop agent: the observation becomes the user's message (after
 * an optional system message), rendered with the checkpoint's chat template; the model's reply is
 * read back as an action (parseAction). The exact prompt and raw reply go into the episode log,
 * so logged episodes can train the next policy. Sampling is seeded per turn, and held to the
 * action's grammar (action-grammar.ts: `constrain=schema`, the default; `options`; `off`), so the
 * reply always parses as a valid action. A benchmark question (the question world's turn: a room's
 * quiz, `bench`) is answered at `answer_temperature` where it is given, a world's turn at `temperature`.
 */
import { AgentFailure, type Agent, type AgentReply, type AgentTurn } from "../../worlds/core/agent.js";
import { hashString } from "../../worlds/core/rng.js";
import { parseAction, turnMessages } from "./action.js";
import { actionConstraint, actionSpec, choiceBudget } from "./action-grammar.js";
import { questionText } from "./question-prompt.js";
import { questionTaskOf } from "../../worlds/question/world.js";
import type { Completer } from "../../models/sampling.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import type { LmAgentOptions } from "./options.js";

export class LanguageModelAgent implements Agent {
  constructor(
    readonly id: string,
    private readonly backend: () => Promise<{ completer: Completer; tokenizer: PolicyTokenizer }>,
    private readonly options: LmAgentOptions,
  ) {}

  async act(turn: AgentTurn): Promise<AgentReply> {
    const { completer, tokenizer } = await this.backend();
    // A benchmark question in simulation mode is asked over the story's socialized context.
    const task = questionTaskOf(turn.observation.data);
    const text = task?.mode === "simulation" ? await questionText(task) : turn.observation.text;
    const messages = turnMessages(text, this.options.system);
    const prompt = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
    const item = (turn.observation.data as { itemId?: string } | undefined)?.itemId ?? "";
    const seed = hashString(`${this.options.seed}|${turn.world}|${turn.agent}|${turn.timestep}|${item}`);
    const constraint = actionConstraint(tokenizer, turn.actionSchema, turn.options, this.options.constrain);
    // A budget below what the grammar may need to finish an action is raised to it: a valid action
    // beats a cut one; and under `options`, to what the longest option needs, so that the budget
    // never decides which action is taken (the decoder drops what cannot finish in time).
    const options = this.options.constrain === "options" ? choiceBudget(actionSpec(turn.actionSchema, turn.options, "options")) : 0;
    const maxNewTokens = Math.max(this.options.max_new_tokens, constraint?.minBudget ?? 0, options);
    const [c] = await completer.complete(
      [prompt],
      { maxNewTokens, temperature: task ? (this.options.answer_temperature ?? this.options.temperature) : this.options.temperature, topK: this.options.top_k, topP: this.options.top_p },
      [seed],
      constraint ? [constraint] : undefined,
    );
    const info = {
      promptTokens: c!.promptTokens,
      completionTokens: c!.tokens.length,
      logprob: c!.logprobs.reduce((a, b) => a + b, 0),
      finishReason: c!.finishReason,
      ...(constraint ? { constrained: this.options.constrain } : {}),
    };
    // A reply that is no action still goes into the log with its prompt (the loop logs an
    // AgentFailure's partial reply beside the fallback's action): a policy's mistakes are data too.
    let action: unknown;
    try {
      action = parseAction(c!.text, turn.actionSchema);
    } catch (err) {
      throw new AgentFailure((err as Error).message, { prompt, raw: c!.text, info });
    }
    return { action, prompt, raw: c!.text, info };
  }
}

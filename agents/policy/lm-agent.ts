/**
 * A language-model policy as a game-loop agent: the observation becomes the user's message (after
 * an optional system message), rendered with the checkpoint's chat template; the model's reply is
 * read back as an action (parseAction). The exact prompt and raw reply go into the episode log,
 * so logged episodes can train the next policy. Sampling is seeded per turn, and held to the
 * action's grammar (action-grammar.ts: `constrain=schema`, the default; `options`; `off`), so the
 * reply always parses as a valid action.
 */
import { AgentSpecError } from "../agent-spec-error.js";
import { z } from "zod";
import type { Agent, AgentReply, AgentTurn } from "../agent.js";
import { hashString } from "../../worlds/core/rng.js";
import { parseAction, turnMessages } from "./action.js";
import { actionConstraint, CONSTRAIN_MODES } from "./action-grammar.js";
import { questionText } from "./question-prompt.js";
import { questionTaskOf } from "../../worlds/question/world.js";
import type { Completer } from "./sampling.js";
import type { PolicyTokenizer } from "./tokenizer.js";

export const LmAgentOptionsSchema = z.object({
  temperature: z.coerce.number().nonnegative().default(0),
  top_k: z.coerce.number().int().nonnegative().default(0),
  top_p: z.coerce.number().positive().max(1).default(1),
  max_new_tokens: z.coerce.number().int().positive().default(256),
  seed: z.coerce.number().int().nonnegative().default(0),
  system: z.string().optional(),
  /** The grammar replies are sampled under (action-grammar.ts). */
  constrain: z.enum(CONSTRAIN_MODES).default("schema"),
  /** onnx agents: onnxruntime intra-op threads. */
  threads: z.coerce.number().int().positive().optional(),
});
export type LmAgentOptions = z.infer<typeof LmAgentOptionsSchema>;

/** `DIR` or `DIR?temperature=0.7&max_new_tokens=64&seed=3&system=...` */
export function parseAgentTarget(spec: string, target: string): { dir: string; options: LmAgentOptions } {
  const q = target.indexOf("?");
  const dir = q < 0 ? target : target.slice(0, q);
  if (!dir) throw new AgentSpecError(`${spec}: the agent needs a checkpoint folder`);
  const params = Object.fromEntries(new URLSearchParams(q < 0 ? "" : target.slice(q + 1)));
  const r = LmAgentOptionsSchema.strict().safeParse(params);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new AgentSpecError(`${spec}: ${issue.path.join(".") || "option"}: ${issue.message}`);
  }
  return { dir, options: r.data };
}

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
    // A budget below what the grammar may need to finish an action is raised to it: a valid action beats a cut one.
    const maxNewTokens = Math.max(this.options.max_new_tokens, constraint?.minBudget ?? 0);
    const [c] = await completer.complete(
      [prompt],
      { maxNewTokens, temperature: this.options.temperature, topK: this.options.top_k, topP: this.options.top_p },
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
    return { action: parseAction(c!.text, turn.actionSchema), prompt, raw: c!.text, info };
  }
}

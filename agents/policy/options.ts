/**
 * The `policy:DIR` and `onnx:DIR` agent specs: a checkpoint folder, then sampling options as a
 * query string (`policy:DIR?temperature=0.7&max_new_tokens=64&seed=3&system=...`, and
 * `soft_thinking=K&tau=X&soft_top_p=P` to think in soft tokens before replying). Read without
 * loading anything, so that a room's options are checked before its models load.
 */
import { z } from "zod";
import { AgentSpecError } from "../agent-spec-error.js";
import type { TraceOrder } from "../../worlds/core/written-context.js";

/** The grammar a reply is sampled under (action-grammar.ts): the action's schema, one of the world's valid actions, or none. */
export const CONSTRAIN_MODES = ["schema", "options", "off"] as const;
export type ConstrainMode = (typeof CONSTRAIN_MODES)[number];

/**
 * Who writes the socialized context a question is answered from in simulation mode: the world
 * model (`world`: the policy reads it and cites a line), or the policy itself (`self`: it reads
 * the story, writes the world's written context, then answers; question-prompt.ts), its trace
 * in the story's order or, `self-latest`, latest first (worlds/core/written-context.ts's TraceOrder).
 */
export const CONTEXT_SOURCES = ["world", "self", "self-latest"] as const;
export type ContextSource = (typeof CONTEXT_SOURCES)[number];

const WRITTEN_ORDERS: Readonly<Partial<Record<ContextSource, TraceOrder>>> = { self: "story", "self-latest": "latest" };

/** The order the policy writes its trace in where it writes the context itself (undefined: the world model writes it). */
export function writtenOrder(source: ContextSource): TraceOrder | undefined {
  return WRITTEN_ORDERS[source];
}

/** Whether `v` (a recorded run's or a reply's `context`) names a source where the policy writes the context. */
export function isWrittenSource(v: unknown): v is ContextSource {
  return typeof v === "string" && Object.hasOwn(WRITTEN_ORDERS, v);
}

/** How a leveled answer is generated: in one piece, or level by level (HumanLM's). */
export const GENERATION_MODES = ["joint", "per-level"] as const;
export type GenerationMode = (typeof GENERATION_MODES)[number];

export const LmAgentOptionsSchema = z.object({
  temperature: z.coerce.number().nonnegative().default(0),
  /**
   * The temperature of answers to benchmark questions (a room's quiz, `bench`); absent: `temperature`.
   * A self-play seat samples its actions (varied stories: entries, moves, exits, false beliefs)
   * and answers its quiz greedily (what it knows, not how a sample fell): `temperature=1&answer_temperature=0`.
   */
  answer_temperature: z.coerce.number().nonnegative().optional(),
  top_k: z.coerce.number().int().nonnegative().default(0),
  top_p: z.coerce.number().positive().max(1).default(1),
  max_new_tokens: z.coerce.number().int().positive().default(256),
  seed: z.coerce.number().int().nonnegative().default(0),
  system: z.string().optional(),
  /** Who writes a simulation-mode question's context: the world model or the policy (CONTEXT_SOURCES). */
  context: z.enum(CONTEXT_SOURCES).default("world"),
  /** The grammar replies are sampled under (action-grammar.ts). */
  constrain: z.enum(CONSTRAIN_MODES).default("schema"),
  /**
   * How an answer whose form has levels (usersim's hierarchy) is written: `joint`, the whole answer
   * in one generation of max_new_tokens; `per-level`, HumanLM's: one generation per level, each
   * with its own prompt, grammar and budget (level-decoding.ts). Other turns are joint either way.
   */
  generation: z.enum(GENERATION_MODES).default("joint"),
  /** onnx agents: onnxruntime intra-op threads. */
  threads: z.coerce.number().int().positive().optional(),
  /**
   * Soft thinking (SofT-GRPO, docs/soft-grpo.md): K soft tokens before the reply, each the
   * softmax(q' / tau) mixture of embeddings over the top soft_top_p support, Gumbel-noised from
   * the turn's seeded stream: a SofT-GRPO policy evaluated as it was trained. Native policies only.
   */
  soft_thinking: z.coerce.number().int().min(1).max(4096).optional(),
  tau: z.coerce.number().positive().optional(),
  soft_top_p: z.coerce.number().positive().max(1).optional(),
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
  const o = r.data;
  if (o.generation === "per-level" && o.soft_thinking !== undefined) throw new AgentSpecError(`${spec}: soft_thinking goes with generation=joint (a per-level answer is written without soft tokens)`);
  if (o.soft_thinking === undefined) {
    const stray = (["tau", "soft_top_p"] as const).find((k) => o[k] !== undefined);
    if (stray) throw new AgentSpecError(`${spec}: ${stray} is a setting of soft thinking: add soft_thinking=K`);
  } else if (params.temperature === undefined) {
    // Soft tokens are drawn at the sampling temperature; SofT-GRPO's rollouts draw them at 1.
    o.temperature = 1;
  } else if (o.temperature === 0) {
    throw new AgentSpecError(`${spec}: soft_thinking needs a positive temperature (its soft tokens are drawn at it; SofT-GRPO trains at 1)`);
  }
  return { dir, options: o };
}

/** The native engine's soft-thinking settings of an agent's options (undefined: none). */
export function softThinkingOf(o: LmAgentOptions): { steps: number; tau: number; topP: number } | undefined {
  return o.soft_thinking === undefined ? undefined : { steps: o.soft_thinking, tau: o.tau ?? 1, topP: o.soft_top_p ?? 0.9 };
}

/**
 * Sampling settings and the completion of a prompt, shared by the native engine and the ONNX
 * runner so that agents and trainers see one interface.
 */
import { z } from "zod";
import type { TokenAutomaton } from "./grammar/index.js";

export const SamplingSchema = z.object({
  maxNewTokens: z.number().int().positive().max(1 << 20).default(128),
  /** 0: greedy. */
  temperature: z.number().nonnegative().default(1),
  /** 0: no limit. */
  topK: z.number().int().nonnegative().default(0),
  /** 1: no limit. */
  topP: z.number().positive().max(1).default(1),
  /** Generation stops after any of these strings (the text is cut before it). */
  stop: z.array(z.string().min(1)).default([]),
  /** Extra token ids that end generation (besides the checkpoint's end-of-turn tokens). */
  stopTokenIds: z.array(z.number().int().nonnegative()).default([]),
  seed: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).default(0),
  /**
   * Soft thinking (SofT-GRPO): `steps` soft tokens before the reply (native/src/generation.h),
   * each the softmax(q' / tau) mixture over its top-`topP` support; needs a positive temperature.
   * The native engine's; other completers refuse it.
   */
  softThinking: z.object({ steps: z.number().int().min(1).max(4096), tau: z.number().positive().default(1), topP: z.number().positive().max(1).default(0.9) }).strict().optional(),
});
export type Sampling = z.infer<typeof SamplingSchema>;
export type SamplingInput = z.input<typeof SamplingSchema>;

export type CompletionFinish = "stop_token" | "stop_string" | "length";

export interface Completion {
  /** The generated text, without the stop token or stop string. */
  readonly text: string;
  /** Generated token ids, including the one that ended generation (stop token or the one completing a stop string). */
  readonly tokens: readonly number[];
  /**
   * log softmax(logits / temperature)[token] of each generated token, over the whole vocabulary;
   * under a grammar, over the tokens it allowed at that step (the masked distribution sampled from).
   */
  readonly logprobs: readonly number[];
  readonly finishReason: CompletionFinish;
  readonly promptTokens: number;
  /** With soft thinking: each soft token's most weighted token, decoded (what the thinking reads as). */
  readonly thinking?: string;
}

/** Something that completes prompts (the native engine, an ONNX session). */
export interface Completer {
  readonly id: string;
  /**
   * Completes each prompt (text, rendered with the chat template already, or token ids).
   * `seeds` (one per prompt) overrides `sampling.seed + i`. `constraints` (one per prompt, or
   * undefined) holds each completion to a grammar compiled for this completer's tokenizer: the
   * text is a complete text of the grammar (within maxNewTokens) unless a stop string cuts it.
   */
  complete(prompts: readonly (string | readonly number[])[], sampling: SamplingInput, seeds?: readonly number[], constraints?: readonly (TokenAutomaton | undefined)[]): Promise<Completion[]>;
}

/**
 * Where a stop string first appears in the text decoded from `tokens`: the number of tokens to
 * keep (through the one that completes it) and the text before it; undefined if none appears.
 */
export function cutAtStopString(tokens: readonly number[], decode: (ids: readonly number[]) => string, stops: readonly string[]): { keep: number; text: string } | undefined {
  if (stops.length === 0) return undefined;
  const full = decode(tokens);
  let at = -1;
  for (const s of stops) {
    const i = full.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) return undefined;
  // The shortest prefix of tokens whose text already contains a stop string.
  let keep = tokens.length;
  for (let k = 1; k <= tokens.length; k++) {
    const t = decode(tokens.slice(0, k));
    if (stops.some((s) => t.includes(s))) {
      keep = k;
      break;
    }
  }
  return { keep, text: full.slice(0, at) };
}

/**
 * A chat request's sampling settings as the engine takes them, once the prompt's length is known:
 * the completion's budget must fit the model's context with the prompt, and a prompt that leaves
 * no room is refused as OpenAI refuses it (context_length_exceeded).
 */
import { randomInt } from "node:crypto";
import { OpenAiError } from "./errors.js";
import type { GenerateParams } from "./worker-protocol.js";

/** Without max_tokens a completion may use the rest of the context, up to this many tokens. */
export const DEFAULT_MAX_TOKENS = 4096;

export function samplingOf(params: GenerateParams, promptTokens: number, context: number) {
  const room = context - promptTokens;
  const limit = `This model's maximum context length is ${context} tokens`;
  if (room <= 0) throw new OpenAiError(400, `${limit}. However, your messages resulted in ${promptTokens} tokens.`, { param: "messages", code: "context_length_exceeded" });
  const asked = params.maxTokens ?? undefined;
  if (asked !== undefined && asked > room)
    throw new OpenAiError(400, `${limit}. However, you requested ${promptTokens + asked} tokens (${promptTokens} in the messages, ${asked} in the completion).`, {
      param: params.maxTokensParam,
      code: "context_length_exceeded",
    });
  const n = params.n;
  const seed = params.seed ?? randomInt(0, 2 ** 47);
  const topP = params.topP ?? 1;
  return {
    n,
    seeds: Array.from({ length: n }, (_, i) => seed + i),
    maxTokens: asked ?? Math.min(room, DEFAULT_MAX_TOKENS),
    // top_p 0 keeps only the most likely token: greedy.
    temperature: topP === 0 ? 0 : (params.temperature ?? 1),
    topP: topP === 0 ? 1 : topP,
    topK: Math.max(0, params.topK ?? 0),
    stop: params.stop,
    logprobs: params.logprobs,
  };
}

/**
 * Soft-thinking rollouts (SofT-GRPO): every prompt in one KV-cached batch of the native engine,
 * each sequence first thinking in `thinkingSteps` soft tokens (the top-p support of
 * softmax(logits / temperature), Gumbel-noised; the next input the softmax(q' / tau) mixture of
 * embeddings; native/src/generation.h), then answering in tokens under its grammar, from a seeded
 * stream per reply. The soft tokens come back as the engine recorded them (support, noised logits,
 * weights): the trainer replays them as the same inputs and scores them with the Gumbel head.
 */
import type { TokenAutomaton } from "../../models/grammar/index.js";
import type { PolicyModel } from "../../models/model.js";
import { loadNative, nativeConstraint, type SoftTrace } from "../../models/native.js";
import type { Completion } from "../../models/sampling.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import type { GrpoConfig } from "./config.js";

export interface SoftCompletion extends Completion {
  readonly soft: SoftTrace;
}

export async function completeSoft(
  model: PolicyModel,
  tokenizer: PolicyTokenizer,
  prompts: readonly (readonly number[])[],
  c: Pick<GrpoConfig, "maxNewTokens" | "temperature" | "topK" | "topP" | "thinkingSteps" | "tau">,
  seeds: readonly number[],
  constraints?: readonly (TokenAutomaton | undefined)[],
): Promise<SoftCompletion[]> {
  if (prompts.length === 0) return [];
  const { Generation } = loadNative();
  const gen = new Generation(model.native, prompts.map((p) => Int32Array.from(p)), {
    maxNewTokens: c.maxNewTokens,
    temperature: c.temperature,
    topK: c.topK,
    topP: c.topP,
    seeds,
    stopTokenIds: tokenizer.stopTokenIds,
    ...(constraints ? { constraints: constraints.map((g) => (g ? nativeConstraint(g) : null)) } : {}),
    softThinking: { steps: c.thinkingSteps, tau: c.tau, topP: c.topP },
  });
  // Thinking and answer: at most thinkingSteps + maxNewTokens steps.
  while ((await gen.stepAsync(c.thinkingSteps + c.maxNewTokens)) > 0);
  return prompts.map((prompt, i) => {
    const r = gen.result(i);
    const tokens = Array.from(r.tokens);
    const stopped = r.finishReason === "stop_token";
    return {
      text: tokenizer.decode(stopped ? tokens.slice(0, -1) : tokens),
      tokens,
      logprobs: Array.from(r.logprobs),
      finishReason: stopped ? "stop_token" : "length",
      promptTokens: prompt.length,
      soft: r.soft!,
    };
  });
}

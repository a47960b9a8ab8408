/**
 * An LLM judge's model: any OpenAI-compatible endpoint, named as an `llm:` agent is
 * (`llm:MODEL@BASE_URL?options`), asked one judging prompt at a time. The requests go through the
 * shared client (agents/llm/client.ts): its concurrency limit, its pace (`rpm`), its retries with
 * backoff and the server's Retry-After. The answer is asked for as JSON of the judge's schema
 * (`response_format`, as the agent asks for actions); reading it is the judge's part (a world's
 * rubric and parser), which asks again when it cannot.
 */
import type { z } from "zod";
import { AgentSpecError } from "../agent-spec-error.js";
import type { JudgeModel } from "../../worlds/question/benchmark.js";
import { sharedClient } from "./client.js";
import { parseLlmTarget } from "./options.js";
import { responseFormat, responseSchema } from "./structured.js";

/** The model `spec` names ("llm:MODEL@BASE_URL?options"); an AgentSpecError names what is wrong with it. */
export function llmJudgeModel(spec: string): JudgeModel & { readonly requests: () => number } {
  if (!spec.startsWith("llm:")) throw new AgentSpecError(`a judge is an OpenAI-compatible model, llm:MODEL@BASE_URL[?options] (got "${spec}")`);
  const t = parseLlmTarget(spec, spec.slice(4));
  const o = t.options;
  const client = sharedClient(t);
  let requests = 0;
  return {
    id: spec,
    requests: () => requests,
    async ask(prompt: string, schema: z.ZodType, opts: { readonly signal?: AbortSignal } = {}): Promise<string> {
      const format = responseFormat(o.response_format, responseSchema("judge_scores", schema));
      requests++;
      const r = await client.chat(
        {
          model: t.model,
          messages: [...(o.system ? [{ role: "system" as const, content: o.system }] : []), { role: "user", content: prompt }],
          temperature: o.temperature,
          ...(o.top_p !== undefined ? { top_p: o.top_p } : {}),
          ...(o.max_tokens !== undefined ? { max_tokens: o.max_tokens } : {}),
          ...(o.seed !== undefined ? { seed: o.seed } : {}),
          ...(format !== undefined ? { response_format: format } : {}),
        },
        opts.signal ? { signal: opts.signal } : {},
      );
      return r.text;
    },
  };
}

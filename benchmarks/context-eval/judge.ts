/**
 * The optional LLM judge of the context evaluation, as the social-world-model project grades
 * observation accuracy: a model reads both contexts (and the story and question, when the files
 * carry them) and answers {"score": 0..1, "reasoning": "..."}. The prompt lives in
 * benchmarks/context-eval/prompts/context-judge.txt. `EndpointJudge` asks any OpenAI-compatible chat endpoint
 * (with retries); anything else that can grade implements `ContextJudge`.
 *
 * As upstream, a judge that fails for good (the endpoint after its retries, an unreadable reply)
 * scores the file 0 with the error as its reasoning: the evaluation goes on, and the table shows it.
 */
import { z } from "zod";
import { fill, promptTemplate } from "../../worlds/question/prompts.js";
import { pythonJson } from "../../worlds/core/socialized-context.js";
import { ChatClient } from "../../agents/llm/client.js";

export interface JudgeInput {
  readonly fileId: string;
  /** The ground truth and the generated context as read from their files (any layout). */
  readonly groundTruth: unknown;
  readonly generated: unknown;
  readonly story?: string;
  readonly question?: string;
}

export interface JudgeVerdict {
  /** In [0, 1]. */
  readonly score: number;
  readonly reasoning: string;
}

export interface ContextJudge {
  /** Names the judge in reports ("gpt-4o at https://api.openai.com/v1"). */
  readonly id: string;
  judge(input: JudgeInput, signal?: AbortSignal): Promise<JudgeVerdict>;
}

export function judgePrompt(input: JudgeInput): string {
  return fill(promptTemplate("benchmarks/context-eval/prompts/context-judge.txt"), {
    story: input.story?.trim() || "(not given)",
    question: input.question?.trim() || "(not given)",
    ground_truth: pythonJson(input.groundTruth),
    generated: pythonJson(input.generated),
  });
}

const Verdict = z.object({
  score: z.coerce.number({ error: "score is not a number" }).refine(Number.isFinite, "score is not a number"),
  reasoning: z.string().default(""),
});

/** Reads the judge's reply: a JSON object with a score, alone or inside text or a code fence. */
export function parseJudgeReply(text: string): JudgeVerdict {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) throw new Error(`the judge's reply holds no JSON object: "${text.slice(0, 80)}"`);
  let json: unknown;
  try {
    json = JSON.parse(text.slice(start, end + 1));
  } catch {
    throw new Error(`the judge's reply is not valid JSON: "${text.slice(start, start + 80)}"`);
  }
  const v = Verdict.safeParse(json);
  if (!v.success) throw new Error(`the judge's reply: ${v.error.issues[0]!.message}`);
  return { score: Math.min(1, Math.max(0, v.data.score)), reasoning: v.data.reasoning };
}

export interface EndpointJudgeOptions {
  /** The API root, e.g. https://api.openai.com/v1 or http://localhost:8000/v1. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  /** Milliseconds one attempt may take (default 120 s). */
  readonly timeoutMs?: number;
  /** Attempts after the first on a refused connection, a timeout, 429 or 5xx (default 4). */
  readonly retries?: number;
  /** The first retry's wait before jitter (default 1 s; doubles each time, at most 30 s). */
  readonly backoffMs?: number;
}

/**
 * Asks an OpenAI-compatible chat endpoint, at temperature 0, through the same client as the `llm`
 * agent: retries with exponential backoff (seeded jitter) and Retry-After on a refused
 * connection, a timeout, 429 or 5xx, so that a long evaluation survives a rate limit; the caller
 * (evaluateContexts' --concurrency) bounds the calls in flight.
 */
export class EndpointJudge implements ContextJudge {
  readonly id: string;
  private readonly client: ChatClient;

  constructor(private readonly opts: EndpointJudgeOptions) {
    this.id = `${opts.model} at ${opts.baseUrl}`;
    this.client = new ChatClient({
      baseUrl: opts.baseUrl,
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      timeoutMs: opts.timeoutMs ?? 120_000,
      retries: opts.retries ?? 4,
      backoffMs: opts.backoffMs ?? 1000,
      backoffMaxMs: 30_000,
      concurrency: 1024,
      seed: `judge|${opts.model}`,
    });
  }

  async judge(input: JudgeInput, signal?: AbortSignal): Promise<JudgeVerdict> {
    const reply = await this.client.chat(
      { model: this.opts.model, temperature: 0, messages: [{ role: "user", content: judgePrompt(input) }] },
      signal ? { signal } : {},
    );
    return parseJudgeReply(reply.text);
  }
}

/**
 * The optional LLM judge of the context evaluation, as the social-world-model project grades
 * observation accuracy: a model reads both contexts (and the story and question, when the files
 * carry them) and answers {"score": 0..1, "reasoning": "..."}. The prompt lives in
 * benchmarks/prompts/context-judge.txt. `EndpointJudge` asks any OpenAI-compatible chat endpoint;
 * anything else that can grade implements `ContextJudge`.
 *
 * As upstream, a judge that fails (network, unreadable reply) scores the file 0 with the error as
 * its reasoning: the evaluation goes on, and the table shows it.
 */
import { z } from "zod";
import { fill, promptTemplate } from "../prompts.js";
import { pythonJson } from "../../worlds/core/socialized-context.js";

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
  return fill(promptTemplate("context-judge"), {
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

const ChatReply = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1) });

export interface EndpointJudgeOptions {
  /** The API root, e.g. https://api.openai.com/v1 or http://localhost:8000/v1. */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  readonly timeoutMs?: number;
}

export class EndpointJudge implements ContextJudge {
  readonly id: string;

  constructor(private readonly opts: EndpointJudgeOptions) {
    this.id = `${opts.model} at ${opts.baseUrl}`;
  }

  async judge(input: JudgeInput, signal?: AbortSignal): Promise<JudgeVerdict> {
    const { url, init } = judgeRequest(this.opts, judgePrompt(input));
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 120_000);
    const res = await fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    return parseJudgeReply(chatContent(url, res.status, await res.text()));
  }
}

/** The chat-completion request for a judge prompt: temperature 0, one user message. */
export function judgeRequest(opts: EndpointJudgeOptions, prompt: string): { url: string; init: { method: "POST"; headers: Record<string, string>; body: string } } {
  return {
    url: `${opts.baseUrl.replace(/\/+$/, "")}/chat/completions`,
    init: {
      method: "POST",
      headers: { "content-type": "application/json", ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
      body: JSON.stringify({ model: opts.model, temperature: 0, messages: [{ role: "user", content: prompt }] }),
    },
  };
}

/** The assistant's text from a chat-completion response, or an error naming the endpoint. */
export function chatContent(url: string, status: number, body: string): string {
  if (status < 200 || status >= 300) throw new Error(`${url}: HTTP ${status}: ${body.slice(0, 200)}`);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`${url}: the reply is not JSON: ${body.slice(0, 200)}`);
  }
  const reply = ChatReply.safeParse(json);
  if (!reply.success) throw new Error(`${url}: not a chat completion: ${reply.error.issues[0]!.message}`);
  return reply.data.choices[0]!.message.content ?? "";
}

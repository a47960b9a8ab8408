/**
 * A client for OpenAI-compatible chat completions: one POST to {baseUrl}/chat/completions per
 * attempt, each with its own timeout; failures that may pass (network errors, timeouts, 408, 409,
 * 425, 429, 5xx) are retried after a backoff or the server's Retry-After, others (400, 401, 404,
 * ...) fail at once. At most `concurrency` attempts are in flight per client; waiting for a slot
 * and backing off both stop when the caller's signal aborts or its deadline would pass.
 *
 * The reply is read with zod: a body that is not a chat completion is an error naming the URL.
 */
import { z } from "zod";
import { Backoff, retryAfterMs } from "./backoff.js";
import type { ChatMessage } from "../../models/chat-template.js";
import { Limiter } from "./limiter.js";
import { Pacer, sleep } from "./pacer.js";
import type { LlmTarget } from "./options.js";
import { hashString } from "../../worlds/core/rng.js";

export type { ChatMessage };

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly temperature?: number;
  readonly top_p?: number;
  readonly max_tokens?: number;
  readonly seed?: number;
  readonly stop?: readonly string[];
  readonly response_format?: unknown;
}

const Usage = z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number().optional() });
export type Usage = z.infer<typeof Usage>;

export const ChatCompletionSchema = z.looseObject({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({ content: z.string().nullable().optional(), refusal: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1, "no choices"),
  usage: Usage.nullable().optional(),
});
export type ChatCompletion = z.infer<typeof ChatCompletionSchema>;

export interface ClientOptions {
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** Milliseconds one attempt may take. */
  readonly timeoutMs: number;
  /** Attempts after the first. */
  readonly retries: number;
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  readonly concurrency: number;
  /** Requests started per minute at most (unset: no pace; the server's 429 and Retry-After still apply). */
  readonly rpm?: number;
  /** Seeds the backoff's jitter. */
  readonly seed?: number | string;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Epoch ms: no retry is started that could not begin before it. */
  readonly deadline?: number;
}

export interface CallResult {
  readonly completion: ChatCompletion;
  /** The reply's text (a refusal's text when the model refused). */
  readonly text: string;
  readonly attempts: number;
  readonly latencyMs: number;
  /** Why each failed attempt failed. */
  readonly failures: readonly string[];
}

/** The endpoint failed for good: every attempt's reason is in the message. */
export class EndpointError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    readonly failures: readonly string[],
    readonly status?: number,
  ) {
    super(message);
    this.name = "EndpointError";
  }
}

const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

export class ChatClient {
  readonly url: string;
  readonly limiter: Limiter;
  readonly pacer: Pacer | undefined;
  private readonly backoff: Backoff;

  constructor(readonly opts: ClientOptions) {
    this.url = `${opts.baseUrl.replace(/\/+$/, "")}/chat/completions`;
    this.limiter = new Limiter(opts.concurrency);
    this.pacer = opts.rpm !== undefined ? new Pacer(opts.rpm) : undefined;
    this.backoff = new Backoff({ initialMs: opts.backoffMs, maxMs: opts.backoffMaxMs }, opts.seed ?? opts.baseUrl);
  }

  async chat(request: ChatRequest, call: CallOptions = {}): Promise<CallResult> {
    const started = performance.now();
    const failures: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(request, call.signal);
      if ("completion" in outcome) {
        const choice = outcome.completion.choices[0]!;
        const text = choice.message.content ?? choice.message.refusal ?? "";
        return { completion: outcome.completion, text, attempts: attempt, latencyMs: performance.now() - started, failures };
      }
      failures.push(outcome.error);
      const summary = () => `${this.url}: ${outcome.error}${attempt > 1 ? ` (${attempt} attempts: ${failures.join("; ")})` : ""}`;
      if (call.signal?.aborted) throw new EndpointError(`${this.url}: cancelled (the turn's deadline passed, or the run was stopped) after ${attempt} attempt(s): ${failures.join("; ")}`, attempt, failures, outcome.status);
      if (!outcome.retryable || attempt > this.opts.retries) throw new EndpointError(summary(), attempt, failures, outcome.status);
      const wait = outcome.retryAfterMs ?? this.backoff.delay(attempt);
      if (call.deadline !== undefined && Date.now() + wait >= call.deadline) {
        throw new EndpointError(`${summary()}; no time left to retry before the turn's deadline`, attempt, failures, outcome.status);
      }
      await sleep(wait, call.signal);
    }
  }

  private async attempt(
    request: ChatRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ completion: ChatCompletion } | { error: string; retryable: boolean; status?: number; retryAfterMs?: number }> {
    let release: () => void;
    try {
      release = await this.limiter.acquire(signal);
    } catch {
      return { error: "cancelled while waiting for a free connection", retryable: false };
    }
    if (this.pacer) {
      await this.pacer.wait(signal);
      if (signal?.aborted) {
        release();
        return { error: "cancelled while waiting for the request rate", retryable: false };
      }
    }
    const timeout = AbortSignal.timeout(this.opts.timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      let res: Response;
      let body: string;
      try {
        res = await fetch(this.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json", ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
          body: JSON.stringify({ ...request, stream: false }),
          signal: both,
        });
        body = await res.text();
      } catch (err) {
        if (timeout.aborted && !signal?.aborted) return { error: `timed out after ${this.opts.timeoutMs} ms`, retryable: true };
        if (signal?.aborted) return { error: "cancelled", retryable: false };
        return { error: `network error: ${networkReason(err)}`, retryable: true };
      }
      if (!res.ok) {
        const ra = retryAfterMs(res.headers);
        return { error: `HTTP ${res.status}: ${errorText(body)}`, retryable: RETRYABLE.has(res.status), status: res.status, ...(ra !== undefined ? { retryAfterMs: ra } : {}) };
      }
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        return { error: `the reply is not JSON: ${JSON.stringify(body.slice(0, 200))}`, retryable: true, status: res.status };
      }
      const parsed = ChatCompletionSchema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return { error: `the reply is not a chat completion: ${issue.path.join(".") || "(root)"}: ${issue.message}`, retryable: false, status: res.status };
      }
      return { completion: parsed.data };
    } finally {
      release();
    }
  }
}

/** The message of an OpenAI-shaped error body, else the body's start. */
function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof j.error === "string") return j.error;
    if (j.error && typeof j.error.message === "string") return j.error.message;
    if (typeof j.message === "string") return j.message;
  } catch {
    // not JSON
  }
  return body.slice(0, 300) || "(empty body)";
}

/** fetch's TypeError hides the reason (ECONNREFUSED, ENOTFOUND) in its cause. */
function networkReason(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}

const clients = new Map<string, ChatClient>();

/**
 * The client for a target's endpoint settings: agents and judges with the same URL, key, timeouts,
 * retries and limits share one (and so its concurrency limit and its pace).
 */
export function sharedClient(t: LlmTarget): ChatClient {
  const o = t.options;
  const k = JSON.stringify([t.baseUrl, t.apiKey ? hashString(t.apiKey) : 0, o.timeout, o.retries, o.backoff, o.backoff_max, o.concurrency, o.rpm ?? 0]);
  let client = clients.get(k);
  if (!client) {
    client = new ChatClient({
      baseUrl: t.baseUrl,
      ...(t.apiKey ? { apiKey: t.apiKey } : {}),
      timeoutMs: o.timeout,
      retries: o.retries,
      backoffMs: o.backoff,
      backoffMaxMs: o.backoff_max,
      concurrency: o.concurrency,
      ...(o.rpm !== undefined ? { rpm: o.rpm } : {}),
      seed: o.seed ?? 0,
    });
    clients.set(k, client);
  }
  return client;
}

/**
 * The OpenAI-compatible API of our policies: `GET /models`, `GET /models/:id` and
 * `POST /chat/completions` (with server-sent events when `stream` is true), as an express router
 * mounted at /v1 by the main server and by `socialworld serve-policy`. Each checkpoint is served
 * by a worker thread of its own (worker.ts), whose PolicyEngine batches concurrent requests.
 *
 * What runs here, on the server's event loop, is bounded before it runs: a request body is read
 * only up to what the served models' contexts can hold (a longer prompt could never be answered),
 * a prompt with more bytes than its model's context could hold is refused before it is tokenized,
 * and each client (by address) has at most `maxPerClient` requests in progress. Tokenizing,
 * generation and the format check happen in the model's thread.
 */
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import type { RequestHandler } from "express";
import { json, Router, type Request, type Response } from "express";
import type { ChatMessage } from "../../models/chat-template.js";
import { sameSecret } from "../secret.js";
import { requestAddress } from "../security/client-address.js";
import { Concurrency } from "../security/rate-limit.js";
import type { EngineStats, TokenLogprob } from "./engine.js";
import { errorHandler, notFound, OpenAiError, requestError, sendError } from "./errors.js";
import type { ServedModel } from "./models.js";
import { ChatRequestSchema, chatMessages, type ChatRequest } from "./schemas.js";
import { ModelWorker, RequestCancelled } from "./worker-client.js";
import type { GenerateParams, ModelMeta, WorkerChoice } from "./worker-protocol.js";

export { DEFAULT_MAX_TOKENS } from "./sampling-params.js";

/** Room in a request body for what is not the messages' text (settings, a response_format schema). */
const BODY_OVERHEAD = 64 * 1024;
/** A JSON string spends at most 6 bytes (`\u0001`) on one byte of text. */
const JSON_ESCAPE = 6;

export interface OpenAiServiceOptions {
  /** The models offered, looked up on every request (so the list may change while serving). */
  readonly models: () => readonly ServedModel[];
  /** Requests must carry `Authorization: Bearer <apiKey>` when set. */
  readonly apiKey?: string;
  readonly maxBatch?: number;
  readonly maxWaiting?: number;
  /** Request bodies never larger than this (bytes; default 8 MiB), whatever the models' contexts. */
  readonly bodyLimit?: number;
  /** Chat requests one client (address) may have in progress at once (default 32: one batch). */
  readonly maxPerClient?: number;
  /**
   * Hold replies to response_format while sampling (default true); false: only check them after
   * (format_check), to measure how well a policy keeps a format on its own.
   */
  readonly enforceFormat?: boolean;
}

export class OpenAiService {
  readonly router: Router;
  private readonly workers = new Map<string, ModelWorker>();
  private readonly inflight = new Set<AbortController>();
  private readonly perClient: Concurrency;
  private readonly parsers = new Map<number, RequestHandler>();

  constructor(private readonly opts: OpenAiServiceOptions) {
    this.perClient = new Concurrency(opts.maxPerClient ?? 32);
    const r = Router();
    r.use((req, res, next) => (this.authorized(req) ? next() : sendError(res, new OpenAiError(401, "Incorrect API key provided.", { code: "invalid_api_key" }))));
    r.get("/models", (_req, res) => {
      res.json({ object: "list", data: this.opts.models().map((m) => this.modelCard(m)) });
    });
    r.get("/models/:id", (req, res) => {
      const m = this.find(req.params.id);
      res.json(this.modelCard(m));
    });
    r.post(
      "/chat/completions",
      (req, res, next) => this.admitClient(req, res, next),
      (req, res, next) => {
        this.readBody(req, res, next).catch(next);
      },
      (req, res, next) => {
        this.chat(req, res).catch(next);
      },
    );
    r.use(notFound);
    r.use(errorHandler);
    this.router = r;
  }

  /** Loads every model now (serve-policy: a bad folder fails at start, not at the first request). */
  async preload(): Promise<void> {
    for (const m of this.opts.models()) await this.worker(m).preload();
  }

  /** Per model: whether it is loaded and its engine's counters. */
  health(): { id: string; dir: string; loaded: boolean; stats?: EngineStats }[] {
    return this.opts.models().map((m) => {
      const w = this.workers.get(m.id);
      const loaded = w !== undefined && w.dir === m.dir && w.loaded;
      return { id: m.id, dir: m.dir, loaded, ...(loaded && w.stats ? { stats: { ...w.stats } } : {}) };
    });
  }

  /** Cancels every request in flight (their clients get an error or a closed stream) and stops the models' threads. */
  async close(): Promise<void> {
    for (const c of this.inflight) c.abort();
    this.inflight.clear();
    const workers = [...this.workers.values()];
    this.workers.clear();
    await Promise.all(workers.map((w) => w.close()));
  }

  private authorized(req: Request): boolean {
    const key = this.opts.apiKey;
    if (!key) return true;
    const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim() ?? "";
    return sameSecret(given, key);
  }

  private find(id: string): ServedModel {
    const m = this.opts.models().find((x) => x.id === id);
    if (!m) {
      const known = this.opts.models().map((x) => x.id);
      throw new OpenAiError(404, `The model \`${id}\` does not exist (served here: ${known.join(", ") || "none"}).`, { param: "model", code: "model_not_found" });
    }
    return m;
  }

  private modelCard(m: ServedModel): { id: string; object: "model"; created: number; owned_by: string; max_model_len?: number } {
    let created = 0;
    try {
      created = Math.floor(statSync(m.dir).mtimeMs / 1000);
    } catch {
      // A folder gone since it was listed: the request for it will say so.
    }
    const w = this.workers.get(m.id);
    const meta = w?.loaded ? w.metaNow : undefined;
    return { id: m.id, object: "model", created, owned_by: "socialworld", ...(meta ? { max_model_len: meta.contextLength } : {}) };
  }

  /** The model's thread, started the first time (and again when its folder changed or its thread died). */
  private worker(m: ServedModel): ModelWorker {
    let mtimeMs = 0;
    try {
      mtimeMs = statSync(`${m.dir}/model.safetensors`).mtimeMs;
    } catch {
      // A sharded checkpoint has no single file; the thread says what is missing.
    }
    const w = this.workers.get(m.id);
    if (w && w.dir === m.dir && w.mtimeMs === mtimeMs && !w.dead) return w;
    w?.retire();
    const fresh = new ModelWorker(m.id, m.dir, mtimeMs, {
      ...(this.opts.maxBatch !== undefined ? { maxBatch: this.opts.maxBatch } : {}),
      ...(this.opts.maxWaiting !== undefined ? { maxWaiting: this.opts.maxWaiting } : {}),
      ...(this.opts.enforceFormat !== undefined ? { enforceFormat: this.opts.enforceFormat } : {}),
    });
    this.workers.set(m.id, fresh);
    return fresh;
  }

  /** At most maxPerClient requests of one address in progress; the slot is freed when the response ends. */
  private admitClient(req: Request, res: Response, next: (err?: unknown) => void): void {
    const release = this.perClient.acquire(requestAddress(req));
    if (!release) {
      sendError(res, new OpenAiError(429, `too many requests in progress from your address (at most ${this.perClient.max} at once); retry when one has finished`, { code: "too_many_requests", retryAfterMs: 1000 }));
      req.resume();
      return;
    }
    res.on("close", release);
    next();
  }

  /**
   * The longest body worth reading: the largest served model's context in bytes of text (no
   * token stands for more than maxTokenBytes), as JSON, and room for the other fields.
   */
  private async bodyLimit(): Promise<number> {
    const cap = this.opts.bodyLimit ?? 8 * 1024 * 1024;
    let limit = BODY_OVERHEAD;
    for (const m of this.opts.models()) {
      const meta = await this.worker(m)
        .meta()
        .catch(() => undefined);
      if (meta) limit = Math.max(limit, meta.contextLength * meta.maxTokenBytes * JSON_ESCAPE + BODY_OVERHEAD);
    }
    return Math.min(cap, limit);
  }

  private async readBody(req: Request, res: Response, next: (err?: unknown) => void): Promise<void> {
    const limit = await this.bodyLimit();
    let parse = this.parsers.get(limit);
    if (!parse) {
      parse = json({ limit });
      this.parsers.set(limit, parse);
    }
    parse(req, res, next);
  }

  private async chat(req: Request, res: Response): Promise<void> {
    if (req.body === undefined || req.body === null || typeof req.body !== "object") throw new OpenAiError(400, "the request body must be a JSON object (Content-Type: application/json)");
    const parsed = ChatRequestSchema.safeParse(req.body);
    if (!parsed.success) throw requestError(parsed.error);
    const body = parsed.data;
    const model = this.find(body.model);
    const worker = this.worker(model);
    const meta = await worker.meta().catch((err: Error) => {
      throw err instanceof OpenAiError ? err : new OpenAiError(500, `the model \`${model.id}\` cannot be loaded: ${err.message}`, { code: "model_load_failed" });
    });
    const messages = chatMessages(body);
    refuseOverlong(messages, meta);
    const params = generateParams(body);
    const controller = new AbortController();
    this.inflight.add(controller);
    // A client that hangs up stops its generation (the batch goes on without it).
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const head = { id: `chatcmpl-${randomUUID().replace(/-/g, "")}`, created: Math.floor(Date.now() / 1000), model: body.model };
    try {
      if (body.stream) {
        await this.stream(res, worker, messages, params, body, controller.signal, head);
        return;
      }
      const g = await worker.generate(messages, params, {}, controller.signal);
      res.json({
        ...head,
        object: "chat.completion",
        system_fingerprint: null,
        choices: g.choices.map((c, index) => ({
          index,
          message: { role: "assistant", content: c.text, refusal: null },
          logprobs: body.logprobs ? { content: logprobContent(c.logprobs ?? []) } : null,
          finish_reason: c.finishReason,
          ...(c.formatCheck ? { format_check: c.formatCheck } : {}),
        })),
        usage: usage(g.promptTokens, g.choices),
      });
    } catch (err) {
      if (err instanceof RequestCancelled && res.destroyed) return;
      throw err;
    } finally {
      this.inflight.delete(controller);
    }
  }

  private async stream(
    res: Response,
    worker: ModelWorker,
    messages: readonly ChatMessage[],
    params: GenerateParams,
    body: ChatRequest,
    signal: AbortSignal,
    head: { id: string; created: number; model: string },
  ): Promise<void> {
    const send = (data: unknown) => {
      if (!res.destroyed) res.write(`data: ${JSON.stringify(data)}\n\n`);
    };
    const withUsage = body.stream_options?.include_usage === true;
    // With include_usage, every chunk carries `usage` (null until the last), as OpenAI's do.
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      send({ ...head, object: "chat.completion.chunk", system_fingerprint: null, choices, ...(withUsage ? { usage: null } : {}), ...extra });
    let started = false;
    // The 200 goes out once the model has taken the request: a refusal before that (a prompt too
    // long for the context, a full queue) is still an HTTP error, as it is without streaming.
    const open = () => {
      started = true;
      res.status(200);
      res.setHeader("content-type", "text/event-stream; charset=utf-8");
      res.setHeader("cache-control", "no-cache");
      res.setHeader("connection", "keep-alive");
      res.setHeader("x-accel-buffering", "no");
      res.flushHeaders();
      for (let index = 0; index < params.n; index++) chunk([{ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]);
    };
    try {
      const g = await worker.generate(
        messages,
        params,
        {
          onAdmitted: open,
          onDelta: (index, text, lps) => chunk([{ index, delta: { content: text }, logprobs: body.logprobs ? { content: logprobContent(lps) } : null, finish_reason: null }]),
        },
        signal,
      );
      g.choices.forEach((c, index) => {
        chunk([{ index, delta: {}, logprobs: null, finish_reason: c.finishReason, ...(c.formatCheck ? { format_check: c.formatCheck } : {}) }]);
      });
      if (withUsage) chunk([], { usage: usage(g.promptTokens, g.choices) });
    } catch (err) {
      if (!started) throw err;
      if (err instanceof RequestCancelled && res.destroyed) return;
      const e = err instanceof OpenAiError ? err : new OpenAiError(500, (err as Error).message);
      // The status line is gone: the error travels as an event, as vLLM sends it.
      send(e.body());
    }
    if (!res.destroyed) res.end("data: [DONE]\n\n");
  }
}

/**
 * A prompt whose text has more bytes than the context holds tokens of the model's longest token
 * cannot fit, whatever its tokens: it is refused here, without tokenizing it. (The chat template
 * only adds to the text.)
 */
function refuseOverlong(messages: readonly ChatMessage[], meta: ModelMeta): void {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(m.content, "utf8");
  const most = meta.contextLength * meta.maxTokenBytes;
  if (bytes > most) {
    throw new OpenAiError(
      400,
      `This model's maximum context length is ${meta.contextLength} tokens. However, your messages have ${bytes} bytes of text, more than ${meta.contextLength} tokens can hold (no token of this model stands for more than ${meta.maxTokenBytes} bytes).`,
      { param: "messages", code: "context_length_exceeded" },
    );
  }
}

function generateParams(body: ChatRequest): GenerateParams {
  return {
    n: body.n ?? 1,
    seed: body.seed ?? null,
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    topK: body.top_k ?? null,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    maxTokensParam: body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens",
    stop: body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
    logprobs: body.logprobs ?? false,
    stream: body.stream ?? false,
    responseFormat: body.response_format ?? null,
  };
}

function usage(promptTokens: number, choices: readonly WorkerChoice[]) {
  const completion = choices.reduce((n, c) => n + c.completionTokens, 0);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

function logprobContent(lps: readonly TokenLogprob[]) {
  return lps.map((l) => ({ token: l.token, logprob: l.logprob, bytes: l.bytes, top_logprobs: [] }));
}

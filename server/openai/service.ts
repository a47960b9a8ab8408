/**
 * The OpenAI-compatible API of our policies: `GET /models`, `GET /models/:id` and
 * `POST /chat/completions` (with server-sent events when `stream` is true), as an express router
 * mounted at /v1 by the main server and by `socialworld serve-policy`. Checkpoints load on first
 * use and stay loaded; each has its own PolicyEngine, which batches concurrent requests.
 */
import { randomInt, randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { json, Router, type Request, type Response } from "express";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { CancelledError, PolicyEngine, QueueFullError, type EngineChoice, type EngineStats, type TokenLogprob } from "./engine.js";
import { errorHandler, notFound, OpenAiError, requestError, sendError } from "./errors.js";
import { sameSecret } from "../secret.js";
import { formatChecker, type FormatCheck, type FormatChecker } from "./format-check.js";
import type { ServedModel } from "./models.js";
import { ChatRequestSchema, chatMessages, type ChatRequest } from "./schemas.js";

/** Without max_tokens a completion may use the rest of the context, up to this many tokens. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface OpenAiServiceOptions {
  /** The models offered, looked up on every request (so the list may change while serving). */
  readonly models: () => readonly ServedModel[];
  /** Requests must carry `Authorization: Bearer <apiKey>` when set. */
  readonly apiKey?: string;
  readonly maxBatch?: number;
  readonly maxWaiting?: number;
  /** Request bodies up to this size (default 8 MB: long conversations fit). */
  readonly bodyLimit?: string;
}

interface Loaded {
  readonly dir: string;
  readonly mtimeMs: number;
  readonly engine: PolicyEngine;
  readonly created: number;
}

export class OpenAiService {
  readonly router: Router;
  private readonly loaded = new Map<string, Loaded>();
  private readonly inflight = new Set<AbortController>();

  constructor(private readonly opts: OpenAiServiceOptions) {
    const r = Router();
    r.use(json({ limit: opts.bodyLimit ?? "8mb" }));
    r.use((req, res, next) => (this.authorized(req) ? next() : sendError(res, new OpenAiError(401, "Incorrect API key provided.", { code: "invalid_api_key" }))));
    r.get("/models", (_req, res) => {
      res.json({ object: "list", data: this.opts.models().map((m) => this.modelCard(m)) });
    });
    r.get("/models/:id", (req, res) => {
      const m = this.find(req.params.id);
      res.json(this.modelCard(m));
    });
    r.post("/chat/completions", (req, res, next) => {
      this.chat(req, res).catch(next);
    });
    r.use(notFound);
    r.use(errorHandler);
    this.router = r;
  }

  /** Loads every model now (serve-policy: a bad folder fails at start, not at the first request). */
  preload(): void {
    for (const m of this.opts.models()) this.engine(m, false);
  }

  /** Per model: whether it is loaded and its engine's counters. */
  health(): { id: string; dir: string; loaded: boolean; stats?: EngineStats }[] {
    return this.opts.models().map((m) => {
      const l = this.loaded.get(m.id);
      return { id: m.id, dir: m.dir, loaded: l !== undefined, ...(l ? { stats: { ...l.engine.stats } } : {}) };
    });
  }

  /** Cancels every request in flight (their clients get an error or a closed stream). */
  close(): void {
    for (const c of this.inflight) c.abort();
    this.inflight.clear();
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
    const l = this.loaded.get(m.id);
    let created = l?.created;
    if (created === undefined) {
      try {
        created = Math.floor(statSync(m.dir).mtimeMs / 1000);
      } catch {
        created = 0;
      }
    }
    return { id: m.id, object: "model", created, owned_by: "socialworld", ...(l ? { max_model_len: l.engine.contextLength } : {}) };
  }

  /** The model's engine, loading the checkpoint the first time (and again if its folder changed). */
  private engine(m: ServedModel, asHttpError = true): PolicyEngine {
    let mtimeMs = 0;
    try {
      mtimeMs = statSync(`${m.dir}/model.safetensors`).mtimeMs;
    } catch {
      // A sharded checkpoint has no single file; loadCheckpoint says what is missing.
    }
    const l = this.loaded.get(m.id);
    if (l && l.dir === m.dir && l.mtimeMs === mtimeMs) return l.engine;
    let ck;
    try {
      ck = loadCheckpoint(m.dir);
    } catch (err) {
      if (!asHttpError) throw err;
      throw new OpenAiError(500, `the model \`${m.id}\` cannot be loaded: ${(err as Error).message}`, { code: "model_load_failed" });
    }
    const engine = new PolicyEngine(ck.model, ck.tokenizer, {
      ...(this.opts.maxBatch !== undefined ? { maxBatch: this.opts.maxBatch } : {}),
      ...(this.opts.maxWaiting !== undefined ? { maxWaiting: this.opts.maxWaiting } : {}),
    });
    this.loaded.set(m.id, { dir: m.dir, mtimeMs, engine, created: Math.floor(Date.now() / 1000) });
    return engine;
  }

  private async chat(req: Request, res: Response): Promise<void> {
    if (req.body === undefined || req.body === null || typeof req.body !== "object") throw new OpenAiError(400, "the request body must be a JSON object (Content-Type: application/json)");
    const parsed = ChatRequestSchema.safeParse(req.body);
    if (!parsed.success) throw requestError(parsed.error);
    const body = parsed.data;
    const engine = this.engine(this.find(body.model));
    const messages = chatMessages(body);
    const check = formatChecker(body.response_format);
    const tok = engine.tokenizer;
    const prompt = tok.encode(tok.applyChatTemplate(messages, { addGenerationPrompt: true }));
    const sampling = this.sampling(body, prompt.length, engine.contextLength);
    const controller = new AbortController();
    this.inflight.add(controller);
    // A client that hangs up stops its generation (the batch goes on without it).
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const id = `chatcmpl-${randomUUID().replace(/-/g, "")}`;
    const created = Math.floor(Date.now() / 1000);
    const head = { id, created, model: body.model };
    try {
      if (body.stream) {
        // Once the stream's 200 is out, a refusal could only travel as an event: refuse first.
        engine.admit();
        await this.stream(res, engine, body, prompt, sampling, controller.signal, check, head);
      } else {
        const choices = await engine.generate({ prompt, ...sampling, signal: controller.signal });
        res.json({
          ...head,
          object: "chat.completion",
          system_fingerprint: null,
          choices: choices.map((c, index) => ({
            index,
            message: { role: "assistant", content: c.text, refusal: null },
            logprobs: body.logprobs ? { content: logprobContent(c.logprobs ?? []) } : null,
            finish_reason: c.finishReason,
            ...(check ? { format_check: check(c.text) } : {}),
          })),
          usage: usage(prompt.length, choices),
        });
      }
    } catch (err) {
      if (err instanceof QueueFullError) throw new OpenAiError(429, `${err.message}; retry later`, { code: "server_busy", retryAfterMs: err.retryAfterMs });
      if (err instanceof CancelledError && res.destroyed) return;
      throw err;
    } finally {
      this.inflight.delete(controller);
    }
  }

  private sampling(body: ChatRequest, promptTokens: number, context: number) {
    const room = context - promptTokens;
    const limit = `This model's maximum context length is ${context} tokens`;
    if (room <= 0) throw new OpenAiError(400, `${limit}. However, your messages resulted in ${promptTokens} tokens.`, { param: "messages", code: "context_length_exceeded" });
    const asked = body.max_completion_tokens ?? body.max_tokens ?? undefined;
    const param = body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
    if (asked !== undefined && asked > room)
      throw new OpenAiError(400, `${limit}. However, you requested ${promptTokens + asked} tokens (${promptTokens} in the messages, ${asked} in the completion).`, { param, code: "context_length_exceeded" });
    const n = body.n ?? 1;
    const seed = body.seed ?? randomInt(0, 2 ** 47);
    const topP = body.top_p ?? 1;
    return {
      n,
      seeds: Array.from({ length: n }, (_, i) => seed + i),
      maxTokens: asked ?? Math.min(room, DEFAULT_MAX_TOKENS),
      // top_p 0 keeps only the most likely token: greedy.
      temperature: topP === 0 ? 0 : (body.temperature ?? 1),
      topP: topP === 0 ? 1 : topP,
      topK: Math.max(0, body.top_k ?? 0),
      stop: body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop,
      logprobs: body.logprobs ?? false,
    };
  }

  private async stream(
    res: Response,
    engine: PolicyEngine,
    body: ChatRequest,
    prompt: number[],
    sampling: ReturnType<OpenAiService["sampling"]>,
    signal: AbortSignal,
    check: FormatChecker | undefined,
    head: { id: string; created: number; model: string },
  ): Promise<void> {
    res.status(200);
    res.setHeader("content-type", "text/event-stream; charset=utf-8");
    res.setHeader("cache-control", "no-cache");
    res.setHeader("connection", "keep-alive");
    res.setHeader("x-accel-buffering", "no");
    res.flushHeaders();
    const send = (data: unknown) => {
      if (!res.destroyed) res.write(`data: ${JSON.stringify(data)}\n\n`);
    };
    const withUsage = body.stream_options?.include_usage === true;
    // With include_usage, every chunk carries `usage` (null until the last), as OpenAI's do.
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      send({ ...head, object: "chat.completion.chunk", system_fingerprint: null, choices, ...(withUsage ? { usage: null } : {}), ...extra });
    for (let index = 0; index < sampling.n; index++) chunk([{ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]);
    try {
      const choices = await engine.generate({
        prompt,
        ...sampling,
        signal,
        onDelta: (index, text, lps) => {
          chunk([{ index, delta: { content: text }, logprobs: body.logprobs ? { content: logprobContent(lps) } : null, finish_reason: null }]);
        },
      });
      choices.forEach((c, index) => {
        const verdict: FormatCheck | undefined = check?.(c.text);
        chunk([{ index, delta: {}, logprobs: null, finish_reason: c.finishReason, ...(verdict ? { format_check: verdict } : {}) }]);
      });
      if (withUsage) chunk([], { usage: usage(prompt.length, choices) });
    } catch (err) {
      if (err instanceof CancelledError && res.destroyed) return;
      // (A full queue cannot get here: chat() called admit() in the same tick as generate().)
      const e = err instanceof OpenAiError ? err : new OpenAiError(500, (err as Error).message);
      // The status line is gone: the error travels as an event, as vLLM sends it.
      send(e.body());
    }
    if (!res.destroyed) res.end("data: [DONE]\n\n");
  }
}

function usage(promptTokens: number, choices: readonly EngineChoice[]) {
  const completion = choices.reduce((n, c) => n + c.tokens.length, 0);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}

function logprobContent(lps: readonly TokenLogprob[]) {
  return lps.map((l) => ({ token: l.token, logprob: l.logprob, bytes: l.bytes, top_logprobs: [] }));
}

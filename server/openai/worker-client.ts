/**
 * The event loop's handle on one served model's worker thread (worker.ts): requests go in with an
 * id, replies, streamed deltas and the engine's counters come back as messages. A worker that
 * dies fails its requests with a 500 and is replaced on the next request (service.ts).
 */
import type { Worker } from "node:worker_threads";
import type { ChatMessage } from "../../models/chat-template.js";
import { modelDefaults } from "../../models/model.js";
import { DataError } from "../../worlds/core/errors.js";
import { startModuleWorker } from "../module-worker.js";
import type { EngineStats, TokenLogprob } from "./engine.js";
import { OpenAiError } from "./errors.js";
import type { FromWorker, GenerateParams, ModelMeta, ModelWorkerData, ToWorker, WorkerChoice, WorkerError } from "./worker-protocol.js";

export interface GenerateHooks {
  /** The prompt was tokenized and the request queued (a stream sends its 200 now). */
  readonly onAdmitted?: (promptTokens: number) => void;
  readonly onDelta?: (choice: number, text: string, logprobs: readonly TokenLogprob[]) => void;
}

export interface Generated {
  readonly promptTokens: number;
  readonly choices: readonly WorkerChoice[];
}

/** A request the client hung up on. */
export class RequestCancelled extends Error {
  constructor() {
    super("the request was cancelled");
    this.name = "RequestCancelled";
  }
}

interface Call {
  readonly hooks: GenerateHooks;
  readonly resolve: (g: Generated) => void;
  readonly reject: (err: Error) => void;
}

export class ModelWorker {
  private readonly worker: Worker;
  private readonly metaPromise: Promise<ModelMeta>;
  private readonly calls = new Map<number, Call>();
  private nextId = 1;
  private loadWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private retiring = false;
  /** The engine's counters as last reported (undefined until the weights are loaded). */
  stats: EngineStats | undefined;
  loaded = false;
  /** The bounds, once the thread has read the tokenizer. */
  metaNow: ModelMeta | undefined;
  /** Set when the thread stopped; the service starts a new one. */
  dead = false;

  constructor(
    readonly id: string,
    readonly dir: string,
    /** The checkpoint's modification time when the worker started (a newer one replaces it). */
    readonly mtimeMs: number,
    opts: { maxBatch?: number; maxWaiting?: number; enforceFormat?: boolean } = {},
  ) {
    const workerData: ModelWorkerData = { dir, model: modelDefaults(), ...opts };
    this.worker = startModuleWorker("server/openai/worker", { workerData, name: `model ${id}` });
    // A model nobody asks for does not keep the process alive; the HTTP server does while it serves.
    this.worker.unref();
    let metaResolve!: (m: ModelMeta) => void;
    let metaReject!: (e: Error) => void;
    this.metaPromise = new Promise<ModelMeta>((resolve, reject) => {
      metaResolve = resolve;
      metaReject = reject;
    });
    // Awaited by every request; a failure is reported there, not as an unhandled rejection here.
    this.metaPromise.catch(() => undefined);
    this.worker.on("message", (msg: FromWorker) => {
      switch (msg.type) {
        case "meta":
          this.metaNow = msg.meta;
          return metaResolve(msg.meta);
        case "loaded":
          this.loaded = true;
          this.stats = msg.stats;
          for (const w of this.loadWaiters.splice(0)) w.resolve();
          return;
        case "load_failed": {
          const err = this.loadError(msg.error);
          metaReject(err);
          for (const w of this.loadWaiters.splice(0)) w.reject(err);
          return;
        }
        case "stats":
          this.stats = msg.stats;
          return;
        case "admitted":
          return this.calls.get(msg.id)?.hooks.onAdmitted?.(msg.promptTokens);
        case "delta":
          return this.calls.get(msg.id)?.hooks.onDelta?.(msg.choice, msg.text, msg.logprobs);
        case "done":
          return this.settle(msg.id, (c) => c.resolve({ promptTokens: msg.promptTokens, choices: msg.choices }));
        case "failed":
          return this.settle(msg.id, (c) => c.reject(msg.cancelled ? new RequestCancelled() : this.requestError(msg.error)));
      }
    });
    const died = (why: string) => {
      this.dead = true;
      const err = new OpenAiError(500, `the model \`${id}\` stopped: ${why}`, { code: "model_failed" });
      metaReject(err);
      for (const w of this.loadWaiters.splice(0)) w.reject(err);
      for (const [callId, call] of this.calls) {
        this.calls.delete(callId);
        call.reject(err);
      }
    };
    this.worker.on("error", (err) => {
      console.error(`[v1] model ${id}: ${err.stack ?? err.message}`);
      died(err.message);
    });
    this.worker.on("exit", (code) => died(`its thread exited (${code})`));
  }

  /** The bounds requests are checked against before they reach the thread. */
  meta(): Promise<ModelMeta> {
    return this.metaPromise;
  }

  /** Loads the weights now (serve-policy: a bad folder fails at start, not at the first request). */
  preload(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.loadWaiters.push({ resolve, reject });
      this.send({ type: "load" });
    });
  }

  generate(messages: readonly ChatMessage[], params: GenerateParams, hooks: GenerateHooks, signal: AbortSignal): Promise<Generated> {
    if (this.dead) return Promise.reject(new OpenAiError(500, `the model \`${this.id}\` stopped`, { code: "model_failed" }));
    const id = this.nextId++;
    return new Promise<Generated>((resolve, reject) => {
      this.calls.set(id, { hooks, resolve, reject });
      this.send({ type: "generate", id, messages, params });
      const cancel = () => this.send({ type: "cancel", id });
      if (signal.aborted) cancel();
      else signal.addEventListener("abort", cancel, { once: true });
    });
  }

  /** Ends the thread once its requests are answered (a newer checkpoint is served by a new one). */
  retire(): void {
    this.retiring = true;
    if (this.calls.size === 0) void this.close();
  }

  /** Cancels the thread's requests and ends it once its engine has stopped (at most `ms` later, then by force). */
  async close(ms = 10_000): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.send({ type: "close" });
    const timer = setTimeout(() => void this.worker.terminate(), ms);
    await exited;
    clearTimeout(timer);
  }

  private send(msg: ToWorker): void {
    if (!this.dead) this.worker.postMessage(msg);
  }

  private settle(id: number, fn: (c: Call) => void): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    fn(call);
    if (this.retiring && this.calls.size === 0) void this.close();
  }

  private loadError(e: WorkerError): Error {
    // A bad folder is bad input (serve-policy says so naming the file), as when it loaded in-process.
    if (e.name === "DataError" && e.file !== undefined && e.reason !== undefined) {
      const err = new DataError(e.file, {}, e.reason);
      err.message = e.message;
      return err;
    }
    return new OpenAiError(500, `the model \`${this.id}\` cannot be loaded: ${e.message}`, { code: "model_load_failed" });
  }

  private requestError(e: WorkerError): OpenAiError {
    if (e.code === "model_load_failed") return new OpenAiError(500, `the model \`${this.id}\` cannot be loaded: ${e.message}`, { code: "model_load_failed" });
    if (e.status >= 500 && e.code === undefined) {
      console.error(`[v1] model ${this.id}: ${e.message}`);
      return new OpenAiError(500, "internal error");
    }
    return new OpenAiError(e.status, e.message, {
      ...(e.param !== undefined ? { param: e.param } : {}),
      ...(e.code !== undefined ? { code: e.code } : {}),
      ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
    });
  }
}

/**
 * One served model in a worker thread of its own (started by worker-client.ts): its tokenizer,
 * its PolicyEngine (which batches concurrent requests) and everything whose cost grows with what
 * a client sends. The server's event loop only forwards requests and streams replies, so a long
 * prompt or a long generation never delays a room's timestep.
 *
 * It reads config.json and the tokenizer first and reports the bounds the event loop checks
 * requests against (ModelMeta), then loads the weights on the first request (or on `load`).
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { loadCheckpoint } from "../../models/checkpoint.js";
import type { TokenAutomaton } from "../../models/grammar/index.js";
import { readConfig } from "../../models/config.js";
import { PolicyTokenizer } from "../../models/tokenizer.js";
import { DataError } from "../../worlds/core/errors.js";
import { CancelledError, PolicyEngine, QueueFullError, type EngineStats } from "./engine.js";
import { OpenAiError } from "./errors.js";
import { formatChecker } from "./format-check.js";
import { samplingOf } from "./sampling-params.js";
import type { FromWorker, GenerateParams, ModelMeta, ModelWorkerData, ToWorker, WorkerError } from "./worker-protocol.js";

const port = parentPort;
if (!port) throw new Error("server/openai/worker.ts runs as a worker thread (worker-client.ts starts it)");
const data = workerData as ModelWorkerData;
const post = (msg: FromWorker) => port.postMessage(msg);

function workerError(err: unknown): WorkerError {
  if (err instanceof OpenAiError) {
    return { status: err.status, message: err.message, ...(err.param ? { param: err.param } : {}), ...(err.code ? { code: err.code } : {}), ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) };
  }
  if (err instanceof QueueFullError) return { status: 429, message: `${err.message}; retry later`, code: "server_busy", retryAfterMs: err.retryAfterMs };
  const e = err as Error & { file?: string; reason?: string };
  return { status: 500, message: e.message ?? String(err), name: e.name, ...(typeof e.file === "string" ? { file: e.file } : {}), ...(typeof e.reason === "string" ? { reason: e.reason } : {}) };
}

/** The longest text one token stands for, in bytes: a prompt of B bytes is at least B / this many tokens. */
function maxTokenBytes(tokenizer: PolicyTokenizer): number {
  let most = 1;
  for (let id = 0; id < tokenizer.vocabSize; id++) most = Math.max(most, tokenizer.tokenBytes(id).length);
  return most;
}

let engine: PolicyEngine | undefined;
let loading: Promise<PolicyEngine> | undefined;

function load(): Promise<PolicyEngine> {
  loading ??= (async () => {
    let ck;
    try {
      ck = loadCheckpoint(data.dir, data.model);
    } catch (err) {
      // Tried again on the next request: the folder may be fixed meanwhile.
      loading = undefined;
      throw err;
    }
    engine = new PolicyEngine(ck.model, ck.tokenizer, {
      ...(data.maxBatch !== undefined ? { maxBatch: data.maxBatch } : {}),
      ...(data.maxWaiting !== undefined ? { maxWaiting: data.maxWaiting } : {}),
    });
    lastStats = JSON.stringify(engine.stats);
    post({ type: "loaded", stats: { ...engine.stats } });
    return engine;
  })();
  return loading;
}

const inflight = new Map<number, AbortController>();

async function generate(id: number, messages: Parameters<PolicyTokenizer["applyChatTemplate"]>[0], params: GenerateParams): Promise<void> {
  const controller = new AbortController();
  inflight.set(id, controller);
  try {
    // A schema the checker cannot read is refused before any work.
    const check = formatChecker(params.responseFormat);
    let e: PolicyEngine;
    try {
      e = await load();
    } catch (err) {
      throw new OpenAiError(500, (err as Error).message, { code: "model_load_failed" });
    }
    if (controller.signal.aborted) throw new CancelledError();
    const tok = e.tokenizer;
    const prompt = tok.encode(tok.applyChatTemplate(messages, { addGenerationPrompt: true }));
    const sampling = samplingOf(params, prompt.length, e.contextLength);
    // Compiled here, not on the event loop: a schema's cost grows with what the client sent.
    // Refused before `admitted`, which sends a stream's 200. The compiler is loaded when a
    // request first needs it, so that the thread reports its model's bounds as soon as before.
    let constraint: TokenAutomaton | undefined;
    if (data.enforceFormat !== false && params.responseFormat && params.responseFormat.type !== "text") {
      const { checkBudget, responseGrammar } = await import("./response-grammar.js");
      constraint = responseGrammar(params.responseFormat, tok);
      if (constraint) checkBudget(constraint, sampling.maxTokens, params.maxTokensParam);
    }
    e.admit();
    post({ type: "admitted", id, promptTokens: prompt.length });
    postStats();
    const choices = await e.generate({
      prompt,
      ...sampling,
      ...(constraint ? { constraint } : {}),
      signal: controller.signal,
      ...(params.stream ? { onDelta: (choice: number, text: string, logprobs: Parameters<NonNullable<Parameters<PolicyEngine["generate"]>[0]["onDelta"]>>[2]) => post({ type: "delta", id, choice, text, logprobs }) } : {}),
    });
    postStats();
    post({
      type: "done",
      id,
      promptTokens: prompt.length,
      choices: choices.map((c) => ({
        text: c.text,
        completionTokens: c.tokens.length,
        ...(c.logprobs ? { logprobs: c.logprobs } : {}),
        finishReason: c.finishReason,
        ...(check ? { formatCheck: check(c.text) } : {}),
      })),
    });
  } catch (err) {
    postStats();
    post({ type: "failed", id, error: workerError(err), ...(err instanceof CancelledError ? { cancelled: true } : {}) });
  } finally {
    inflight.delete(id);
  }
}

// The engine's counters whenever they change (the server's health reads the latest): with every
// reply, and in between on a short timer (a batch starting, a request cancelled).
let lastStats = "";
function postStats(): void {
  if (!engine) return;
  const now = JSON.stringify(engine.stats);
  if (now === lastStats) return;
  lastStats = now;
  post({ type: "stats", stats: JSON.parse(now) as EngineStats });
}
setInterval(postStats, 20).unref();

port.on("message", (msg: ToWorker) => {
  if (msg.type === "load") {
    load().catch((err: unknown) => post({ type: "load_failed", error: workerError(err) }));
  } else if (msg.type === "generate") {
    void generate(msg.id, msg.messages, msg.params);
  } else if (msg.type === "cancel") {
    inflight.get(msg.id)?.abort();
  } else if (msg.type === "close") {
    for (const c of inflight.values()) c.abort();
    // The thread ends when nothing is left to run: a native step still in flight calls back into
    // this thread when it is done, so the thread must not be torn down under it.
    const done = setInterval(() => {
      if (inflight.size > 0 || engine?.stats.running) return;
      clearInterval(done);
      port.close();
    }, 5);
  }
});

try {
  // As loadCheckpoint says it, before anything in the folder is read.
  if (!existsSync(data.dir) || !statSync(data.dir).isDirectory()) throw new DataError(data.dir, {}, "not a checkpoint folder (it does not exist or is not a directory)");
  const config = readConfig(join(data.dir, "config.json"));
  const tokenizer = PolicyTokenizer.load(data.dir);
  const meta: ModelMeta = { contextLength: config.max_position_embeddings, maxTokenBytes: maxTokenBytes(tokenizer) };
  post({ type: "meta", meta });
} catch (err) {
  post({ type: "load_failed", error: workerError(err) });
}

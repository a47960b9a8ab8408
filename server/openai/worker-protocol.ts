/**
 * What the server's event loop and a model's worker thread (worker.ts) say to each other. The
 * event loop reads, bounds and validates a request; the worker does everything whose cost grows
 * with what the client sent: the chat template, tokenizing, the context check, compiling
 * `response_format` into the grammar sampling keeps to, generation, decoding, and checking the
 * output against `response_format`.
 *
 * `responseFormat` travels to the worker whole: the schema is compiled and enforced there.
 */
import type { ChatMessage } from "../../models/chat-template.js";
import type { ModelOptions } from "../../models/native.js";
import type { EngineStats, TokenLogprob } from "./engine.js";
import type { FormatCheck } from "./format-check.js";
import type { ResponseFormat } from "./schemas.js";

export interface ModelWorkerData {
  readonly dir: string;
  /** The device and precision of the serving process's --device (module state does not cross threads). */
  readonly model: ModelOptions;
  readonly maxBatch?: number;
  readonly maxWaiting?: number;
  /** false: response_format is only checked after sampling (serve-policy --no-enforce-format). */
  readonly enforceFormat?: boolean;
}

/** What bounds a request before it is tokenized (reported as soon as the worker has read the tokenizer). */
export interface ModelMeta {
  /** The longest prompt plus completion the model takes, in tokens. */
  readonly contextLength: number;
  /** The most bytes of text one token of the vocabulary stands for. */
  readonly maxTokenBytes: number;
}

/** The sampling fields of a chat request, as validated on the event loop. */
export interface GenerateParams {
  readonly n: number;
  readonly seed: number | null;
  readonly temperature: number | null;
  readonly topP: number | null;
  readonly topK: number | null;
  /** max_completion_tokens, else max_tokens; null: the rest of the context up to DEFAULT_MAX_TOKENS. */
  readonly maxTokens: number | null;
  readonly maxTokensParam: "max_tokens" | "max_completion_tokens";
  readonly stop: readonly string[];
  readonly logprobs: boolean;
  readonly stream: boolean;
  readonly responseFormat: ResponseFormat | null;
}

export type ToWorker =
  | { readonly type: "load" }
  | { readonly type: "generate"; readonly id: number; readonly messages: readonly ChatMessage[]; readonly params: GenerateParams }
  | { readonly type: "cancel"; readonly id: number }
  /** Cancel everything and end the thread once the engine has stopped (a native step in flight must finish first). */
  | { readonly type: "close" };

/** An error in OpenAI's terms (errors.ts rebuilds an OpenAiError from it). */
export interface WorkerError {
  readonly status: number;
  readonly message: string;
  readonly param?: string;
  readonly code?: string;
  readonly retryAfterMs?: number;
  /** A DataError's name survives the thread boundary (serve-policy reports a bad folder as bad input). */
  readonly name?: string;
  readonly file?: string;
  readonly reason?: string;
}

export interface WorkerChoice {
  readonly text: string;
  readonly completionTokens: number;
  readonly logprobs?: readonly TokenLogprob[];
  readonly finishReason: "stop" | "length";
  readonly formatCheck?: FormatCheck;
}

export type FromWorker =
  | { readonly type: "meta"; readonly meta: ModelMeta }
  | { readonly type: "loaded"; readonly stats: EngineStats }
  | { readonly type: "load_failed"; readonly error: WorkerError }
  | { readonly type: "stats"; readonly stats: EngineStats }
  /** The request was tokenized and queued: a stream may send its 200 now. */
  | { readonly type: "admitted"; readonly id: number; readonly promptTokens: number }
  | { readonly type: "delta"; readonly id: number; readonly choice: number; readonly text: string; readonly logprobs: readonly TokenLogprob[] }
  | { readonly type: "done"; readonly id: number; readonly promptTokens: number; readonly choices: readonly WorkerChoice[] }
  | { readonly type: "failed"; readonly id: number; readonly error: WorkerError; readonly cancelled?: boolean };

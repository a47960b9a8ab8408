/**
 * Serves one policy checkpoint on the native engine to many HTTP clients at once.
 *
 * Requests wait in a queue; whenever the model is free, the waiting requests that share sampling
 * settings (temperature, top-p, top-k) run together as one KV-cached batch, each sequence with its
 * own seed, token budget and stop strings (the engine lets the caller end any sequence, so those
 * need not match). Decoding advances a few tokens at a time so that streamed text goes out as it
 * is made, a client that hangs up stops its sequences, and a stop string ends a sequence early.
 *
 * NativeCompleter (models/generate.ts) batches the same way but returns whole completions;
 * this engine is its streaming, per-request counterpart for the server.
 */
import type { TokenAutomaton } from "../../models/grammar/index.js";
import type { PolicyModel } from "../../models/model.js";
import { loadNative, nativeConstraint, type NativeGeneration } from "../../models/native.js";
import { cutAtStopString } from "../../models/sampling.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";

export interface EngineRequest {
  readonly prompt: readonly number[];
  /** Completions of the prompt (each with seed seeds[i]). */
  readonly n: number;
  readonly seeds: readonly number[];
  readonly maxTokens: number;
  /** 0: greedy. */
  readonly temperature: number;
  readonly topP: number;
  /** 0: no limit. */
  readonly topK: number;
  readonly stop: readonly string[];
  /** Record each token's text and log-probability. */
  readonly logprobs: boolean;
  /** The grammar every choice must follow (response_format), finishing within maxTokens. */
  readonly constraint?: TokenAutomaton;
  readonly signal?: AbortSignal;
  /** Streaming: new text of a choice as soon as it is certain (never part of a stop string). */
  readonly onDelta?: (choice: number, text: string, logprobs: readonly TokenLogprob[]) => void;
}

export interface TokenLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[];
}

export interface EngineChoice {
  readonly text: string;
  /** Generated tokens, through the one that ended the completion. */
  readonly tokens: readonly number[];
  readonly logprobs?: readonly TokenLogprob[];
  readonly finishReason: "stop" | "length";
}

export interface EngineStats {
  requests: number;
  completed: number;
  cancelled: number;
  rejected: number;
  running: number;
  waiting: number;
  /** The most requests that were ever generating at once. */
  peakRunning: number;
  batches: number;
  promptTokens: number;
  completionTokens: number;
}

export class QueueFullError extends Error {
  constructor(
    readonly waiting: number,
    readonly retryAfterMs: number,
  ) {
    super(`the server is busy: ${waiting} requests are already waiting`);
    this.name = "QueueFullError";
  }
}

export class CancelledError extends Error {
  constructor() {
    super("the request was cancelled");
    this.name = "CancelledError";
  }
}

export interface EngineOptions {
  /** Sequences decoded together at most (default 32). */
  readonly maxBatch?: number;
  /** Requests allowed to wait; past it a request is refused with 429 (default 256). */
  readonly maxWaiting?: number;
}

interface Pending {
  readonly req: EngineRequest;
  readonly key: string;
  readonly resolve: (c: EngineChoice[]) => void;
  readonly reject: (e: unknown) => void;
  readonly choices: (EngineChoice | undefined)[];
  left: number;
  cancelled: boolean;
}

/** One sequence of a batch: a choice of a request. */
interface Seq {
  readonly p: Pending;
  readonly choice: number;
  done: boolean;
  emitted: string;
  sentTokens: number;
}

export class PolicyEngine {
  private readonly waiting: Pending[] = [];
  private busy = false;
  private readonly maxBatch: number;
  private readonly maxWaiting: number;
  /** Milliseconds per batch, smoothed: the retry hint given to clients turned away. */
  private avgMs = 1000;
  readonly stats: EngineStats = { requests: 0, completed: 0, cancelled: 0, rejected: 0, running: 0, waiting: 0, peakRunning: 0, batches: 0, promptTokens: 0, completionTokens: 0 };

  constructor(
    readonly model: PolicyModel,
    readonly tokenizer: PolicyTokenizer,
    opts: EngineOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 32;
    this.maxWaiting = opts.maxWaiting ?? 256;
  }

  /** The longest prompt plus completion the model takes. */
  get contextLength(): number {
    return this.model.config.max_position_embeddings;
  }

  /** Throws QueueFullError when no more requests may wait (a stream checks before it answers 200). */
  admit(): void {
    if (this.waiting.length >= this.maxWaiting) {
      this.stats.rejected++;
      throw new QueueFullError(this.waiting.length, Math.max(50, Math.round(this.avgMs)));
    }
  }

  generate(req: EngineRequest): Promise<EngineChoice[]> {
    try {
      this.admit();
    } catch (err) {
      return Promise.reject(err);
    }
    if (req.signal?.aborted) return Promise.reject(new CancelledError());
    this.stats.requests++;
    return new Promise((resolve, reject) => {
      const key = `${req.temperature}|${req.topP}|${req.topK}`;
      this.waiting.push({ req, key, resolve, reject, choices: new Array(req.n), left: req.n, cancelled: false });
      this.stats.waiting = this.waiting.length;
      if (!this.busy) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    this.busy = true;
    try {
      for (;;) {
        const batch = this.takeBatch();
        if (batch.length === 0) break;
        const started = performance.now();
        try {
          await this.run(batch);
        } catch (err) {
          for (const p of batch) if (p.left > 0) p.reject(err);
        }
        this.avgMs = 0.8 * this.avgMs + 0.2 * (performance.now() - started);
      }
    } finally {
      this.busy = false;
    }
  }

  /** The oldest waiting request and every later one with the same sampling settings, up to maxBatch sequences. */
  private takeBatch(): Pending[] {
    // Requests whose clients left while waiting go no further.
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const p = this.waiting[i]!;
      if (p.req.signal?.aborted) {
        this.waiting.splice(i, 1);
        this.stats.cancelled++;
        p.reject(new CancelledError());
      }
    }
    const first = this.waiting[0];
    const batch: Pending[] = [];
    if (!first) return batch;
    let seqs = 0;
    let longest = 0;
    let budget = 0;
    for (let i = 0; i < this.waiting.length; ) {
      const p = this.waiting[i]!;
      // The batch's cache holds its longest prompt plus its largest budget: that must fit the model.
      const fits = Math.max(longest, p.req.prompt.length) + Math.max(budget, p.req.maxTokens) <= this.contextLength;
      if (p.key === first.key && (batch.length === 0 || (seqs + p.req.n <= this.maxBatch && fits))) {
        batch.push(p);
        seqs += p.req.n;
        longest = Math.max(longest, p.req.prompt.length);
        budget = Math.max(budget, p.req.maxTokens);
        this.waiting.splice(i, 1);
      } else i++;
    }
    this.stats.waiting = this.waiting.length;
    return batch;
  }

  private async run(batch: Pending[]): Promise<void> {
    const seqs: Seq[] = batch.flatMap((p) => Array.from({ length: p.req.n }, (_, choice) => ({ p, choice, done: false, emitted: "", sentTokens: 0 })));
    const head = batch[0]!.req;
    const { Generation } = loadNative();
    const gen = new Generation(
      this.model.native,
      seqs.map((s) => Int32Array.from(s.p.req.prompt)),
      {
        maxNewTokens: Math.max(...batch.map((p) => p.req.maxTokens)),
        temperature: head.temperature,
        topK: head.topK,
        topP: head.topP,
        seeds: seqs.map((s) => s.p.req.seeds[s.choice]!),
        stopTokenIds: [...this.tokenizer.stopTokenIds],
        ...(seqs.some((s) => s.p.req.constraint)
          ? { constraints: seqs.map((s) => (s.p.req.constraint ? nativeConstraint(s.p.req.constraint) : null)), budgets: seqs.map((s) => s.p.req.maxTokens) }
          : {}),
      },
    );
    this.stats.batches++;
    this.stats.running = batch.length;
    this.stats.peakRunning = Math.max(this.stats.peakRunning, batch.length);
    for (const p of batch) this.stats.promptTokens += p.req.prompt.length * p.req.n;
    // Short steps when someone reads along or may need stopping; longer ones cost less.
    const chunk = seqs.some((s) => s.p.req.onDelta || s.p.req.stop.length > 0 || s.p.req.signal) ? 4 : 16;
    try {
      let running = gen.size;
      while (running > 0) {
        running = await gen.stepAsync(chunk);
        seqs.forEach((s, i) => {
          if (!s.done) this.advance(gen, s, i);
        });
        running = gen.running;
      }
      seqs.forEach((s, i) => {
        if (s.done) return;
        if (s.p.cancelled || s.p.req.signal?.aborted) this.cancel(s);
        else this.finish(s, gen.result(i));
      });
    } finally {
      this.stats.running = 0;
    }
  }

  /** After a few steps: ends a sequence that was cancelled, hit its budget or a stop string; streams the rest. */
  private advance(gen: NativeGeneration, s: Seq, i: number): void {
    const req = s.p.req;
    if (req.signal?.aborted || s.p.cancelled) {
      gen.stop(i);
      // What a cancelled sequence made still counts: the work was done.
      this.stats.completionTokens += gen.result(i).tokens.length;
      this.cancel(s);
      return;
    }
    const r = gen.result(i);
    if (r.finishReason !== null) return this.finish(s, r);
    const tokens = Array.from(r.tokens);
    if (tokens.length >= req.maxTokens) {
      gen.stop(i);
      return this.finish(s, r);
    }
    if (req.stop.length === 0 && !req.onDelta) return;
    // Decoded once for both questions; finish() finds where a stop string cuts the tokens.
    const text = this.decode(tokens);
    if (req.stop.some((stop) => text.includes(stop))) {
      gen.stop(i);
      return this.finish(s, r);
    }
    if (req.onDelta) this.stream(s, tokens, r.logprobs, heldBack(text, req.stop));
  }

  private readonly decode = (ids: readonly number[]): string => this.tokenizer.decode(ids);

  private stream(s: Seq, tokens: readonly number[], logprobs: Float32Array, safe: string): void {
    if (safe.length <= s.emitted.length || !safe.startsWith(s.emitted)) return;
    let upto = s.sentTokens;
    if (s.p.req.logprobs) {
      // Tokens whose text is now all out.
      while (upto < tokens.length && this.decode(tokens.slice(0, upto + 1)).length <= safe.length) upto++;
    }
    const delta = safe.slice(s.emitted.length);
    s.emitted = safe;
    s.p.req.onDelta!(s.choice, delta, s.p.req.logprobs ? this.tokenLogprobs(tokens.slice(s.sentTokens, upto), logprobs.subarray(s.sentTokens, upto)) : []);
    s.sentTokens = upto;
  }

  private finish(s: Seq, r: { tokens: Int32Array; logprobs: Float32Array; finishReason: string | null }): void {
    const req = s.p.req;
    let tokens = Array.from(r.tokens).slice(0, req.maxTokens);
    const lps = r.logprobs.subarray(0, tokens.length);
    let text: string;
    let finishReason: EngineChoice["finishReason"];
    let content = tokens;
    const cut = cutAtStopString(tokens, this.decode, req.stop);
    if (cut) {
      tokens = tokens.slice(0, cut.keep);
      content = tokens;
      text = cut.text;
      finishReason = "stop";
    } else if (r.finishReason === "stop_token" && tokens.length === r.tokens.length) {
      content = tokens.slice(0, -1);
      text = this.decode(content);
      finishReason = "stop";
    } else {
      text = this.decode(tokens);
      finishReason = "length";
    }
    s.done = true;
    this.stats.completionTokens += tokens.length;
    const logprobs = req.logprobs ? this.tokenLogprobs(content, lps.subarray(0, content.length)) : undefined;
    if (req.onDelta) {
      const rest = text.startsWith(s.emitted) ? text.slice(s.emitted.length) : "";
      if (rest || (logprobs && s.sentTokens < content.length)) req.onDelta(s.choice, rest, logprobs ? logprobs.slice(s.sentTokens) : []);
    }
    s.p.choices[s.choice] = { text, tokens, ...(logprobs ? { logprobs } : {}), finishReason };
    if (--s.p.left === 0) {
      this.stats.completed++;
      s.p.resolve(s.p.choices as EngineChoice[]);
    }
  }

  private cancel(s: Seq): void {
    s.done = true;
    if (!s.p.cancelled) {
      s.p.cancelled = true;
      this.stats.cancelled++;
      s.p.reject(new CancelledError());
    }
  }

  private tokenLogprobs(tokens: readonly number[], logprobs: ArrayLike<number>): TokenLogprob[] {
    return tokens.map((t, i) => {
      return { token: this.decode([t]), logprob: logprobs[i]!, bytes: this.tokenizer.tokenBytes(t) };
    });
  }
}

/**
 * The part of a growing text that can go out now: not an incomplete character (a byte-level
 * token may end mid-character, decoded as U+FFFD) and not the start of a stop string.
 */
export function heldBack(text: string, stops: readonly string[]): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0xfffd) end--;
  let safe = text.slice(0, end);
  for (const stop of stops) {
    for (let k = Math.min(stop.length - 1, safe.length); k > 0; k--) {
      if (safe.endsWith(stop.slice(0, k))) {
        safe = safe.slice(0, safe.length - k);
        break;
      }
    }
  }
  return safe;
}

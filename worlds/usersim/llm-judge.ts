/**
 * The LLM judge: a language model scores each tag of a reply against the ground truth by the tag's
 * rubric (prompts.ts: judge.txt and rubric-<tag>.txt), for data whose states are free text or
 * missing (real conversations), where the offline judge can only count shared words.
 *
 *   batched   the generations of one tag for one reference (a GRPO group's) go in one request,
 *             as HumanLM batches them, which keeps the scores of a group consistent with each
 *             other; at most `maxBatch` per request
 *   cached    a score is kept per (tag, generation, reference) and never asked for again; a
 *             request in flight is shared by whoever needs the same score meanwhile
 *   read      strictly (parseJudgeReply: one score in [0, 1] per generation); an answer that does
 *             not read is asked again (`attempts` in all), then the tag's generations in that
 *             request fall back to the offline judge, counted in `stats`
 *
 * The model is the caller's (JudgeModel: an OpenAI-compatible endpoint through agents/llm/, with
 * its retries, backoff and request rate). An endpoint that fails for good fails the judgement:
 * a benchmark run stops (and resumes), a trainer stops, rather than scoring on without its judge.
 *
 * Rewards are combined as the offline judge combines them (judge.ts): the weighted mean of every
 * tag's score and the response's, -1 for a malformed reply (which is never sent to the model).
 */
import type { JudgeModel } from "../question/benchmark.js";
import { rougeL } from "../core/rewards/rouge-l.js";
import { tags, type Hierarchy } from "./hierarchy.js";
import { combine, malformedJudgement, scoreState, type Judgement, type JudgeOptions, type Method, type Reference, type StateScore } from "./judge.js";
import { judgeCacheKey, judgePrompt, judgeReference, JudgeVerdictSchema, parseJudgeReply } from "./prompts.js";
import { parseReply, type Reply } from "./reply.js";

export interface LlmJudgeOptions {
  readonly weights?: JudgeOptions["weights"];
  /** Generations per request at most (default 16). */
  readonly maxBatch?: number;
  /** Requests per batch when the answer does not read: the first and the retries (default 2). */
  readonly attempts?: number;
  /** Scores kept; the oldest go first (default 100,000). */
  readonly cacheSize?: number;
}

export interface LlmJudgeStats {
  /** Requests sent (retries of unreadable answers included). */
  requests: number;
  /** Scores the model gave. */
  scored: number;
  /** Scores found in the cache (or in a request already in flight). */
  cached: number;
  /** Scores taken from the offline judge because the model's answer did not read. */
  fallbacks: number;
  /** Why the last fallback happened. */
  lastFallback?: string;
}

/** A score the model gave ("llm"), or the offline judge's in its place. */
interface Scored {
  readonly score: number;
  readonly method: Method;
}

export class LlmJudge {
  readonly stats: LlmJudgeStats = { requests: 0, scored: 0, cached: 0, fallbacks: 0 };
  private readonly cache = new Map<string, Promise<Scored>>();
  private readonly maxBatch: number;
  private readonly attempts: number;
  private readonly cacheSize: number;

  constructor(
    readonly model: JudgeModel,
    private readonly opts: LlmJudgeOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 16;
    this.attempts = opts.attempts ?? 2;
    this.cacheSize = opts.cacheSize ?? 100_000;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1) throw new Error(`maxBatch must be a positive integer (got ${this.maxBatch})`);
    if (!Number.isInteger(this.attempts) || this.attempts < 1) throw new Error(`attempts must be a positive integer (got ${this.attempts})`);
  }

  /**
   * Judges replies written for one conversation (`context`, as the user read it) against one
   * reference: a GRPO group, or one benchmark answer. Malformed texts get the lowest reward
   * without a request.
   */
  async judgeTexts(texts: readonly string[], reference: Reference, h: Hierarchy, context: string, signal?: AbortSignal): Promise<Judgement[]> {
    const parsed = texts.map((t) => parseReply(t, h));
    const replies = parsed.flatMap((p) => (p.ok ? [p.action] : []));
    const byTag = new Map<string, Scored[]>();
    await Promise.all(
      tags(h).map(async (tag) => {
        const generations = replies.map((r) => textOf(r, tag, h));
        byTag.set(tag, await this.scoreTag(h, tag, context, reference, generations, signal));
      }),
    );
    let k = 0;
    return parsed.map((p) => {
      if (!p.ok) return malformedJudgement(p.error, reference, h);
      const i = k++;
      const states: Record<string, StateScore> = {};
      for (const d of h.states) {
        states[d.name] = byTag.get(d.name)![i]!;
      }
      const response = byTag.get(h.response.name)![i]!.score;
      const alignment = combine(states, response, h, this.opts);
      return { wellFormed: true, states, response, alignment, reward: alignment };
    });
  }

  /** One tag's scores for `generations`, in order: cached ones as they are, the rest asked for in batches. */
  async scoreTag(h: Hierarchy, tag: string, context: string, reference: Reference, generations: readonly string[], signal?: AbortSignal): Promise<Scored[]> {
    const ref = judgeReference(h, tag, reference);
    const keys = generations.map((g) => judgeCacheKey(tag, g, ref));
    const pending: { key: string; text: string; resolve: (s: Scored) => void; reject: (e: unknown) => void }[] = [];
    const found = keys.map((key, i) => {
      const hit = this.cache.get(key);
      if (hit) {
        this.stats.cached++;
        return hit;
      }
      let resolve!: (s: Scored) => void;
      let reject!: (e: unknown) => void;
      const p = new Promise<Scored>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.remember(key, p);
      pending.push({ key, text: generations[i]!.trim(), resolve, reject });
      return p;
    });
    for (let start = 0; start < pending.length; start += this.maxBatch) {
      const batch = pending.slice(start, start + this.maxBatch);
      this.ask(h, tag, context, reference, batch.map((b) => b.text), signal).then(
        (scores) => batch.forEach((b, j) => b.resolve(scores[j]!)),
        (err: unknown) => {
          // Not cached: an endpoint failure is not the judge's verdict, and a later call asks again.
          for (const b of batch) {
            this.cache.delete(b.key);
            b.reject(err);
          }
        },
      );
    }
    return Promise.all(found);
  }

  private remember(key: string, p: Promise<Scored>): void {
    this.cache.set(key, p);
    // A Map keeps insertion order: the first key is the oldest.
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
  }

  /** One request for a batch of one tag's generations; its answer read, asked again, or replaced by the offline judge. */
  private async ask(h: Hierarchy, tag: string, context: string, reference: Reference, generations: readonly string[], signal?: AbortSignal): Promise<Scored[]> {
    const prompt = judgePrompt({ hierarchy: h, tag, context, reference, generations });
    let why = "";
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      this.stats.requests++;
      const answer = await this.model.ask(prompt, JudgeVerdictSchema, signal ? { signal } : {});
      try {
        const scores = parseJudgeReply(answer, generations.length);
        this.stats.scored += scores.length;
        return scores.map((score) => ({ score, method: "llm" }));
      } catch (err) {
        why = (err as Error).message;
      }
    }
    this.stats.fallbacks += generations.length;
    this.stats.lastFallback = `${tag}: ${why}`;
    // What the model would have judged against: the tag's truth, else the real reply.
    const offline = (g: string): Scored => {
      const s = tag === h.response.name ? undefined : scoreState(tag, g, reference);
      return s && s.score !== null ? { score: s.score, method: s.method } : { score: rougeL(g, reference.response).fmeasure, method: "free-text" };
    };
    return generations.map(offline);
  }
}

function textOf(r: Reply, tag: string, h: Hierarchy): string {
  return tag === h.response.name ? r.response : (r.states[tag] ?? "");
}

/**
 * The `llm` agent: any OpenAI-compatible chat endpoint in a world's seat.
 *
 * Each turn is one request (two in simulation mode), answered as JSON that must match the
 * world's action schema: the schema goes to the endpoint as `response_format` and into the
 * system message, and the reply is read strictly (structured.ts). A reply that cannot be read
 * gets one repair attempt: the model sees its reply and the reason, and answers again.
 *
 * A question whose answer has a form of its own (the task's AnswerForm) is asked in it: JSON of
 * a schema (the social world's reaction) is that schema as strict `response_format`, and the
 * answer is the value's JSON; a text pattern (usersim's tagged reply) goes into the system message
 * and is checked on the answer: a reply outside it is repaired once, then kept all the same (the
 * benchmark's judge scores it).
 *
 * Benchmark questions run in the task's mode, as the social-world-model project runs them:
 * - vanilla: the benchmark's prompt (story and question);
 * - simulation: the model first writes the story's socialized context (validated with
 *   SocializedContextSchema and the one-line-per-agent rules, repaired once if need be), then
 *   answers from that context alone. The context is kept in the turn's log as
 *   `info.socializedContext` (what eval-context --run and export --source agent read); questions
 *   about one story share one context, as upstream caches one per story.
 *
 * When the endpoint fails for good (retries spent, deadline passed, a reply still unreadable
 * after the repair) the agent throws: the game loop logs the error with the turn and acts with
 * its fallback, and the episode goes on.
 */
import type { z } from "zod";
import { AgentFailure, type Agent, type AgentReply, type AgentTurn } from "../../worlds/core/agent.js";
import { errorMessage } from "../../worlds/core/loop.js";
import { parseAction } from "../policy/action.js";
import { hashString } from "../../worlds/core/rng.js";
import { SocializedContextSchema, validateSocializedContext, type SocializedContext } from "../../worlds/core/socialized-context.js";
import { questionTaskOf, type QuestionTask } from "../../worlds/question/world.js";
import { sharedClient, type ChatClient, type CallResult, type ChatMessage, type Usage } from "./client.js";
import { parseLlmTarget, type LlmOptions, type LlmTarget } from "./options.js";
import { contextPrompt, formatInstruction, patternInstruction, repairMessages, simulationAnswerPrompt, systemMessages, turnPrompt } from "./prompts.js";
import { answerResponseSchema, readStructured, responseFormat, responseSchema, type ResponseSchema } from "./structured.js";

/** One request as the turn's log keeps it. */
interface CallRecord {
  readonly purpose: string;
  readonly attempts: number;
  readonly latencyMs: number;
  readonly finishReason: string | null;
  readonly usage?: { prompt_tokens: number; completion_tokens: number };
  /** Why earlier attempts failed (they were retried). */
  readonly failures?: readonly string[];
}

/** A reply that could not be used, kept for the log (and for learning from). */
interface Rejected {
  readonly purpose: string;
  readonly reply: string;
  readonly error: string;
}

class TurnLog {
  readonly calls: CallRecord[] = [];
  readonly rejected: Rejected[] = [];

  add(purpose: string, r: CallResult): void {
    const u = r.completion.usage;
    this.calls.push({
      purpose,
      attempts: r.attempts,
      latencyMs: Math.round(r.latencyMs * 1000) / 1000,
      finishReason: r.completion.choices[0]!.finish_reason ?? null,
      ...(u ? { usage: { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens } } : {}),
      ...(r.failures.length ? { failures: r.failures } : {}),
    });
  }

  usage(): Usage {
    let prompt = 0;
    let completion = 0;
    for (const c of this.calls) {
      prompt += c.usage?.prompt_tokens ?? 0;
      completion += c.usage?.completion_tokens ?? 0;
    }
    return { prompt_tokens: prompt, completion_tokens: completion };
  }
}

/** The outcome of writing a story's context (shared by the questions about the story). */
interface ContextOutcome {
  /** What the model wrote, parsed; undefined when no reply was valid JSON of the schema. */
  readonly context?: SocializedContext;
  /** Structure problems left after the repair (the context is used all the same). */
  readonly problems: readonly string[];
  readonly log: TurnLog;
  readonly error?: string;
  /** The endpoint failed (rather than the model writing something unusable). */
  readonly endpointFailed?: boolean;
}

const MAX_CONTEXTS = 256;
const KEEP_REPLY = 4000;

export class LlmAgent implements Agent {
  private readonly contexts = new Map<string, Promise<ContextOutcome>>();
  private readonly o: LlmOptions;

  constructor(
    readonly id: string,
    readonly target: LlmTarget,
    readonly client: ChatClient,
  ) {
    this.o = target.options;
  }

  async act(turn: AgentTurn): Promise<AgentReply> {
    const log = new TurnLog();
    const info: Record<string, unknown> = { model: this.target.model, endpoint: this.target.baseUrl };
    const asked: { user?: string } = {};
    try {
      return await this.answer(turn, log, info, asked);
    } catch (err) {
      // The turn fails, but what was asked and answered is kept with it in the log.
      const last = log.rejected.at(-1);
      throw new AgentFailure(errorMessage(err), {
        ...(asked.user !== undefined ? { prompt: asked.user } : {}),
        ...(last ? { raw: last.reply } : {}),
        info: { ...info, calls: log.calls, usage: log.usage(), ...(log.rejected.length ? { rejected: log.rejected } : {}) },
      });
    }
  }

  private async answer(turn: AgentTurn, log: TurnLog, info: Record<string, unknown>, asked: { user?: string }): Promise<AgentReply> {
    const task = questionTaskOf(turn.observation.data);
    let user: string;
    if (task?.mode === "simulation") {
      const ctx = await this.context(task, turn);
      // The context's requests are logged with the first question that asked for it.
      if (!ctx.reused) {
        log.calls.push(...ctx.outcome.log.calls);
        log.rejected.push(...ctx.outcome.log.rejected);
      }
      if (!ctx.outcome.context) throw new Error(`simulation mode: ${ctx.outcome.error ?? "no socialized context"}`);
      info.socializedContext = ctx.outcome.context;
      if (ctx.outcome.problems.length) info.contextProblems = ctx.outcome.problems;
      if (ctx.reused) info.contextReused = true;
      user = simulationAnswerPrompt(task, ctx.outcome.context);
    } else user = task ? task.prompt : turnPrompt(turn);
    asked.user = user;

    const form = task?.answerForm;
    const json = form?.type === "json";
    const pattern = form?.type === "pattern" ? form.pattern : undefined;
    const rs = json ? answerResponseSchema(form.schema) : responseSchema("action", turn.actionSchema);
    const answer = await this.structured<unknown>("answer", rs, user, log, {
      ...(this.o.max_tokens !== undefined ? { maxTokens: this.o.max_tokens } : {}),
      seed: this.seedFor(`${turn.world}|${turn.agent}|${turn.timestep}|${task?.itemId ?? ""}`),
      signal: turn.signal,
      deadline: turn.deadline,
      // The answer in JSON is the reply's JSON, never its bare text.
      ...(json ? {} : { bare: turn.actionSchema }),
      ...(pattern !== undefined ? { guidance: patternInstruction(pattern), check: (v: unknown) => patternProblems(v, new RegExp(pattern)) } : {}),
    });
    info.calls = log.calls;
    info.usage = log.usage();
    if (log.rejected.length) info.rejected = log.rejected;
    if (form) info.answerForm = form.type;
    // A reaction's JSON as the judge reads it: compact, its left-out properties left out.
    return { action: json ? { answer: JSON.stringify(answer.value) } : answer.value, prompt: user, raw: answer.raw, info };
  }

  /** The story's context: written once per story, shared by every question about it. */
  private async context(task: QuestionTask, turn: AgentTurn): Promise<{ outcome: ContextOutcome; reused: boolean }> {
    const k = storyKey(task);
    let p = this.contexts.get(k);
    const reused = p !== undefined;
    if (!p) {
      // Not bound to this turn's deadline: the other questions about the story wait for it too.
      p = this.writeContext(task);
      this.contexts.set(k, p);
      if (this.contexts.size > MAX_CONTEXTS) this.contexts.delete(this.contexts.keys().next().value!);
      // An endpoint failure is not the model's answer: the next question asks again.
      void p.then((o) => {
        if (o.endpointFailed) this.contexts.delete(k);
      });
    }
    return { outcome: await untilAborted(p, turn.signal), reused };
  }

  private async writeContext(task: QuestionTask): Promise<ContextOutcome> {
    const log = new TurnLog();
    const rs = responseSchema("socialized_context", SocializedContextSchema);
    try {
      const r = await this.structured<SocializedContext>("context", rs, contextPrompt(task, rs.schema), log, {
        ...(this.o.context_max_tokens !== undefined ? { maxTokens: this.o.context_max_tokens } : {}),
        seed: this.seedFor(`context|${hashString(storyKey(task))}`),
        // socialized-context.txt carries the schema already.
        systemFormat: false,
        check: (ctx) => validateSocializedContext(ctx),
      });
      return { context: r.value, problems: r.problems, log };
    } catch (err) {
      const e = err as Error & { endpoint?: boolean };
      return { problems: [], log, error: e.message, endpointFailed: e.endpoint === true };
    }
  }

  /**
   * One request and, when its reply cannot be used, one repair. `check` finds problems beyond the
   * schema: they are worth a repair, but a schema-valid reply is kept if the repair is no better.
   */
  private async structured<T>(
    purpose: string,
    rs: ResponseSchema,
    user: string,
    log: TurnLog,
    opts: {
      maxTokens?: number;
      seed?: number | undefined;
      signal?: AbortSignal | undefined;
      deadline?: number | undefined;
      check?: (v: T) => string[];
      systemFormat?: boolean;
      /** The action schema a plain-text endpoint's bare reply is read as (a one-field action's value). */
      bare?: z.ZodType;
      /** Said after the format instruction (an answer's text pattern), whatever the response format. */
      guidance?: string;
    },
  ): Promise<{ value: T; raw: string; problems: readonly string[] }> {
    const kind = this.o.response_format;
    const format = [kind === "text" ? "" : formatInstruction(rs.schema), opts.guidance ?? ""].filter(Boolean).join("\n\n");
    const messages: ChatMessage[] = [...systemMessages(this.o.system, opts.systemFormat === false ? "" : format), { role: "user", content: user }];
    const read = (text: string) => {
      const r = readStructured<T>(text, rs, { lenient: kind === "text" });
      // Plain-text endpoints may answer a one-field action with the bare value.
      if (!r.ok && kind === "text" && opts.bare) {
        try {
          return { ok: true as const, value: parseAction(text, opts.bare) as T };
        } catch {
          // keep the strict reader's error
        }
      }
      return r;
    };
    const first = await this.call(purpose, messages, rs, log, opts);
    const r1 = read(first.text);
    const problems1 = r1.ok && opts.check ? opts.check(r1.value) : [];
    if (r1.ok && problems1.length === 0) return { value: r1.value, raw: first.text, problems: [] };
    const why = r1.ok ? `its structure is wrong: ${problems1.slice(0, 10).join("; ")}${problems1.length > 10 ? `; and ${problems1.length - 10} more` : ""}` : r1.error;
    log.rejected.push({ purpose, reply: first.text.slice(0, KEEP_REPLY), error: why });
    if (!this.o.repair) {
      if (r1.ok) return { value: r1.value, raw: first.text, problems: problems1 };
      throw new Error(`the ${purpose} could not be read (repair is off): ${why}`);
    }
    const second = await this.call(`${purpose}:repair`, repairMessages(messages, first.text, why, format || "Answer with the answer only."), rs, log, opts);
    const r2 = read(second.text);
    if (r2.ok) return { value: r2.value, raw: second.text, problems: opts.check ? opts.check(r2.value) : [] };
    log.rejected.push({ purpose: `${purpose}:repair`, reply: second.text.slice(0, KEEP_REPLY), error: r2.error });
    if (r1.ok) return { value: r1.value, raw: first.text, problems: problems1 };
    throw new Error(`the ${purpose} could not be read after one repair: ${r2.error}`);
  }

  private async call(
    purpose: string,
    messages: ChatMessage[],
    rs: ResponseSchema,
    log: TurnLog,
    opts: { maxTokens?: number; seed?: number | undefined; signal?: AbortSignal | undefined; deadline?: number | undefined },
  ): Promise<CallResult> {
    const format = responseFormat(this.o.response_format, rs);
    try {
      const r = await this.client.chat(
        {
          model: this.target.model,
          messages,
          temperature: this.o.temperature,
          ...(this.o.top_p !== undefined ? { top_p: this.o.top_p } : {}),
          ...(opts.maxTokens !== undefined ? { max_tokens: opts.maxTokens } : {}),
          ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
          ...(format !== undefined ? { response_format: format } : {}),
        },
        { ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}) },
      );
      log.add(purpose, r);
      return r;
    } catch (err) {
      // Marks endpoint failures (not the model's answers): a story's context is asked again.
      throw Object.assign(new Error(`${purpose}: ${(err as Error).message}`), { endpoint: true });
    }
  }

  private seedFor(what: string): number | undefined {
    return this.o.seed === undefined ? undefined : hashString(`${this.o.seed}|${what}`);
  }
}

/** Why an answer's text is not of its pattern (none when it is). */
function patternProblems(value: unknown, pattern: RegExp): string[] {
  const text = String((value as { answer?: unknown }).answer ?? "").trim();
  return pattern.test(text) ? [] : [`the answer's text does not match the required pattern (given above); it begins ${JSON.stringify(text.slice(0, 80))}`];
}

function storyKey(task: QuestionTask): string {
  return `${task.benchmark}\n${task.story}`;
}

/** The promise's value, or a rejection as soon as the signal aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(new Error("cancelled"));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error("cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** `llm:MODEL@BASE_URL?options`: agents with the same endpoint settings share one client (and its limit). */
export function llmAgent(spec: string, target: string): LlmAgent {
  const t = parseLlmTarget(spec, target);
  return new LlmAgent(spec, t, sharedClient(t));
}

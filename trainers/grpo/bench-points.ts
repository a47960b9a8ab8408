/**
 * Decision points from a benchmark file: every question is one, asked exactly as a policy agent
 * is asked it by `bench` (agents/policy/question-prompt.ts: the benchmark's prompt in vanilla mode,
 * the socialized context and question in simulation mode; with `context: "self"` (or `self-latest`) the story and
 * question, the reply writing the world's written context and then its answer line, under the same
 * grammar, its answer read as the agent reads it, the last line), scored by the benchmark's official
 * judge; the reference for F1 and ROUGE-L is the label written as the prompt asks for it. Every
 * sampled reply is logged as a `benchmark_item` record, the layout `bench` writes, so a run's
 * rollouts export (`socialworld export --run ID`) like any benchmark run.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { answerGrammarSchema, type QuestionTask } from "../../worlds/question/world.js";
import { BenchmarkOptionError, type Benchmark, type BenchItem, type BenchmarkOptions, type Mode, recordedOptions } from "../../worlds/question/benchmark.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { itemResult, rewardOf } from "../../benchmarks/runner.js";
import { turnMessages } from "../../agents/policy/action.js";
import { askedQuestion, noWrittenContext } from "../../agents/policy/question-prompt.js";
import { citationSpec, writtenSpec } from "../../agents/policy/action-grammar.js";
import { writtenOrder, type ContextSource } from "../../agents/policy/options.js";
import { citedAnswer, citedLine, type CompactLine } from "../../worlds/core/compact-context.js";
import { traceFidelity, writtenTrace, type WrittenContext } from "../../worlds/core/written-context.js";
import type { FormatResult } from "../../worlds/core/rewards/strict-format.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import type { DecisionPoint, Judged, PointSource, ScoredReply } from "./decision-point.js";

export interface BenchPointsOptions {
  readonly limit?: number;
  readonly system?: string;
  /** The benchmark's options (`bench`'s --hierarchy, --weights, --split, --judge). */
  readonly options?: BenchmarkOptions;
  /**
   * Who writes a simulation-mode question's context (agents/policy/options.ts): the world model
   * (default), or the policy itself, as `policy:DIR?context=self` is asked.
   */
  readonly context?: ContextSource;
}

/** `context: "self"` where the policy cannot write its own context: the mode or the world has none. */
export class WrittenContextUnavailable extends Error {}

/** A graded benchmark's verdicts on a group of replies (its LLM judge's when it has one, in one call), as the trainer's Judged. */
async function judgeGraded(benchmark: Benchmark, item: BenchItem, texts: readonly string[]): Promise<Judged[]> {
  const verdicts = benchmark.assess ? await benchmark.assess(item, texts) : texts.map((t) => benchmark.judge(item, t));
  return verdicts.map((v, i) => ({
    format: v.correct,
    ...(v.correct ? { action: { answer: texts[i]!.trim() } } : { formatError: String(v.detail?.error ?? "malformed") }),
    reward: rewardOf(benchmark, v),
    score: v.score ?? 0,
    ...(v.levels ? { levels: v.levels } : {}),
  }));
}

/**
 * A written context's strict format: the whole reply in the world's grammar (its trace lines, then
 * the answer line); the action is its last line, as the policy agent reads it.
 */
function strictWritten(written: WrittenContext): (text: string) => FormatResult<{ answer: string }> {
  const grammar = new RegExp(written.pattern);
  return (text) =>
    grammar.test(text.trimEnd())
      ? { ok: true, action: { answer: citedAnswer(text) } }
      : { ok: false, error: "not a written context: trace lines of the story's places and agents, then an answer line and one of its containers" };
}

/** The share of a reply's trace lines that are the world model's (a longer or shorter trace counts its missing lines wrong; none at all: 1 when the world model's is empty too). */
function traceShare(text: string, written: WrittenContext): number {
  const f = traceFidelity(writtenTrace(text), written.trace);
  return f.lines === 0 ? 1 : f.right / f.lines;
}

/** A cited answer's strict format: exactly one of the context's lines; the action is its value. */
function strictCitation(text: string, lines: readonly CompactLine[]): FormatResult<{ answer: string }> {
  const line = citedLine(text, lines);
  return line ? { ok: true, action: { answer: line.value } } : { ok: false, error: "not one of the context's lines (a title line, then its value)" };
}

interface BenchPoint extends DecisionPoint {
  readonly item: BenchItem;
  readonly task: QuestionTask;
  readonly userText: string;
}

export class BenchPoints implements PointSource {
  readonly description: string;
  readonly dataId: string;
  readonly size: number;
  readonly runParams: Record<string, unknown>;
  private readonly items: BenchItem[];
  private readonly benchmark: Benchmark;
  private readonly loggedContexts = new Set<string>();

  /**
   * The questions of `file`; bad input fails here (DataError naming the file and line), before
   * anything runs. `options` are the benchmark's (usersim's hierarchy, weights, split, judge), as
   * `bench` takes them; the run records them (the judge by its spec) so that exports rebuild its prompts.
   */
  static async open(benchmarkName: string, file: string, mode: Mode, opts: BenchPointsOptions = {}): Promise<BenchPoints> {
    const benchmark = await loadBenchmark(benchmarkName, opts.options ?? {});
    if (benchmark.modes && !benchmark.modes.includes(mode)) throw new BenchmarkOptionError(`--mode: ${benchmarkName} is asked in ${benchmark.modes.join(" or ")} mode only`);
    if (opts.context && writtenOrder(opts.context)) {
      // Refused here, before the greedy pass and the run: else the first point would fail mid-run.
      if (mode !== "simulation") throw new WrittenContextUnavailable(`context ${opts.context}: the policy writes its own context in simulation mode only (--mode simulation), not ${mode}`);
      const why = await noWrittenContext(benchmarkName);
      if (why) throw new WrittenContextUnavailable(`context ${opts.context}: ${why}`);
    }
    return new BenchPoints(benchmark, await benchmark.load(file), benchmarkName, file, mode, opts);
  }

  private constructor(
    benchmark: Benchmark,
    items: BenchItem[],
    readonly benchmarkName: string,
    readonly file: string,
    readonly mode: Mode,
    opts: BenchPointsOptions,
  ) {
    this.benchmark = benchmark;
    this.items = opts.limit !== undefined ? items.slice(0, opts.limit) : items;
    this.size = this.items.length;
    this.system = opts.system;
    this.context = opts.context ?? "world";
    const order = writtenOrder(this.context);
    const self = order ? `, the policy writes the context${order === "latest" ? " latest first" : ""}` : "";
    this.description = `${this.benchmark.title} ${file} (${mode} mode${self}, ${this.size} questions)`;
    const { judgeModel, ...options } = opts.options ?? {};
    const recorded = { ...recordedOptions(options), ...(judgeModel ? { judge: judgeModel.id } : {}) };
    // A run that wrote its own contexts asks other prompts: the default keeps earlier runs' ids.
    const asks = order ? `|context=${this.context}` : "";
    this.dataId = createHash("sha256").update(readFileSync(file)).update(`|${mode}|${this.size}|${opts.system ?? ""}|${JSON.stringify(recorded)}${asks}`).digest("hex").slice(0, 16);
    this.runParams = { benchmark: benchmarkName, data: file, mode, options: recorded, limit: opts.limit ?? null, ...(order ? { context: this.context } : {}) };
  }

  private readonly system: string | undefined;
  private readonly context: ContextSource;

  /** Contexts already in the run's log (a resumed run's log has them). */
  markLogged(contextIds: Iterable<string>): void {
    for (const id of contextIds) this.loggedContexts.add(id);
  }

  /** The question's type: the row of the benchmark's report it counts in. */
  kind(index: number): string {
    return this.items[index]!.type;
  }

  async point(index: number): Promise<BenchPoint> {
    const item = this.items[index]!;
    const task = this.benchmark.task(item, this.mode);
    const asked = await askedQuestion(task, this.context);
    const userText = asked.text;
    const form = task.answerForm;
    const levels = form?.type === "pattern" && form.levels ? { levels: { levels: form.levels, ...(this.system !== undefined ? { system: this.system } : {}) } } : {};
    const base = { id: item.id, item, task, userText, messages: turnMessages(userText, this.system), ...levels };
    // A benchmark whose answer is an action of its own schema (the social world's reactions) says
    // what the strict format is and how an action scores; else the answer is text, judged.
    const asAction = this.benchmark.actionAnswer?.(item);
    if (asAction) {
      return { ...base, schema: asAction.schema, reference: asAction.reference, exact: (a) => asAction.exact(a), answerText: (a) => asAction.text(a), ...(asAction.rougeL ? { rougeL: (t: string) => asAction.rougeL!(t) } : {}) };
    }
    const label = item.answer;
    const reference = this.benchmark.answerText(item, label, this.mode) ?? (Array.isArray(label) ? label.join(", ") : String(label));
    const benchmark = this.benchmark;
    const listed = task.candidates ?? task.choices;
    // Over a compact context the reply cites one of its lines; its answer is the line's value.
    const cited = asked.cited?.lines;
    // A context to write: the agent's grammar (trace lines, then the answer line), the answer its last line.
    const written = asked.written;
    return {
      ...base,
      // The grammar rollouts are sampled under: the free answer, or the benchmark's answer form (usersim's tagged reply).
      schema: answerGrammarSchema(task),
      ...(listed?.length ? { options: listed.map((answer) => ({ answer })) } : {}),
      ...(cited ? { grammar: citationSpec(cited, "schema")!, strict: (text: string) => strictCitation(text, cited) } : {}),
      ...(written ? { grammar: writtenSpec(written, "schema")!, strict: strictWritten(written), trace: (text: string) => traceShare(text, written) } : {}),
      reference,
      exact: (action) => (benchmark.judge(item, (action as { answer: string }).answer).correct ? 1 : 0),
      answerText: (action) => (action as { answer: string }).answer,
      // A graded benchmark's reply is its text (usersim's tagged hierarchy), judged as `bench` judges it.
      ...(benchmark.graded ? { judge: (texts: readonly string[]) => judgeGraded(benchmark, item, texts) } : {}),
    };
  }

  /** The answer a reply gives: a graded reply's text, a well-formed action's JSON, or the text answer. */
  private answerOf(r: ScoredReply): string {
    if (this.benchmark.graded) return r.text.trim();
    if (!r.format) return "";
    return this.benchmark.actionAnswer ? JSON.stringify(r.action) : (r.action as { answer: string }).answer;
  }

  async logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void> {
    const p = point as BenchPoint;
    const gt = await this.benchmark.groundTruth(p.item);
    replies.forEach((r, sample) => {
      const graded = this.benchmark.graded !== undefined;
      const answer = this.answerOf(r);
      // A graded reply's verdict is the judge's that scored it (its score), not asked again.
      const verdict = graded ? { correct: r.format, score: r.exact } : this.benchmark.judge(p.item, answer);
      log.append({
        kind: "benchmark_item",
        run: runId,
        benchmark: this.benchmarkName,
        agent: "grpo",
        mode: this.mode,
        // A reply the format check refused is wrong whatever the judge says of its text.
        result: itemResult(p.item, gt, answer, { correct: r.format && verdict.correct, score: verdict.score }, r.format ? undefined : { error: `format: ${r.formatError}`, failure: "invalid" }, 0),
        context_id: gt.contextId,
        ...(this.loggedContexts.has(gt.contextId) ? {} : { socialized_context: gt.context }),
        turns: [
          {
            agent: "respondent",
            timestep: 1,
            observation: p.userText,
            prompt: meta.prompt,
            raw: r.text,
            action: r.format ? (graded || this.benchmark.actionAnswer ? { answer } : r.action) : { answer: "" },
            reward: r.reward,
            source: r.format ? "agent" : "fallback",
            ...(r.format ? {} : { error: `invalid action: ${r.formatError}` }),
            latencyMs: 0,
            info: grpoInfo(r, meta.step, meta.group, sample),
          },
        ],
      });
      this.loggedContexts.add(gt.contextId);
    });
  }
}

/** What a logged turn says about its sample (for analysis and for training elsewhere). */
export function grpoInfo(r: ScoredReply, step: number, group: number, sample: number): Record<string, unknown> {
  return {
    grpo: { step, group, sample },
    completionTokens: r.tokens,
    finishReason: r.finish,
    logprob: r.logprob,
    rewardParts: { format: r.format, exact: r.exact, f1: r.f1, rougeL: r.rougeL, overlong: r.overlong, ...(r.leaks !== undefined ? { leaks: r.leaks } : {}), ...(r.trace !== undefined ? { trace: r.trace } : {}) },
  };
}

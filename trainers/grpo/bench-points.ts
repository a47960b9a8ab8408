/**
 * Decision points from a benchmark file: every question is one, asked exactly as a policy agent
 * is asked it by `bench` (agents/policy/question-prompt.ts: the benchmark's prompt in vanilla mode,
 * the socialized context and question in simulation mode), scored by the benchmark's official
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
import { askedQuestion } from "../../agents/policy/question-prompt.js";
import { citationSpec } from "../../agents/policy/action-grammar.js";
import { citedLine, type CompactLine } from "../../worlds/core/compact-context.js";
import type { FormatResult } from "../../worlds/core/rewards/strict-format.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import type { DecisionPoint, Judged, PointSource, ScoredReply } from "./decision-point.js";

export interface BenchPointsOptions {
  readonly limit?: number;
  readonly system?: string;
  /** The benchmark's options (`bench`'s --hierarchy, --weights, --split, --judge). */
  readonly options?: BenchmarkOptions;
}

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
    this.description = `${this.benchmark.title} ${file} (${mode} mode, ${this.size} questions)`;
    const { judgeModel, ...options } = opts.options ?? {};
    const recorded = { ...recordedOptions(options), ...(judgeModel ? { judge: judgeModel.id } : {}) };
    this.dataId = createHash("sha256").update(readFileSync(file)).update(`|${mode}|${this.size}|${opts.system ?? ""}|${JSON.stringify(recorded)}`).digest("hex").slice(0, 16);
    this.runParams = { benchmark: benchmarkName, data: file, mode, options: recorded, limit: opts.limit ?? null };
  }

  private readonly system: string | undefined;

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
    const asked = await askedQuestion(task);
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
    return {
      ...base,
      // The grammar rollouts are sampled under: the free answer, or the benchmark's answer form (usersim's tagged reply).
      schema: answerGrammarSchema(task),
      ...(listed?.length ? { options: listed.map((answer) => ({ answer })) } : {}),
      ...(cited ? { grammar: citationSpec(cited, "schema")!, strict: (text: string) => strictCitation(text, cited) } : {}),
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
    rewardParts: { format: r.format, exact: r.exact, f1: r.f1, rougeL: r.rougeL, overlong: r.overlong, ...(r.leaks !== undefined ? { leaks: r.leaks } : {}) },
  };
}

/**
 * User simulation as a benchmark: each conversation record is one item, asked as the simulated
 * user is asked (the hierarchy's system prompt, then the user's view: profile, earlier replies,
 * the conversation) and judged by the offline judge, or by an LLM judge when one is given. It is
 * graded: an answer's score is its alignment in [0, 1] (judge.ts), the report's accuracy is their
 * mean, and `correct` counts the replies that keep the hierarchy's format.
 *
 *   label        the reference reply: the record's true states and real reply in the text form
 *                (just the real reply when a state of the hierarchy has no ground truth)
 *   world model  the generator: for a record with latent states, the reply those states write
 *                (realize.ts); it disagrees with the label when the record's reply is not that
 *                reply (an edited file). Real data has no world model to disagree.
 *   type         the platform (forum, reviews, chat, email...); split: the record's split
 *
 * The simulation agent's answer (solver.ts) is the world model's reply: the ceiling. It reads the
 * item's latent states through `truthOf(task)`, a private channel from the tasks this benchmark
 * made: the task itself (what an agent or a person in the seat is sent) holds no ground truth.
 */
import { basename } from "node:path";
import type { Benchmark, BenchItem, Graded, GroundTruth, JudgeModel, Mode, Verdict } from "../question/benchmark.js";
import { contextIdOf } from "../question/context-id.js";
import type { AnswerLevels, QuestionTask } from "../question/world.js";
import { runEpisode } from "../core/loop.js";
import { Rng } from "../core/rng.js";
import { ScriptedAgent } from "../core/scripted-agent.js";
import { toSocializedContext } from "../core/socialize.js";
import { DataError } from "../core/errors.js";
import { UNKNOWN_STATE, randomReply, simulationReply } from "./baselines.js";
import { DEFAULT_HIERARCHY, tags, type Hierarchy } from "./hierarchy.js";
import type { FreeTextScorer } from "./embedding-similarity.js";
import { checkWeights, judgeText, type Judgement, type JudgeOptions, type Weights } from "./judge.js";
import { LlmJudge } from "./llm-judge.js";
import { summarizeJudgements } from "./metrics.js";
import { levelPromptParts, systemPrompt, WRITTEN_CLOSE, WRITTEN_OPEN } from "./prompts.js";
import { readConversationsFile, type ConversationRecord } from "./records.js";
import { levelTextPattern, parseReply, renderReply, replyTextPattern, type Reply } from "./reply.js";
import { referenceOf, referenceText, stateOfRecord } from "./scenario.js";
import { renderThread, renderUserView, UsersimWorld, type UsersimAction, type UsersimState } from "./world.js";
import { PLATFORMS } from "./vocabulary.js";

export interface UsersimBenchItem extends BenchItem {
  readonly record: ConversationRecord;
}

export const USERSIM_CAUSES = {
  reply_not_from_latent:
    "The record's reply is not the one its latent states write (realize.ts): the file was edited, or written by another generator. " +
    "The states still score exactly; the simulation agent's response, written from the states, cannot match the reply.",
} as const;

/** Random replies offered as an item's candidates (the random baseline picks one). */
const CANDIDATES = 8;

export interface UsersimBenchmarkOptions {
  readonly hierarchy?: Hierarchy;
  readonly weights?: Weights;
  /** Only the records of this split (train, val, test...). */
  readonly split?: string;
  /** Judge with this model (the LLM judge) instead of the offline judge. */
  readonly judgeModel?: JudgeModel;
  /** The offline judge's free-text similarity (default: ROUGE-L F1), e.g. an embedding cosine (embedding-similarity.ts). */
  readonly freeText?: FreeTextScorer;
}

/** What the solver may know of a task this benchmark made: its record's ground truth and the hierarchy. */
const truths = new WeakMap<QuestionTask, { readonly record: ConversationRecord; readonly hierarchy: Hierarchy }>();

/** The simulation agent's answer to a task of this benchmark: the reply its record's latent states write. */
export function simulationAnswer(task: QuestionTask): string {
  const known = truths.get(task);
  if (!known) throw new Error(`the simulation agent answers usersim items from their latent states, and item ${task.itemId} was not loaded in this process`);
  const { record, hierarchy } = known;
  if (!record.latent) {
    throw new Error(`record ${record.id} (${record.source.file}) has no latent states: the simulation agent writes the generator's replies, so it has no answer to real data (try another agent)`);
  }
  return renderReply(simulationReply(record.latent, hierarchy, record.states), hierarchy);
}

export class UsersimBenchmark implements Benchmark<UsersimBenchItem> {
  readonly name = "usersim";
  readonly title: string;
  readonly types = PLATFORMS;
  readonly causes: Readonly<Record<string, string>> = USERSIM_CAUSES;
  readonly graded: Graded = { correct: "well-formed", score: "alignment" };
  readonly modes: readonly Mode[] = ["vanilla"];
  readonly ability = "user_simulation";
  readonly hierarchy: Hierarchy;
  readonly llm: LlmJudge | undefined;
  private readonly judgeOptions: JudgeOptions;
  private readonly split: string | undefined;
  private readonly world = new UsersimWorld();

  constructor(opts: UsersimBenchmarkOptions = {}) {
    this.hierarchy = opts.hierarchy ?? DEFAULT_HIERARCHY;
    const bad = checkWeights(opts.weights, this.hierarchy);
    if (bad) throw new Error(`weights: ${bad}`);
    this.judgeOptions = { ...(opts.weights ? { weights: opts.weights } : {}), ...(opts.freeText ? { freeText: (g: string, r: string) => opts.freeText!.score(g, r) } : {}) };
    // The report names the free-text scorer when it is not ROUGE-L.
    this.title = opts.freeText ? `User simulation (free text: ${opts.freeText.id})` : "User simulation";
    this.split = opts.split;
    this.llm = opts.judgeModel ? new LlmJudge(opts.judgeModel, this.judgeOptions) : undefined;
    if (this.llm) this.assess = (item, answers, signal) => this.assessWithModel(item, answers, signal);
  }

  async load(file: string): Promise<UsersimBenchItem[]> {
    const all = await readConversationsFile(file);
    const records = this.split === undefined ? all : all.filter((r) => r.split === this.split);
    if (records.length === 0) throw new DataError(file, {}, `no record of split "${this.split}" (splits there: ${[...new Set(all.map((r) => r.split ?? "(none)"))].join(", ")})`);
    const name = basename(file);
    return records.map((record, index) => ({
      id: `${name}#${record.id}`,
      index,
      source: { file, ...(record.source.line !== undefined ? { line: record.source.line } : { field: `row ${record.source.row}` }) },
      type: record.platform ?? "conversation",
      ...(record.split ? { splits: { split: record.split } } : {}),
      question: `How does ${record.user} reply to "${firstLine(record.thread[0]!.text)}"?`,
      answer: referenceText(record, this.hierarchy) ?? record.reply,
      record,
    }));
  }

  /** The user's state before its reply (the prompt's view of it). */
  private stateOf(item: UsersimBenchItem): UsersimState {
    return stateOfRecord(item.record, this.hierarchy);
  }

  task(item: UsersimBenchItem, mode: Mode): QuestionTask {
    if (mode !== "vanilla") throw new Error(`usersim is asked in vanilla mode only (got ${mode})`);
    const state = this.stateOf(item);
    const rng = Rng.seeded(`usersim-candidates:${item.record.id}`);
    const view = { user: state.user, profile: state.profile, thread: state.thread };
    const candidates = Array.from({ length: CANDIDATES }, () => renderReply(randomReply(view, this.hierarchy, rng), this.hierarchy));
    const task: QuestionTask = {
      benchmark: this.name,
      itemId: item.id,
      mode,
      story: renderThread(state.thread),
      question: item.question,
      candidates,
      prompt: usersimPrompt(state),
      answerForm: { type: "pattern", pattern: replyTextPattern(this.hierarchy), levels: usersimLevels(state) },
    };
    truths.set(task, { record: item.record, hierarchy: this.hierarchy });
    return task;
  }

  /** The conversation played once: the thread as given, then the user's reply from its latent states (or its real reply). */
  async groundTruth(item: UsersimBenchItem): Promise<GroundTruth> {
    const { record } = item;
    const h = this.hierarchy;
    const truth: Reply = record.latent ? simulationReply(record.latent, h, record.states) : { states: Object.fromEntries(h.states.map((d) => [d.name, record.states[d.name] ?? UNKNOWN_STATE])), response: record.reply };
    const state = this.stateOf(item);
    const reply: UsersimAction = { type: "reply", ...truth };
    const episode = await runEpisode(this.world, {
      seed: record.id,
      initialState: state,
      agents: { [state.user]: new ScriptedAgent<UsersimAction>(new Map([[1, reply]]), this.world.noop()) },
    });
    const label = record.latent ? renderReply(truth, h) : String(item.answer);
    const agrees = !record.latent || truth.response === record.reply;
    return {
      context: toSocializedContext(episode),
      contextId: contextIdOf(`usersim\n${record.user}\n${state.profile}\n${episode.steps[0]?.state ?? ""}\n${record.reply}`),
      label,
      agrees,
      ...(agrees ? {} : { cause: "reply_not_from_latent" }),
    };
  }

  /** A reference is the reply itself: the text form, when it keeps the hierarchy's format. */
  answerText(_item: UsersimBenchItem, label: string | readonly string[]): string | undefined {
    const text = typeof label === "string" ? label : undefined;
    return text !== undefined && parseReply(text, this.hierarchy).ok ? text : undefined;
  }

  judge(item: UsersimBenchItem, answer: string): Verdict {
    return verdictOf(judgeText(answer, referenceOf(item.record), this.hierarchy, this.judgeOptions), this.hierarchy);
  }

  assess?: (item: UsersimBenchItem, answers: readonly string[], signal?: AbortSignal) => Promise<Verdict[]>;

  private async assessWithModel(item: UsersimBenchItem, answers: readonly string[], signal?: AbortSignal): Promise<Verdict[]> {
    const state = this.stateOf(item);
    const judgements = await this.llm!.judgeTexts(answers, referenceOf(item.record), this.hierarchy, renderThread(state.thread, state.user), signal);
    return judgements.map((j) => verdictOf(j, this.hierarchy));
  }

  /** Per state and for the response, the mean score; the share of well-formed replies; the mean reward. */
  metrics(_items: readonly UsersimBenchItem[], verdicts: readonly Verdict[]): Readonly<Record<string, number>> {
    const judgements = verdicts.map((v) => v.detail as unknown as Judgement);
    const s = summarizeJudgements(judgements, this.hierarchy);
    const out: Record<string, number> = {};
    for (const tag of tags(this.hierarchy)) {
      const mean = tag === this.hierarchy.response.name ? s.response : s.states[tag]?.mean;
      if (mean !== null && mean !== undefined) out[tag] = mean;
    }
    out.format_rate = s.formatRate;
    out.mean_reward = s.meanReward;
    if (this.llm) {
      out.judge_requests = this.llm.stats.requests;
      out.judge_cached = this.llm.stats.cached;
      out.judge_fallbacks = this.llm.stats.fallbacks;
    }
    return out;
  }
}

/** The prompt the simulated user answers: the hierarchy's instructions, then what it sees. */
export function usersimPrompt(state: UsersimState): string {
  return `${systemPrompt(state.hierarchy, { user: state.user, ...(state.platform ? { platform: state.platform } : {}) })}\n\n${renderUserView(state)}`;
}

/**
 * The reply level by level, as HumanLM generates it: each tag asked by its level prompt (the
 * hierarchy's `system_prompt` file, or level.txt) after the tags written before it, then the
 * user's view, and written under that tag's own pattern within its `max_tokens`.
 */
export function usersimLevels(state: UsersimState): AnswerLevels {
  const h = state.hierarchy;
  const speaker = { user: state.user, persona: state.profile, ...(state.platform ? { platform: state.platform } : {}) };
  return {
    items: [...h.states, h.response].map((d) => ({ name: d.name, pattern: levelTextPattern(h, d.name), maxTokens: d.maxTokens, ...levelPromptParts(h, d.name, speaker) })),
    separator: "\n",
    writtenOpen: WRITTEN_OPEN,
    writtenClose: WRITTEN_CLOSE,
    context: `\n\n${renderUserView(state)}`,
  };
}

/** A judgement as the benchmark's verdict; its levels, each state's score then the response's, are what per-level credit rewards. */
function verdictOf(j: Judgement, h: Hierarchy): Verdict {
  const levels = [...h.states.map((d) => j.states[d.name]?.score ?? null), j.response];
  return { correct: j.wellFormed, score: j.alignment, reward: j.reward, levels, detail: j as unknown as Readonly<Record<string, unknown>> };
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}

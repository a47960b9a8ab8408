/**
 * The social world's benchmark (issue 28): for each user who saw an item of a tree (the post, or a
 * depth-0 comment or repost), what did they do with it: comment, repost, like or ignore, and the
 * text, as JSON. Items are the tasks of tasks.ts, read from interaction-tree files (format.ts);
 * the prompt is prompts.ts's; the judge and the metrics are scoring.ts's (interaction-type
 * accuracy, macro-F1, ROUGE-L of the content and, with an ONNX encoder, BERTScore), per depth and
 * over all tasks. The report's rows (`byType`) are the label's type, its `depth` split the depths.
 *
 * The world model's own label: with the generator's latent block, the latent model recomputes
 * each decision and text (the `simulation` agent's answer); a label it does not reproduce is a
 * disagreement (a file edited after generation, or another generator version). Without one (real
 * data) the record is the world: its label is the file's.
 */
import { basename } from "node:path";
import { DataError } from "../core/errors.js";
import { Rng } from "../core/rng.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { BenchmarkOptionError, type ActionAnswer, type Benchmark, type BenchItem, type BenchmarkOptions, type GroundTruth, type Verdict } from "../question/benchmark.js";
import { contextIdOf } from "../question/context-id.js";
import type { QuestionTask } from "../question/world.js";
import { contentOf, reactionSchemaFor, REACTION_TYPES, type ReactionAction } from "./action.js";
import { remember, taskBehind } from "./asked.js";
import { MajorityPredictor, SimulationPredictor } from "./baselines.js";
import { OnnxTokenEncoder, type TokenEncoder } from "./bertscore.js";
import { groundTruthContext } from "./contexts.js";
import { readTreeFile } from "./format.js";
import { compactPrompt, nameOf, taskJsonSchema, taskPrompt } from "./prompts.js";
import { FACT_KEYS, factsTitle, factWithoutShort, NEEDS_SHORT, type FactsOptions } from "./facts.js";
import { contentRougeL, perLabel, readReply, scoreTask, type BertScoreMeans } from "./scoring.js";
import { labelReply, replyFor, tasksOf, type SocialTask } from "./tasks.js";

export interface SocialBenchItem extends BenchItem {
  readonly task: SocialTask;
  /** Every task on the same item of the same tree (its ground-truth episode), shared. */
  readonly siblings: readonly SocialTask[];
}

export const SOCIAL_CAUSES = {
  latent_differs: "The generator's latent model, recomputed from the tree's latent block, does not give the file's label (the file was edited after generation, or another generator version wrote it).",
} as const;

/** What the judge records of an answer (the metrics are rebuilt from it, a resumed run's too). */
interface SocialDetail {
  readonly predicted: string;
  readonly strict: boolean;
  readonly rougeL?: number;
  readonly bertScore?: { readonly precision: number; readonly recall: number; readonly f1: number };
}

export class SocialBenchmark implements Benchmark<SocialBenchItem> {
  readonly name = "social";
  readonly types = REACTION_TYPES;
  readonly causes: Readonly<Record<string, string>> = SOCIAL_CAUSES;
  readonly depth: number | undefined;
  /** The prompt: "full" (profile, recent posts, feed, the answer's instructions) or "short" (prompts.ts's compactPrompt). */
  readonly context: "short" | "full";
  /** What the short prompt's facts line states besides the screen (facts.ts's registry: the user's stance, whether the item takes their side...). */
  readonly facts: FactsOptions;
  private readonly encoder: TokenEncoder | undefined;
  private readonly simulation = new SimulationPredictor();
  private readonly contexts = new WeakMap<readonly SocialTask[], { context: SocializedContext; id: string }>();

  /** `embedder`: "onnx:DIR" for BERTScore (the folder is opened now: a bad one fails here). */
  /** `flags`: the facts asked (facts.ts's keys: `stance`, `agreement`...). */
  constructor(opts: Pick<BenchmarkOptions, "embedder" | "depth" | "context" | "flags"> = {}) {
    if (opts.depth !== undefined && !(Number.isInteger(opts.depth) && opts.depth >= 0)) throw new RangeError(`depth must be a non-negative integer, got ${opts.depth}`);
    this.depth = opts.depth;
    this.context = opts.context ?? "full";
    this.facts = Object.fromEntries(FACT_KEYS.filter((k) => opts.flags?.[k]).map((k) => [k, true]));
    const lone = factWithoutShort(this.context, this.facts);
    if (lone) throw new BenchmarkOptionError(`--${lone} ${NEEDS_SHORT}`);
    if (opts.embedder !== undefined) {
      if (!opts.embedder.startsWith("onnx:")) throw new RangeError(`the social benchmark's embedder is BERTScore's encoder, onnx:DIR (got "${opts.embedder}")`);
      this.encoder = OnnxTokenEncoder.open(opts.embedder.slice("onnx:".length));
    }
  }

  get title(): string {
    const parts = [this.depth !== undefined ? `depth ${this.depth}` : "", this.context === "short" ? `short prompts${factsTitle(this.facts)}` : "", this.encoder ? `BERTScore with ${this.encoder.id}` : ""].filter(Boolean);
    return `Social media: comment, repost, like or ignore${parts.length ? ` (${parts.join(", ")})` : ""}`;
  }

  load(file: string): SocialBenchItem[] {
    const trees = readTreeFile(file);
    const tasks = tasksOf(trees);
    if (tasks.length === 0) throw new DataError(file, {}, "no prediction tasks: no tree has a candidate or an interaction");
    const byItem = new Map<string, SocialTask[]>();
    for (const t of tasks) {
      const key = `${t.source.index}\u0000${t.parent}`;
      let group = byItem.get(key);
      if (!group) byItem.set(key, (group = []));
      group.push(t);
    }
    const name = basename(file);
    const items: SocialBenchItem[] = [];
    for (const task of tasks) {
      if (this.depth !== undefined && task.depth !== this.depth) continue;
      items.push({
        id: `${name}#${task.id}`,
        index: items.length,
        source: { file, ...(task.source.line !== undefined ? { line: task.source.line } : {}) },
        type: task.label.type,
        splits: { depth: String(task.depth) },
        question: `What does ${nameOf(task.tree, task.user)} do with [${task.parent}]?`,
        answer: labelReply(task),
        task,
        siblings: byItem.get(`${task.source.index}\u0000${task.parent}`)!,
      });
    }
    if (items.length === 0) throw new DataError(file, {}, `no prediction tasks at depth ${this.depth} (the file's depths: ${[...new Set(tasks.map((t) => t.depth))].sort().join(", ")})`);
    return items;
  }

  task(item: SocialBenchItem, mode: QuestionTask["mode"]): QuestionTask {
    const prompt = this.context === "short" ? compactPrompt(item.task, this.facts) : taskPrompt(item.task);
    // The prompt's last line is the question; what comes before it, the story (simulation mode
    // asks the question over the story's socialized context).
    const cut = prompt.lastIndexOf("\n");
    const q: QuestionTask = {
      benchmark: this.name,
      itemId: item.id,
      mode,
      story: prompt.slice(0, cut).trimEnd(),
      question: `You are ${nameOf(item.task.tree, item.task.user)}. ${prompt.slice(cut + 1)}`,
      candidates: randomCandidates(item.task),
      prompt,
      // The answer is a reaction on this item, as JSON: a policy writes it under this schema's
      // grammar, the one GRPO samples it under (its decision point's schema is the same).
      answerForm: { type: "json", schema: taskJsonSchema(item.task) },
    };
    remember(q, item.task);
    return q;
  }

  async groundTruth(item: SocialBenchItem): Promise<GroundTruth> {
    let c = this.contexts.get(item.siblings);
    if (!c) {
      const context = groundTruthContext(
        item.task.tree,
        item.task.parent,
        item.siblings.map((t) => ({ user: t.user, action: JSON.parse(labelReply(t)) as ReactionAction })),
      );
      c = { context, id: contextIdOf(JSON.stringify(context)) };
      this.contexts.set(item.siblings, c);
    }
    if (!item.task.tree.latent) return { context: c.context, contextId: c.id, label: item.answer as string, agrees: true };
    const label = this.simulation.predict(item.task);
    const agrees = label === item.answer;
    return { context: c.context, contextId: c.id, label, agrees, ...(agrees ? {} : { cause: "latent_differs" }) };
  }

  /** The label is already the JSON a model should write. */
  answerText(_item: SocialBenchItem, label: string | readonly string[]): string | undefined {
    return typeof label === "string" ? label : undefined;
  }

  judge(item: SocialBenchItem, answer: string): Verdict {
    // The label is the item's answer (a report checks answers against the world model's label too).
    const label = readReply(item.answer as string, item.task);
    if (label.type === "invalid") throw new Error(`${item.id}: the label ${JSON.stringify(item.answer)} is not an action (${label.error})`);
    const task: SocialTask = { ...item.task, label: { type: label.type, content: label.content } };
    const s = scoreTask(task, answer, this.encoder);
    const detail: SocialDetail = {
      predicted: s.reply.type,
      strict: s.reply.strict,
      ...(s.rougeL !== undefined ? { rougeL: s.rougeL } : {}),
      ...(s.bertScore ? { bertScore: s.bertScore } : {}),
    };
    return { correct: s.correct, ...(s.rougeL !== undefined ? { score: s.rougeL } : {}), detail: detail as unknown as Record<string, unknown> };
  }

  /**
   * Over all tasks and by depth (`depth0.`, `depth1.`): macro-F1, the share of replies in the
   * strict format, ROUGE-L (and over the tasks whose type was right), BERTScore P/R/F1.
   */
  metrics(items: readonly SocialBenchItem[], verdicts: readonly Verdict[]): Readonly<Record<string, number>> {
    const out: Record<string, number> = {};
    const rows = items.map((item, i) => ({ item, detail: (verdicts[i]?.detail ?? { predicted: "invalid", strict: false }) as unknown as SocialDetail, correct: verdicts[i]?.correct ?? false }));
    const depths = [...new Set(items.map((it) => it.task.depth))].sort((a, b) => a - b);
    const groups: [string, typeof rows][] = [["", rows], ...depths.map((d): [string, typeof rows] => [`depth${d}.`, rows.filter((r) => r.item.task.depth === d)])];
    for (const [prefix, g] of groups) {
      if (prefix !== "") out[`${prefix}accuracy`] = mean(g.map((r) => (r.correct ? 1 : 0)));
      const labels = perLabel(
        g.map((r) => r.item.type),
        g.map((r) => r.detail.predicted),
      );
      out[`${prefix}macroF1`] = mean(Object.values(labels).map((l) => l.f1));
      out[`${prefix}format`] = mean(g.map((r) => (r.detail.strict ? 1 : 0)));
      const withText = g.filter((r) => r.detail.rougeL !== undefined);
      out[`${prefix}rougeL`] = mean(withText.map((r) => r.detail.rougeL!));
      out[`${prefix}rougeLMatched`] = mean(withText.filter((r) => r.correct).map((r) => r.detail.rougeL!));
      const bert = withText.filter((r) => r.detail.bertScore !== undefined);
      if (bert.length > 0 && bert.length === withText.length) {
        const b: Omit<BertScoreMeans, "encoder"> = {
          precision: mean(bert.map((r) => r.detail.bertScore!.precision)),
          recall: mean(bert.map((r) => r.detail.bertScore!.recall)),
          f1: mean(bert.map((r) => r.detail.bertScore!.f1)),
        };
        out[`${prefix}bertScoreP`] = b.precision;
        out[`${prefix}bertScoreR`] = b.recall;
        out[`${prefix}bertScoreF1`] = b.f1;
      }
    }
    return out;
  }

  /** The answer is a reaction of the task's schema: GRPO's reward is socialReward's (rewards.ts). */
  actionAnswer(item: SocialBenchItem): ActionAnswer<ReactionAction> {
    const label = item.task.label;
    return {
      schema: reactionSchemaFor(item.task.parent),
      exact: (a) => (a.action === label.type ? 1 : 0),
      text: (a) => contentOf(a),
      reference: label.content,
      rougeL: (text) => (label.content.trim() === "" ? 0 : contentRougeL(text, label.content)),
    };
  }

  majority(fitted: readonly SocialBenchItem[]): (task: QuestionTask) => string {
    const m = new MajorityPredictor(fitted.map((it) => it.task));
    return (q) => m.predict(taskBehind(q));
  }

  /** Closes the BERTScore encoder's worker (when there is one). */
  async close(): Promise<void> {
    if (this.encoder instanceof OnnxTokenEncoder) await this.encoder.close();
  }
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * What the random baseline picks from (uniformly, with its own seed): one reply of each type on
 * the task's item; a comment or repost says one of the user's past posts (drawn by the task's id).
 */
function randomCandidates(task: SocialTask): string[] {
  const history = task.tree.users.find((u) => u.id === task.user)?.history ?? [];
  const content = history.length ? Rng.seeded(`social-random|${task.id}`).pick(history).text : "";
  return REACTION_TYPES.map((type) => replyFor(task, type, content));
}

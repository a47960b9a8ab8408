/**
 * The benchmark's metrics, per depth and over all tasks:
 *
 * - accuracy: share of tasks whose predicted type (comment, repost, like, ignore; "invalid" for a
 *   reply that is not an action) is the label's.
 * - macroF1: scikit-learn's `f1_score(y_true, y_pred, average="macro")` with its defaults: the
 *   mean over every label in either list (so "invalid" counts when it is predicted) of that
 *   label's F1, 0 for a label never predicted right.
 * - rougeL: mean ROUGE-L F1 over the tasks whose label has content (a comment or repost with
 *   text), the prediction's content ("" when it has none) against the label's. rouge-score's
 *   tokenization (worlds/core/rewards/rouge-l.ts), except that CJK characters count as a token
 *   each (rouge-score drops every character outside a-z0-9, so Chinese text would score 0).
 * - rougeLMatched: the same, over those tasks where the predicted type is right.
 * - bertScore: BERTScore P/R/F1 (bertscore.ts) over the same tasks as rougeL, when an encoder is given.
 *
 * A reply is read strictly first (the whole reply is the action); failing that, the first JSON
 * object in it is read (models wrap JSON in prose or code fences). `format` is the share of
 * replies that passed the strict reading.
 */
import { lcsLength, rougeTokens } from "../core/rewards/rouge-l.js";
import { strictFormat } from "../core/rewards/strict-format.js";
import { contentOf, reactionSchemaFor, type ReactionAction } from "./action.js";
import { bertScore, type TokenEncoder } from "./bertscore.js";
import type { SocialTask } from "./tasks.js";

export type PredictedType = ReactionAction["action"] | "invalid";

export interface ReadReply {
  readonly type: PredictedType;
  readonly content: string;
  /** The reply was exactly an action of the task's schema. */
  readonly strict: boolean;
  readonly action?: ReactionAction;
  readonly error?: string;
}

/** The first balanced {...} in a text (strings and escapes respected), or undefined. */
export function firstJsonObject(text: string): string | undefined {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const ch = text[i]!;
      if (inString) {
        if (ch === "\\") i++;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) {
        const candidate = text.slice(start, i + 1);
        try {
          JSON.parse(candidate);
          return candidate;
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}

export function readReply(text: string, task: SocialTask): ReadReply {
  const schema = reactionSchemaFor(task.parent);
  const strict = strictFormat(text, schema);
  if (strict.ok) return { type: strict.action.action, content: contentOf(strict.action), strict: true, action: strict.action };
  const json = firstJsonObject(text);
  if (json !== undefined) {
    const r = schema.safeParse(JSON.parse(json));
    if (r.success) return { type: r.data.action, content: contentOf(r.data), strict: false, action: r.data, error: strict.error };
  }
  return { type: "invalid", content: "", strict: false, error: strict.error };
}

const CJK = /[\u2e80-\u9fff\uf900-\ufaff\uac00-\ud7af\u3040-\u30ff\uff66-\uff9f]/;
const CJK_OR_WORD = /[\u2e80-\u9fff\uf900-\ufaff\uac00-\ud7af\u3040-\u30ff\uff66-\uff9f]|[a-z0-9]+/g;

/** rouge-score's tokens, with CJK characters one token each. */
export function contentTokens(text: string): string[] {
  if (!CJK.test(text)) return rougeTokens(text);
  return text.toLowerCase().match(CJK_OR_WORD) ?? [];
}

/** ROUGE-L F1 over contentTokens (equal to rougeL(...).fmeasure for text without CJK). */
export function contentRougeL(prediction: string, reference: string): number {
  const p = contentTokens(prediction);
  const r = contentTokens(reference);
  if (p.length === 0 || r.length === 0) return 0;
  const lcs = lcsLength(r, p);
  const precision = lcs / p.length;
  const recall = lcs / r.length;
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}

export interface LabelScore {
  readonly support: number;
  readonly predicted: number;
  readonly precision: number;
  readonly recall: number;
  readonly f1: number;
}

/** scikit-learn's per-label precision, recall and F1 (0 where undefined), over the union of labels, sorted. */
export function perLabel(truth: readonly string[], predicted: readonly string[]): Record<string, LabelScore> {
  if (truth.length !== predicted.length) throw new Error(`${truth.length} labels for ${predicted.length} predictions`);
  const labels = [...new Set([...truth, ...predicted])].sort();
  const out: Record<string, LabelScore> = {};
  for (const l of labels) {
    let tp = 0;
    let support = 0;
    let count = 0;
    for (let i = 0; i < truth.length; i++) {
      if (truth[i] === l) support++;
      if (predicted[i] === l) count++;
      if (truth[i] === l && predicted[i] === l) tp++;
    }
    const precision = count ? tp / count : 0;
    const recall = support ? tp / support : 0;
    out[l] = { support, predicted: count, precision, recall, f1: tp === 0 ? 0 : (2 * tp) / (support + count) };
  }
  return out;
}

export function macroF1(truth: readonly string[], predicted: readonly string[]): number {
  const scores = Object.values(perLabel(truth, predicted));
  return scores.length ? scores.reduce((s, x) => s + x.f1, 0) / scores.length : 0;
}

export interface ContentScores {
  /** Tasks whose label has content. */
  readonly count: number;
  readonly rougeL: number;
  readonly matchedCount: number;
  readonly rougeLMatched: number;
  readonly bertScore?: BertScoreMeans;
}

export interface BertScoreMeans {
  readonly encoder: string;
  readonly precision: number;
  readonly recall: number;
  readonly f1: number;
}

export interface DepthScores {
  readonly total: number;
  readonly correct: number;
  readonly accuracy: number;
  readonly macroF1: number;
  /** Share of replies that were exactly an action of the schema. */
  readonly format: number;
  readonly labels: Readonly<Record<string, LabelScore>>;
  readonly content: ContentScores;
}

export interface SocialScores {
  readonly all: DepthScores;
  /** By the depth of the reaction ("0", "1", ...). */
  readonly byDepth: Readonly<Record<string, DepthScores>>;
}

/** What was predicted for one task, and how it scored (the per-item record of a run). */
export interface ScoredTask {
  readonly task: SocialTask;
  readonly reply: ReadReply;
  readonly correct: boolean;
  /** Present when the label has content. */
  readonly rougeL?: number;
  readonly bertScore?: { precision: number; recall: number; f1: number };
}

export function scoreTask(task: SocialTask, replyText: string, encoder?: TokenEncoder): ScoredTask {
  const reply = readReply(replyText, task);
  const correct = reply.type === task.label.type;
  if (task.label.content.trim() === "") return { task, reply, correct };
  return {
    task,
    reply,
    correct,
    rougeL: contentRougeL(reply.content, task.label.content),
    ...(encoder ? { bertScore: bertScore(reply.content, task.label.content, encoder) } : {}),
  };
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function summarize(scored: readonly ScoredTask[], encoder?: string): DepthScores {
  const truth = scored.map((s) => s.task.label.type as string);
  const predicted = scored.map((s) => s.reply.type as string);
  const correct = scored.filter((s) => s.correct).length;
  const withContent = scored.filter((s) => s.rougeL !== undefined);
  const matched = withContent.filter((s) => s.correct);
  const bert = withContent.filter((s) => s.bertScore !== undefined);
  return {
    total: scored.length,
    correct,
    accuracy: scored.length ? correct / scored.length : 0,
    macroF1: macroF1(truth, predicted),
    format: scored.length ? scored.filter((s) => s.reply.strict).length / scored.length : 0,
    labels: perLabel(truth, predicted),
    content: {
      count: withContent.length,
      rougeL: mean(withContent.map((s) => s.rougeL!)),
      matchedCount: matched.length,
      rougeLMatched: mean(matched.map((s) => s.rougeL!)),
      ...(encoder !== undefined && bert.length === withContent.length
        ? {
            bertScore: {
              encoder,
              precision: mean(bert.map((s) => s.bertScore!.precision)),
              recall: mean(bert.map((s) => s.bertScore!.recall)),
              f1: mean(bert.map((s) => s.bertScore!.f1)),
            },
          }
        : {}),
    },
  };
}

/** Scores over all tasks and by depth. */
export function scoreSocial(scored: readonly ScoredTask[], encoder?: string): SocialScores {
  const depths = [...new Set(scored.map((s) => s.task.depth))].sort((a, b) => a - b);
  const byDepth: Record<string, DepthScores> = {};
  for (const d of depths) byDepth[String(d)] = summarize(scored.filter((s) => s.task.depth === d), encoder);
  return { all: summarize(scored, encoder), byDepth };
}

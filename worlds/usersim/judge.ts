/**
 * The offline judge: a reply's alignment with the user's ground truth, dimension by dimension,
 * without a model. For each state of the hierarchy:
 *
 *   structured  both the reply's text and the truth are in the vocabulary's words (latent.ts):
 *               compared part by part, exactly
 *     stance          pairs matched on target: position 1 if equal, 0.5 one step apart, else 0
 *     emotion         0.5 emotion (1 equal, 0.5 same family) + 0.25 intensity (1 - steps/2)
 *                     + 0.25 target
 *     (both lists: the best one-to-one pairing, summed, over the longer list's length, so a
 *      missing or an extra item costs as much as a wrong one)
 *     belief, value   1 for the same sentence, else 0
 *     goal            0.5 kind + 0.5 target
 *     communication   0.5 tone + 0.5 structure
 *   free-text   otherwise: ROUGE-L F1 against the truth's text (or `freeText`, e.g. embeddings)
 *   none        no ground truth for that state (real data without `states`): left out
 *
 * and the response: ROUGE-L F1 against the real reply. The alignment is the weighted mean of
 * the judged scores, in [0, 1], every weight 1 unless given (HumanLM sums its per-tag rewards with
 * weight 1 each). The reward is the alignment, and -1 for a malformed reply: lower than any reply
 * that keeps the format, however wrong.
 */
import { rougeL } from "../core/rewards/rouge-l.js";
import type { Hierarchy } from "./hierarchy.js";
import { tags } from "./hierarchy.js";
import {
  isLatentDimension,
  latentTexts,
  normalizeTarget,
  readCommunication,
  readEmotions,
  readGoal,
  readSentence,
  readStances,
  type Communication,
  type Emotion,
  type Goal,
  type Latent,
  type LatentDimension,
  type Stance,
} from "./latent.js";
import { parseReply, type Reply } from "./reply.js";
import { BELIEFS, EMOTIONS, VALUES } from "./vocabulary.js";

/** The ground truth of one reply. */
export interface Reference {
  /** The true text of each state that has one. */
  readonly states: Readonly<Record<string, string>>;
  /** The generator's structures, when the record has them. */
  readonly latent?: Latent;
  /** What the user really replied. */
  readonly response: string;
}

/** Tag -> weight (default 1 each, the response included). */
export type Weights = Readonly<Record<string, number>>;

export interface JudgeOptions {
  readonly weights?: Weights;
  /** Similarity of two free texts in [0, 1] (default: ROUGE-L F1). */
  readonly freeText?: (generated: string, reference: string) => number;
}

/** How a state was scored: exactly, by text similarity, by a model (the LLM judge), or not at all. */
export type Method = "structured" | "free-text" | "llm" | "malformed" | "none";

export interface StateScore {
  /** In [0, 1]; null when there is no ground truth to judge against. */
  readonly score: number | null;
  readonly method: Method;
}

export interface Judgement {
  readonly wellFormed: boolean;
  /** Why it is malformed. */
  readonly error?: string;
  readonly states: Readonly<Record<string, StateScore>>;
  /** The response's similarity to the real reply, in [0, 1]. */
  readonly response: number;
  /** The weighted mean of the judged scores, in [0, 1] (0 when malformed). */
  readonly alignment: number;
  /** The alignment, or MALFORMED_REWARD. */
  readonly reward: number;
}

export const MALFORMED_REWARD = -1;

const rougeF = (g: string, r: string) => rougeL(g, r).fmeasure;

/** Refuses weights a judge could not use: unknown tags, negative or non-finite numbers, all zero. */
export function checkWeights(weights: Weights | undefined, h: Hierarchy): string | undefined {
  if (!weights) return undefined;
  const known = tags(h);
  for (const [k, w] of Object.entries(weights)) {
    if (!known.includes(k)) return `weight for "${k}", which is not a tag of the hierarchy (${known.join(", ")})`;
    if (!Number.isFinite(w) || w < 0) return `the weight of ${k} must be a number >= 0, got ${w}`;
  }
  if (known.every((k) => (weights[k] ?? 1) === 0)) return "every weight is 0";
  return undefined;
}

const weightOf = (name: string, opts: Pick<JudgeOptions, "weights">) => opts.weights?.[name] ?? 1;

/** The best one-to-one pairing of two short lists (exhaustive), summed, over the longer length. */
export function pairedScore<T>(generated: readonly T[], reference: readonly T[], pair: (g: T, r: T) => number): number {
  const n = Math.max(generated.length, reference.length);
  if (n === 0) return 1;
  const used = new Array<boolean>(generated.length).fill(false);
  const best = (i: number): number => {
    if (i === reference.length) return 0;
    let top = best(i + 1); // reference item i left unpaired
    for (let j = 0; j < generated.length; j++) {
      if (used[j]) continue;
      used[j] = true;
      top = Math.max(top, pair(generated[j]!, reference[i]!) + best(i + 1));
      used[j] = false;
    }
    return top;
  };
  return best(0) / n;
}

const sameTarget = (a: string, b: string) => normalizeTarget(a) === normalizeTarget(b);

export function stancePair(g: Stance, r: Stance): number {
  if (!sameTarget(g.target, r.target)) return 0;
  return Math.max(0, 1 - Math.abs(g.position - r.position) / 2);
}

export function emotionPair(g: Emotion, r: Emotion): number {
  const label = g.emotion === r.emotion ? 1 : EMOTIONS[g.emotion]?.family === EMOTIONS[r.emotion]?.family ? 0.5 : 0;
  const intensity = 1 - Math.abs(g.intensity - r.intensity) / 2;
  return 0.5 * label + 0.25 * intensity + 0.25 * (sameTarget(g.target, r.target) ? 1 : 0);
}

export function goalScore(g: Goal, r: Goal): number {
  return 0.5 * (g.kind === r.kind ? 1 : 0) + 0.5 * (sameTarget(g.target, r.target) ? 1 : 0);
}

export function communicationScore(g: Communication, r: Communication): number {
  return 0.5 * (g.tone === r.tone ? 1 : 0) + 0.5 * (g.structure === r.structure ? 1 : 0);
}

/** The structured score of one dimension, when both texts read in the vocabulary's words. */
function structured(dim: LatentDimension, generated: string, truth: string, latent: Latent | undefined): number | undefined {
  switch (dim) {
    case "stance": {
      const g = readStances(generated);
      const r = latent?.stances ?? readStances(truth);
      return g && r ? pairedScore(g, r, stancePair) : undefined;
    }
    case "emotion": {
      const g = readEmotions(generated);
      const r = latent?.emotions ?? readEmotions(truth);
      return g && r ? pairedScore(g, r, emotionPair) : undefined;
    }
    case "belief":
    case "value": {
      const list = dim === "belief" ? BELIEFS : VALUES;
      const g = readSentence(generated, list);
      const r = readSentence(truth, list);
      return g !== undefined && r !== undefined ? (g === r ? 1 : 0) : undefined;
    }
    case "goal": {
      const g = readGoal(generated);
      const r = latent?.goal ?? readGoal(truth);
      return g && r ? goalScore(g, r) : undefined;
    }
    case "communication": {
      const g = readCommunication(generated);
      const r = latent?.communication ?? readCommunication(truth);
      return g && r ? communicationScore(g, r) : undefined;
    }
  }
}

/** The true text of a state: the record's, else its latent's; undefined when there is none. */
export function truthOf(name: string, reference: Reference): string | undefined {
  return reference.states[name] ?? (reference.latent && isLatentDimension(name) ? latentTexts(reference.latent)[name] : undefined);
}

/** One state's score against the ground truth. */
export function scoreState(name: string, generated: string, reference: Reference, opts: JudgeOptions = {}): StateScore {
  const truth = truthOf(name, reference);
  if (truth === undefined) return { score: null, method: "none" };
  if (isLatentDimension(name)) {
    const s = structured(name, generated, truth, reference.latent);
    if (s !== undefined) return { score: s, method: "structured" };
  }
  return { score: clamp01((opts.freeText ?? rougeF)(generated, truth)), method: "free-text" };
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** The weighted mean of the judged scores (states without a ground truth left out). */
export function combine(states: Readonly<Record<string, StateScore>>, response: number, h: Hierarchy, opts: Pick<JudgeOptions, "weights">): number {
  let sum = weightOf(h.response.name, opts) * response;
  let total = weightOf(h.response.name, opts);
  for (const d of h.states) {
    const s = states[d.name];
    if (s?.score === null || s === undefined) continue;
    sum += weightOf(d.name, opts) * s.score;
    total += weightOf(d.name, opts);
  }
  return total > 0 ? sum / total : 0;
}

export function judgeReply(reply: Reply, reference: Reference, h: Hierarchy, opts: JudgeOptions = {}): Judgement {
  const states: Record<string, StateScore> = {};
  for (const d of h.states) states[d.name] = scoreState(d.name, reply.states[d.name] ?? "", reference, opts);
  const response = clamp01((opts.freeText ?? rougeF)(reply.response, reference.response));
  const alignment = combine(states, response, h, opts);
  return { wellFormed: true, states, response, alignment, reward: alignment };
}

/** A reply that does not keep the format: every judged state and the response score 0. */
export function malformedJudgement(error: string, reference: Reference, h: Hierarchy): Judgement {
  const states: Record<string, StateScore> = {};
  for (const d of h.states) states[d.name] = truthOf(d.name, reference) === undefined ? { score: null, method: "none" } : { score: 0, method: "malformed" };
  return { wellFormed: false, error, states, response: 0, alignment: 0, reward: MALFORMED_REWARD };
}

/** A model's text: read strictly (reply.ts), then judged. */
export function judgeText(text: string, reference: Reference, h: Hierarchy, opts: JudgeOptions = {}): Judgement {
  const parsed = parseReply(text, h);
  return parsed.ok ? judgeReply(parsed.action, reference, h, opts) : malformedJudgement(parsed.error, reference, h);
}

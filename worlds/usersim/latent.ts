/**
 * A user's latent states for one reply, as structures (the generator's ground truth), their
 * canonical texts (what the reply's tags hold), and the reverse: reading a state's text back into
 * its structure when it is written in the vocabulary's words. Reading is what makes the offline
 * judge exact: a state it can read is compared part by part (target, direction, intensity...);
 * one it cannot is free text.
 *
 *   stance         "strongly agrees with X; is neutral on Y"         (target, position -2..2)
 *   emotion        "strong frustration about X; mild hope for Y"     (emotion, intensity 1..3, target)
 *   belief, value  one sentence of BELIEFS / VALUES
 *   goal           "persuade others about X"                         (kind, target)
 *   communication  "blunt, states a conclusion with little explanation" (tone, structure)
 */
import { z } from "zod";
import { BELIEFS, EMOTIONS, GOAL_KINDS, GOAL_TEMPLATES, INTENSITIES, POSITION_PHRASES, STRUCTURES, TONES, VALUES, type GoalKind } from "./vocabulary.js";

const Target = z.string().trim().min(1, "is empty").max(200, "longer than 200 characters").regex(/^[^;<>\r\n]+$/, "a target is one line without ; < or >");

export const StanceSchema = z.strictObject({
  target: Target,
  position: z.number().int().min(-2, "a position is -2..2").max(2, "a position is -2..2"),
});
export const EmotionSchema = z.strictObject({
  emotion: z.enum(Object.keys(EMOTIONS) as [string, ...string[]], { error: `expected one of ${Object.keys(EMOTIONS).join(", ")}` }),
  intensity: z.number().int().min(1, "an intensity is 1 (mild), 2 (moderate) or 3 (strong)").max(3, "an intensity is 1 (mild), 2 (moderate) or 3 (strong)"),
  target: Target,
});
export const GoalSchema = z.strictObject({ kind: z.enum(GOAL_KINDS as [GoalKind, ...GoalKind[]], { error: `expected one of ${GOAL_KINDS.join(", ")}` }), target: Target });
export const CommunicationSchema = z.strictObject({
  tone: z.enum(TONES as [string, ...string[]], { error: `expected one of ${TONES.join(", ")}` }),
  structure: z.enum(STRUCTURES as [string, ...string[]], { error: `expected one of: ${STRUCTURES.join("; ")}` }),
});

const distinctTargets = <T extends { target: string }>(items: readonly T[]) => new Set(items.map((i) => normalizeTarget(i.target))).size === items.length;

export const LatentSchema = z.strictObject({
  stances: z.array(StanceSchema).min(1, "needs a stance").max(4, "at most 4 stances").refine(distinctTargets, "two stances on one target"),
  emotions: z.array(EmotionSchema).min(1, "needs an emotion").max(4, "at most 4 emotions").refine(distinctTargets, "two emotions about one target"),
  belief: z.enum(BELIEFS as [string, ...string[]], { error: "expected a sentence of the belief list (vocabulary.ts BELIEFS)" }),
  value: z.enum(VALUES as [string, ...string[]], { error: "expected a sentence of the value list (vocabulary.ts VALUES)" }),
  goal: GoalSchema,
  communication: CommunicationSchema,
  /** Picks the reply's wording among the templates' variants (realize.ts). */
  seed: z.number().int().min(0).max(2 ** 32 - 1),
});

export type Stance = z.infer<typeof StanceSchema>;
export type Emotion = z.infer<typeof EmotionSchema>;
export type Goal = z.infer<typeof GoalSchema>;
export type Communication = z.infer<typeof CommunicationSchema>;
export type Latent = z.infer<typeof LatentSchema>;

/** The dimensions a latent has, in HumanLM's order. */
export const LATENT_DIMENSIONS = ["stance", "emotion", "belief", "value", "goal", "communication"] as const;
export type LatentDimension = (typeof LATENT_DIMENSIONS)[number];

export function isLatentDimension(name: string): name is LatentDimension {
  return (LATENT_DIMENSIONS as readonly string[]).includes(name);
}

export function stanceText(s: Stance): string {
  return `${POSITION_PHRASES[s.position]} ${s.target}`;
}

export function emotionText(e: Emotion): string {
  return `${INTENSITIES[e.intensity]} ${e.emotion} about ${e.target}`;
}

export function goalText(g: Goal): string {
  return GOAL_TEMPLATES[g.kind].replace("{t}", g.target);
}

/** Each dimension's canonical text. */
export function latentTexts(l: Latent): Record<LatentDimension, string> {
  return {
    stance: l.stances.map(stanceText).join("; "),
    emotion: l.emotions.map(emotionText).join("; "),
    belief: l.belief,
    value: l.value,
    goal: goalText(l.goal),
    communication: `${l.communication.tone}, ${l.communication.structure}`,
  };
}

/** Targets compare without case, a leading article, final punctuation or extra spaces. */
export function normalizeTarget(t: string): string {
  return t
    .toLowerCase()
    .replace(/[.!?,;:]+$/g, "")
    .replace(/^(?:a|an|the)\s+/, "")
    .replace(/\s+/g, " ")
    .trim();
}

function normalizeSentence(s: string): string {
  return s.toLowerCase().replace(/[.!]+$/, "").replace(/\s+/g, " ").trim();
}

const items = (text: string) =>
  text
    .split(";")
    .map((x) => x.trim().replace(/[.!]+$/, ""))
    .filter((x) => x !== "");

const STANCE_RE = /^(?:(strongly|somewhat|mildly|slightly) )?(agrees|disagrees|agree|disagree) (?:with|on|about|to) (.+)$/i;
const NEUTRAL_RE = /^(?:is )?neutral (?:on|about|toward|towards|regarding) (.+)$/i;
const MAX_ITEMS = 6;

/** A stance text in the vocabulary's words, or undefined. */
export function readStances(text: string): Stance[] | undefined {
  const out: Stance[] = [];
  for (const item of items(text)) {
    const n = NEUTRAL_RE.exec(item);
    if (n) {
      out.push({ target: n[1]!, position: 0 });
      continue;
    }
    const m = STANCE_RE.exec(item);
    if (!m) return undefined;
    const strength = m[1]?.toLowerCase() === "strongly" ? 2 : 1;
    out.push({ target: m[3]!, position: m[2]!.toLowerCase().startsWith("dis") ? -strength : strength });
  }
  return out.length && out.length <= MAX_ITEMS ? out : undefined;
}

const INTENSITY_WORDS: Readonly<Record<string, number>> = { slight: 1, mild: 1, moderate: 2, strong: 3, intense: 3, deep: 3 };
const EMOTION_RE = /^(\w+) (\w+) (?:about|for|at|toward|towards|with|over|regarding|on|of|from) (.+)$/i;

export function readEmotions(text: string): Emotion[] | undefined {
  const out: Emotion[] = [];
  for (const item of items(text)) {
    const m = EMOTION_RE.exec(item);
    const intensity = m ? INTENSITY_WORDS[m[1]!.toLowerCase()] : undefined;
    const emotion = m?.[2]!.toLowerCase();
    if (!m || intensity === undefined || emotion === undefined || !(emotion in EMOTIONS)) return undefined;
    out.push({ emotion, intensity, target: m[3]! });
  }
  return out.length && out.length <= MAX_ITEMS ? out : undefined;
}

const sentenceIndexes = new WeakMap<readonly string[], ReadonlyMap<string, number>>();

/** The index of the list's sentence the text is (case, final stop and spacing aside), or undefined. */
export function readSentence(text: string, list: readonly string[]): number | undefined {
  let index = sentenceIndexes.get(list);
  if (!index) sentenceIndexes.set(list, (index = new Map(list.map((s, i) => [normalizeSentence(s), i]))));
  return index.get(normalizeSentence(text));
}

const GOAL_RES: readonly (readonly [GoalKind, RegExp])[] = GOAL_KINDS.map((k) => [k, new RegExp(`^${GOAL_TEMPLATES[k].replace("{t}", "(.+)")}$`, "i")] as const);

export function readGoal(text: string): Goal | undefined {
  const t = text.trim().replace(/[.!]+$/, "");
  for (const [kind, re] of GOAL_RES) {
    const m = re.exec(t);
    if (m) return { kind, target: m[1]! };
  }
  return undefined;
}

export function readCommunication(text: string): Communication | undefined {
  const t = normalizeSentence(text);
  const comma = t.indexOf(",");
  if (comma < 0) return undefined;
  const tone = t.slice(0, comma).trim();
  const structure = t.slice(comma + 1).trim();
  return TONES.includes(tone) && STRUCTURES.includes(structure) ? { tone, structure } : undefined;
}

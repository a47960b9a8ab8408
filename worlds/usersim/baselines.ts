/**
 * The decision logic of the baseline agents, from what the user observes (its profile and the
 * conversation) or, for the ceiling, from the ground truth:
 *
 *   random      states drawn uniformly from the vocabulary, about the targets the conversation
 *               names; a reply written from them
 *   heuristic   what the profile says: the user's listed opinion on the post's target (else
 *               undecided), an emotion that follows from it, its first listed belief and value,
 *               its listed tone and structure; a reply written from them
 *   simulation  the generator's latent states themselves, and the reply they produce: the ceiling
 *               (1 on every state and on the response)
 *
 * A state the vocabulary has no words for (a hierarchy's own tag) is written "unknown".
 */
import type { Rng } from "../core/rng.js";
import type { Hierarchy } from "./hierarchy.js";
import { isLatentDimension, latentTexts, normalizeTarget, readSentence, readStances, type Emotion, type Goal, type Latent } from "./latent.js";
import { realizeReply } from "./realize.js";
import type { ThreadMessage } from "./records.js";
import type { Reply } from "./reply.js";
import { BELIEFS, EMOTIONS, GOAL_KINDS, STRUCTURES, TONES, TOPICS, VALUES } from "./vocabulary.js";

export const UNKNOWN_STATE = "unknown";

/** What a baseline reads: the user's observation. */
export interface UserView {
  readonly user: string;
  readonly profile: string;
  readonly thread: readonly ThreadMessage[];
}

/** The reply for a hierarchy from a latent (states it does not cover: `known`, else "unknown"). */
export function replyFromLatent(latent: Latent, h: Hierarchy, known: Readonly<Record<string, string>> = {}): Reply {
  const texts = latentTexts(latent);
  const states: Record<string, string> = {};
  for (const d of h.states) states[d.name] = isLatentDimension(d.name) ? texts[d.name] : (known[d.name] ?? UNKNOWN_STATE);
  return { states, response: realizeReply(latent) };
}

export function simulationReply(latent: Latent, h: Hierarchy, known: Readonly<Record<string, string>> = {}): Reply {
  return replyFromLatent(latent, h, known);
}

const ALL_TARGETS = TOPICS.flatMap((t) => t.targets);

/** The vocabulary's targets the conversation names, the others' messages first (the post leads). */
export function targetsIn(view: UserView): string[] {
  const order = [...view.thread.filter((m) => m.author !== view.user), ...view.thread.filter((m) => m.author === view.user)];
  const found: string[] = [];
  for (const m of order) {
    const text = m.text.toLowerCase();
    for (const t of ALL_TARGETS) if (!found.includes(t) && text.includes(normalizeTarget(t))) found.push(t);
  }
  return found;
}

/** The items of one "Part: a; b; c" line of a profile as world.ts renders it. */
export function profileItems(profile: string, part: string): string[] {
  const line = profile.split("\n").find((l) => l.startsWith(`${part}: `));
  if (!line || line === `${part}: Missing`) return [];
  return line
    .slice(part.length + 2)
    .split(";")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** Real data names no target of the vocabulary: the reply is then about the post itself. */
const THE_POST = "the post";

export function heuristicLatent(view: UserView): Latent {
  const target = targetsIn(view)[0] ?? THE_POST;
  const values = profileItems(view.profile, "Values");
  let position = 0;
  for (const item of values) {
    const s = readStances(item)?.[0];
    if (s && normalizeTarget(s.target) === normalizeTarget(target)) position = s.position;
  }
  const emotion: Emotion =
    position > 0 ? { emotion: "enthusiasm", intensity: 2, target } : position < 0 ? { emotion: "frustration", intensity: 2, target } : { emotion: "curiosity", intensity: 1, target };
  const belief = values.map((v) => /^believes that (.+)$/.exec(v)?.[1]).find((b) => b !== undefined && readSentence(b, BELIEFS) !== undefined);
  const value = values.find((v) => readSentence(v, VALUES) !== undefined);
  const communication = profileItems(view.profile, "Communication");
  const tone = communication.map((c) => /^(\w+) tone$/.exec(c)?.[1]).find((t) => t !== undefined && TONES.includes(t));
  const structure = communication.find((c) => STRUCTURES.includes(c));
  const goal: Goal = { kind: position > 0 ? "share" : position < 0 ? "persuade" : "ask", target };
  return {
    stances: [{ target, position }],
    emotions: [emotion],
    belief: BELIEFS[readSentence(belief ?? "", BELIEFS) ?? 0]!,
    value: VALUES[readSentence(value ?? "", VALUES) ?? 0]!,
    goal,
    communication: { tone: tone ?? "friendly", structure: structure ?? STRUCTURES[1]! },
    seed: 0,
  };
}

export function heuristicReply(view: UserView, h: Hierarchy): Reply {
  return replyFromLatent(heuristicLatent(view), h);
}

export function randomLatent(view: UserView, rng: Rng): Latent {
  const named = targetsIn(view);
  const targets = named.length ? named : [THE_POST];
  const target = rng.pick(targets);
  return {
    stances: [{ target, position: rng.range(-2, 2) }],
    emotions: [{ emotion: rng.pick(Object.keys(EMOTIONS)), intensity: rng.range(1, 3), target }],
    belief: rng.pick(BELIEFS),
    value: rng.pick(VALUES),
    goal: { kind: rng.pick(GOAL_KINDS), target },
    communication: { tone: rng.pick(TONES), structure: rng.pick(STRUCTURES) },
    seed: rng.uint32(),
  };
}

export function randomReply(view: UserView, h: Hierarchy, rng: Rng): Reply {
  return replyFromLatent(randomLatent(view, rng), h);
}

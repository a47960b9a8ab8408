/**
 * The latent user model: what a user does on first seeing an item. Deterministic given the
 * user's profile, the item, and three draws that are a hash of (world seed, user, item), so the
 * generator's labels are exact and a predictor that knows the latent model (the `simulation`
 * agent) gets every one right, while a predictor that sees only profiles and histories can learn
 * the probabilities but not the draws.
 *
 *   heat      = |stance_u| * |stance_item|           (both care about the topic)
 *   agreement = stance_u * stance_item                (in [-1, 1])
 *   P(react)  = sigmoid(-6 + engagement + 6 interest + 4 heat + 3 direct - 1.5 earlier + style bias)
 *   react iff draw_engage < P(react); then the kind is drawn from softmax(
 *     comment: 5 max(-agreement, 0) + 2.4 direct + style,
 *     repost:  -0.6 + 5 max(agreement, 0) + 2 interest + style,
 *     like:    0.6 + 3 max(agreement, 0) + style)
 *   with draw_kind. `direct`: the item replies to the user's own item (it came as a notification).
 *   `earlier`: how many items of the same cascade (the same root post) the user decided on
 *   before this one: a story seen again and again loses its pull (fatigue), which is what keeps
 *   a cascade from reaching everyone once it reaches the hubs.
 * `engagement` is the world's offset (SimConfig.engagement): 0 for the generator's small
 * networks, negative in large ones so that a cascade dies out (each reaction reaches a user's
 * followers, who react in turn: fewer than one new reaction per reaction, or the post reaches
 * everyone). A user cannot react to an item at the world's depth limit (the decision is then
 * "ignore").
 */
import { COMMENT, LIKE, REPOST } from "./items.js";
import { clamp } from "./network.js";

/** The decision "ignore" (item kinds 1-3 are the reactions; 0, a post, is never a reaction). */
export const IGNORE = 0;
export type Decision = typeof IGNORE | typeof COMMENT | typeof REPOST | typeof LIKE;

export const DECISION_NAMES = ["ignore", "comment", "repost", "like"] as const;
export type DecisionName = (typeof DECISION_NAMES)[number];

// Per style (order of STYLES: plain, enthusiastic, formal, sarcastic, terse). The coefficients
// are large so that the profile decides most of the outcome: a predictor that knew the profiles
// exactly but not the draws would get most labels (see likeliestDecision), one that guesses from
// what users wrote before fewer, the majority class fewer still.
const ENGAGE_BIAS = [0, 1, 0, 0.4, -0.4];
const COMMENT_BIAS = [0, 0, 1.6, 2, -1.6];
const REPOST_BIAS = [0, 1.6, 0, -0.6, 0];
const LIKE_BIAS = [0, 0.6, -1, 0, 2];

export interface DecisionInput {
  /** The user's interest in the item's topic, [0, 1]. */
  readonly interest: number;
  /** The user's stance on the topic now, [-1, 1]. */
  readonly stance: number;
  /** The stance of the item's text, [-1, 1]. */
  readonly itemStance: number;
  /** The item replies to the user's own item. */
  readonly direct: boolean;
  /** Items of the same cascade the user decided on before this one. */
  readonly earlier: number;
  /** Index into STYLES. */
  readonly style: number;
  /** False at the world's depth limit. */
  readonly canReact: boolean;
  /** The world's engagement offset (logit). */
  readonly engagement: number;
}

/** The three latent draws of one decision: uniform [0, 1) for engaging and for the kind, a uint32 for the wording. */
export interface Draws {
  readonly engage: number;
  readonly kind: number;
  readonly text: number;
}

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The draws of user `user` on item `item` in a world seeded `seed` (integers), independent of the order of events. */
export function drawsFor(seed: number, user: number, item: number): Draws {
  const base = mix(mix(mix(seed ^ 0x243f6a88) ^ user) ^ Math.imul(item + 1, 0x9e3779b9));
  return {
    engage: mix(base ^ 0x1) / 4294967296,
    kind: mix(base ^ 0x2) / 4294967296,
    text: mix(base ^ 0x3),
  };
}

export function reactProbability(x: DecisionInput): number {
  const heat = Math.abs(x.stance) * Math.abs(x.itemStance);
  const z = -6 + x.engagement + 6 * x.interest + 4 * heat + (x.direct ? 3 : 0) - 1.5 * x.earlier + (ENGAGE_BIAS[x.style] ?? 0);
  return 1 / (1 + Math.exp(-z));
}

/** The probabilities of comment, repost and like given a reaction (sum 1). */
export function kindProbabilities(x: DecisionInput): [number, number, number] {
  const a = x.stance * x.itemStance;
  const c = 5 * Math.max(-a, 0) + (x.direct ? 2.4 : 0) + (COMMENT_BIAS[x.style] ?? 0);
  const r = -0.6 + 5 * Math.max(a, 0) + 2 * x.interest + (REPOST_BIAS[x.style] ?? 0);
  const l = 0.6 + 3 * Math.max(a, 0) + (LIKE_BIAS[x.style] ?? 0);
  const m = Math.max(c, r, l);
  const ec = Math.exp(c - m);
  const er = Math.exp(r - m);
  const el = Math.exp(l - m);
  const s = ec + er + el;
  return [ec / s, er / s, el / s];
}

/** The decision, as the latent model takes it. */
export function decide(x: DecisionInput, d: Draws): Decision {
  if (!x.canReact) return IGNORE;
  if (d.engage >= reactProbability(x)) return IGNORE;
  const [pc, pr] = kindProbabilities(x);
  if (d.kind < pc) return COMMENT;
  if (d.kind < pc + pr) return REPOST;
  return LIKE;
}

/**
 * The most likely decision given the profile alone (the draws unknown): what a predictor that
 * learned the latent probabilities exactly would say. Shows how much of the label is noise.
 */
export function likeliestDecision(x: DecisionInput): Decision {
  if (!x.canReact) return IGNORE;
  const p = reactProbability(x);
  const [pc, pr, pl] = kindProbabilities(x);
  const best = Math.max(pc, pr, pl) * p;
  if (1 - p >= best) return IGNORE;
  return pc * p === best ? COMMENT : pr * p === best ? REPOST : LIKE;
}

/**
 * The stance after acting on an item: agreeing (a like or repost of an item one agrees with)
 * pulls the user toward the item by `influence`; arguing against it (a comment on an item one
 * disagrees with) pushes the user half as far away (backfire). Other acts leave it.
 */
export function stanceAfter(stance: number, itemStance: number, decision: Decision, influence: number): number {
  const a = stance * itemStance;
  if ((decision === LIKE || decision === REPOST) && a >= 0) return clamp(stance + influence * (itemStance - stance), -1, 1);
  if (decision === COMMENT && a < 0) return clamp(stance - 0.5 * influence * (itemStance - stance), -1, 1);
  return stance;
}

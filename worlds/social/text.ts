/**
 * How the latent user model words what it writes: a claim from the writer's own side of the topic
 * (or a question, when undecided), framed by whether it agrees with what it answers, in the
 * writer's style. A pure function of its inputs and a seed, so a generated text is reproduced
 * exactly by anyone who knows the latent state (the generator, the `simulation` agent).
 */
import { Rng } from "../core/rng.js";
import { COMMENT, POST, REPOST } from "./items.js";
import { STYLES, TOPICS, type Style } from "./vocabulary.js";

type Templates = Readonly<Record<Style, readonly string[]>>;

// {claim}: a claim as a sentence ("Nuclear power is too dangerous"); {claim_lc}: the same
// lower-cased at its start; {topic}: the topic's name; {tag}: its hashtag.
const POSTS: Templates = {
  plain: ["{claim}. #{tag}", "Thinking about {topic} today: {claim_lc}."],
  enthusiastic: ["{claim}!! #{tag}", "Can't stop thinking about {topic}! {claim}!"],
  formal: ["On {topic}: {claim}.", "A note on {topic}. {claim}."],
  sarcastic: ["Hot take nobody asked for: {claim_lc}. #{tag}", "Unpopular opinion, apparently: {claim_lc}."],
  terse: ["{claim_lc} #{tag}", "{claim_lc}"],
};

// A writer without a side posts a question.
const QUESTION_POSTS: Templates = {
  plain: ["{claim}? #{tag}", "Thinking about {topic}: {claim_lc}?"],
  enthusiastic: ["{claim}?! #{tag}", "So curious about {topic}! {claim}?"],
  formal: ["A question on {topic}: {claim_lc}?", "On {topic}, I wonder: {claim_lc}?"],
  sarcastic: ["Serious question, since everyone is an expert: {claim_lc}?", "Quick poll for the geniuses: {claim_lc}?"],
  terse: ["{claim_lc}? #{tag}", "{claim_lc}?"],
};

const AGREE: Templates = {
  plain: ["Agreed. {claim}.", "Exactly, {claim_lc}.", "Good point. {claim}."],
  enthusiastic: ["Yes!! {claim}!", "100% this! {claim}!", "So true!! {claim}!"],
  formal: ["I concur. {claim}.", "A fair point; indeed, {claim_lc}."],
  sarcastic: ["Finally someone says it. {claim}.", "Wow, a sensible take for once. {claim}."],
  terse: ["agreed", "this. {claim_lc}"],
};

const DISAGREE: Templates = {
  plain: ["I disagree. {claim}.", "Not really. {claim}."],
  enthusiastic: ["No way!! {claim}!", "Totally wrong! {claim}!"],
  formal: ["I respectfully disagree. {claim}.", "The evidence suggests otherwise: {claim_lc}."],
  sarcastic: ["Oh sure, because that always works. {claim}.", "Right, and pigs fly. {claim}."],
  terse: ["nope", "wrong. {claim_lc}"],
};

const NEUTRAL: Templates = {
  plain: ["Interesting. {claim}?", "Hmm, {claim_lc}?"],
  enthusiastic: ["Love this discussion! {claim}?", "Ooh! {claim}?"],
  formal: ["A question worth asking: {claim_lc}?", "I wonder: {claim_lc}?"],
  sarcastic: ["Sure, but {claim_lc}?", "Great, and {claim_lc}?"],
  terse: ["{claim_lc}?", "hm"],
};

// A writer with a side answering something that takes none.
const STATE: Templates = {
  plain: ["{claim}.", "Well, {claim_lc}."],
  enthusiastic: ["{claim}!", "Honestly? {claim}!"],
  formal: ["In my view, {claim_lc}.", "I would add that {claim_lc}."],
  sarcastic: ["Obviously {claim_lc}.", "Shocking news: {claim_lc}."],
  terse: ["{claim_lc}"],
};

// Reposts by a writer without a side.
const REPOST_PLAIN: Templates = {
  plain: ["Interesting.", "Sharing this."],
  enthusiastic: ["Ooh, look at this!", "Everyone, thoughts?!"],
  formal: ["Of interest on {topic}.", "Worth a read on {topic}."],
  sarcastic: ["This will go well.", "Grab the popcorn."],
  terse: ["", "hm"],
};

const REPOST_AGREE: Templates = {
  plain: ["Worth reading.", "Sharing this. {claim}."],
  enthusiastic: ["Everyone needs to see this!!", "Sharing!! {claim}!"],
  formal: ["Recommended reading on {topic}.", "Worth your time: {claim_lc}."],
  sarcastic: ["Saving this for the next family dinner.", "For the people in the back: {claim_lc}."],
  terse: ["", "+1"],
};

const REPOST_DISAGREE: Templates = {
  plain: ["Look at this take.", "Not convinced. {claim}."],
  enthusiastic: ["Can you believe this?!", "Wow. Just wow. {claim}!"],
  formal: ["An argument I cannot accept. {claim}.", "For the record, I disagree: {claim_lc}."],
  sarcastic: ["Galaxy-brained take of the day.", "Peak wisdom right here."],
  terse: ["lol", ""],
};

/** Agreement at or beyond which a reaction reads as agreeing (or, negated, disagreeing). */
export const AGREE_THRESHOLD = 0.1;
/** Stance beyond which a user takes a side (below it, asks instead of claiming). */
export const SIDE_THRESHOLD = 0.15;

/** A side on a topic, as a text states it. */
export type Side = "for" | "against";

/**
 * The side a text takes on topic `topic` (an index of TOPICS), as anyone who reads it sees it:
 * "for" or "against" when it states one of the topic's claims for or against (in any case, as
 * writeText words them), undefined when it states none (a question, "agreed", a repost without
 * words). The item's stance itself is latent; this is what its text shows of it, read off the
 * text alone, so it applies to any text (one a person wrote shows a side only in these words).
 */
export function visibleSide(text: string, topic: number): Side | undefined {
  const t = TOPICS[topic];
  if (!t) return undefined;
  const lower = text.toLowerCase();
  const states = (claims: readonly string[]) => claims.some((c) => lower.includes(c.toLowerCase()));
  const pro = states(t.pro);
  const con = states(t.con);
  return pro === con ? undefined : pro ? "for" : "against";
}

function lowerStart(s: string): string {
  // "Nuclear power is..." -> "nuclear power is..."; "AI art..." keeps its acronym.
  return s.length > 1 && s[1] === s[1]!.toLowerCase() ? s[0]!.toLowerCase() + s.slice(1) : s;
}

function fill(template: string, topic: number, stance: number, rng: Rng): string {
  const t = TOPICS[topic]!;
  const pool = stance >= SIDE_THRESHOLD ? t.pro : stance <= -SIDE_THRESHOLD ? t.con : t.neutral;
  const claim = rng.pick(pool);
  return template
    .replace("{claim}", claim)
    .replace("{claim_lc}", lowerStart(claim))
    .replace("{topic}", t.name)
    .replace("{tag}", t.hashtag);
}

function finish(text: string, style: Style): string {
  const t = text.trim();
  return style === "terse" ? t.toLowerCase() : t;
}

export interface WritingInput {
  /** POST, COMMENT or REPOST. */
  readonly kind: number;
  readonly topic: number;
  /** The writer's stance on the topic. */
  readonly stance: number;
  /** The stance of what is answered (ignored for a post). */
  readonly parentStance: number;
  readonly style: number;
  /** The name a reply addresses ("@Lin Chen"), for a comment on a comment or repost. */
  readonly replyTo?: string;
  readonly seed: number;
}

/** The text the latent model writes. */
export function writeText(x: WritingInput): string {
  const style = STYLES[x.style] ?? "plain";
  const rng = Rng.seeded(x.seed >>> 0);
  // A writer with no side asks (its claims are the topic's questions); one with a side claims.
  const side = Math.abs(x.stance) >= SIDE_THRESHOLD;
  const a = x.stance * x.parentStance;
  let pool: Templates;
  if (x.kind === POST) pool = side ? POSTS : QUESTION_POSTS;
  else if (x.kind === REPOST) pool = !side ? REPOST_PLAIN : a <= -AGREE_THRESHOLD ? REPOST_DISAGREE : REPOST_AGREE;
  else if (x.kind === COMMENT) pool = !side ? NEUTRAL : a >= AGREE_THRESHOLD ? AGREE : a <= -AGREE_THRESHOLD ? DISAGREE : STATE;
  else return "";
  const body = finish(fill(rng.pick(pool[style]), x.topic, x.stance, rng), style);
  return x.kind === COMMENT && x.replyTo ? `@${x.replyTo} ${body}` : body;
}

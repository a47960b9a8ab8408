/**
 * ToMi's sentences in other words, for training stories that do not teach one wording: "Ella walked
 * into the den.", "The crate holds the spinach.", "Avery can't stand the lime". A policy trained
 * from scratch on the grammar's five sentences knows no other, and a story told in other words
 * (ParaphrasedToMi) reads to it as noise; trained on several wordings of each event, where the verb
 * varies and the words around the places carry the meaning ("into", "out of", "contains"), it can
 * learn to read the event from those words.
 *
 * The wordings below are everyday English written for this purpose, not taken from any evaluation
 * file (docs/learning.md measures how many of ParaphrasedToMi's sentences they happen to cover).
 * Every one reads back through the reader (sentences.ts, paraphrase.ts) as the sentence it words:
 * the training file is read like any ToMi file, and its labels stay the world model's
 * (test/tomi/rewording.test.ts).
 */
import type { Rng } from "../core/rng.js";
import type { TomiSentence } from "./sentence.js";
import { renderSentence } from "./sentences.js";

/** Verbs of walking that take "into the room" or "out of the room". */
const WALKING = ["walked", "went", "came", "stepped", "ran", "hurried", "rushed", "wandered", "strolled", "dashed", "crept", "marched"];

const ENTERING: readonly ((agent: string, room: string, rng: Rng) => string)[] = [
  (a, r, rng) => `${a} ${rng.pick(WALKING)} into the ${r}.`,
  (a, r) => `${a} arrived in the ${r}.`,
  (a, r) => `${a} arrived at the ${r}.`,
  (a, r) => `${a} showed up in the ${r}.`,
  (a, r) => `${a} visited the ${r}.`,
];

const EXITING: readonly ((agent: string, room: string, rng: Rng) => string)[] = [
  (a, r, rng) => `${a} ${rng.pick(WALKING)} out of the ${r}.`,
  (a, r, rng) => `${a} ${rng.pick(["walked", "went", "ran", "hurried", "stepped"])} away from the ${r}.`,
  (a, r) => `${a} left the ${r}.`,
  (a, r) => `${a} departed from the ${r}.`,
  (a, r) => `${a} got out of the ${r}.`,
];

/** Verbs of taking a thing somewhere ("carried the lime to the box"). */
const TAKING = ["moved", "carried", "took", "brought", "shifted", "transferred", "relocated"];
/** Verbs of putting a thing somewhere ("put the lime in the box"). */
const PUTTING = ["put", "placed", "stored", "dropped", "packed", "stashed", "tucked"];

const MOVING: readonly ((agent: string, object: string, container: string, rng: Rng) => string)[] = [
  (a, o, c, rng) => `${a} ${rng.pick(TAKING)} the ${o} to the ${c}.`,
  (a, o, c, rng) => `${a} ${rng.pick([...TAKING, ...PUTTING])} the ${o} into the ${c}.`,
  (a, o, c, rng) => `${a} ${rng.pick(PUTTING)} the ${o} in the ${c}.`,
];

/** Where a thing is: an object in its container, or a container in its room. */
const LOCATED: readonly ((subject: string, place: string, rng: Rng) => string)[] = [
  (s, p) => `The ${s} is inside the ${p}.`,
  (s, p, rng) => `The ${s} is ${rng.pick(["located", "kept", "stored", "sitting", "resting"])} in the ${p}.`,
  (s, p, rng) => `The ${s} ${rng.pick(["sits", "rests", "lies", "stays"])} in the ${p}.`,
  (s, p, rng) => `The ${p} ${rng.pick(["contains", "holds", "has"])} the ${s}.`,
  (s, p) => `There is ${article(s)} ${s} in the ${p}.`,
  (s, p) => `Inside the ${p} is the ${s}.`,
];

/** The distractor remarks, their polarity kept: they read back as "likes" or "dislikes". */
const LIKING = ["is fond of the", "adores the", "enjoys the", "is keen on the", "is crazy about the"];
const DISLIKING = ["can't stand the", "detests the", "despises the", "is annoyed by the", "is disgusted by the"];

/**
 * The sentence in one of the wordings above, drawn with `rng`; the grammar's own wording is one of
 * them. A remark keeps its missing period, as ToMi writes it.
 */
export function rewordSentence(s: TomiSentence, rng: Rng): string {
  switch (s.kind) {
    case "enter":
      return rng.chance(1 / (ENTERING.length + 1)) ? renderSentence(s) : rng.pick(ENTERING)(s.agent, s.room, rng);
    case "exit":
      return rng.chance(1 / (EXITING.length + 1)) ? renderSentence(s) : rng.pick(EXITING)(s.agent, s.room, rng);
    case "move":
      return rng.chance(1 / (MOVING.length + 1)) ? renderSentence(s) : rng.pick(MOVING)(s.agent, s.object, s.container, rng);
    case "located":
      return rng.chance(1 / (LOCATED.length + 1)) ? renderSentence(s) : rng.pick(LOCATED)(s.subject, s.place, rng);
    case "agents_at":
      return renderSentence(s);
    case "remark": {
      const liking = s.verb === "likes" || s.verb === "loves";
      return `${s.agent} ${rng.pick(liking ? LIKING : DISLIKING)} ${s.thing}${s.period ? "." : ""}`;
    }
  }
}

function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? "an" : "a";
}

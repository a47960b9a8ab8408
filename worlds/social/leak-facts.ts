/**
 * The social world's fact vocabulary for the leak audit (worlds/core/leak-audit.ts): an item
 * exists (the post p12, the comment c13). A user perceives an item when it is on their screen (its
 * id is in their observation, as an entry or as the context of one); an action that targets an
 * item, or a text that names one, that its user never had on screen uses what they could not know.
 * A room refuses reactions to unseen items, so the leaks this finds are in what people and models
 * write: "as c40 said, ..." about a comment they were never shown.
 */
import type { Fact, FactSource, FactVocabulary } from "../core/leak-audit.js";

const ITEM_ID = /\b[pcrl]\d+\b/g;
const KIND = { p: "post", c: "comment", r: "repost", l: "like" } as const;

function itemFact(id: string): Fact {
  return { id: `item:${id}`, text: `the ${KIND[id[0] as keyof typeof KIND]} ${id} exists` };
}

/** The items a text names by id. */
function factsIn(text: string): Fact[] {
  return [...new Set(text.match(ITEM_ID) ?? [])].map(itemFact);
}

const NAME = String.raw`[A-Z][\p{L}'-]* [A-Z][\p{L}'-]*(?: \d+)?`;
const VERBS = String.raw`(?:posted|commented on|reposted|liked) [pcrl]\d+`;
/** Where each event of a timestep's state text starts: "Lin Chen posted p3: ...", "Wei Wang commented on p3 (c5): ...". */
const EVENT_START = new RegExp(String.raw`\s+(?=${NAME} ${VERBS})`, "u");
const EVENT = new RegExp(String.raw`^${NAME} ${VERBS}`, "u");

const vocabulary: FactVocabulary = {
  facts: factsIn,
  // An event makes its item true (and names what it answers, true already); nothing stops existing.
  update: (sentence) => ({ begin: factsIn(sentence.replace(/: ".*$/su, "")), end: [] }),
  split: (text) => (text === "none" ? [] : text.split(EVENT_START).filter((e) => e.trim() !== "")),
  stated(action) {
    const a = action as { action?: unknown; target?: unknown } | null;
    return a && typeof a === "object" && typeof a.target === "string" && new RegExp(`^${ITEM_ID.source}$`).test(a.target) ? [itemFact(a.target)] : [];
  },
};

export const socialFacts: FactSource = {
  forEpisode: () => ({ vocabulary, initialTruths: [] }),
  reads: (sentence) => EVENT.test(sentence),
};

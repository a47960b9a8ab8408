/**
 * FANToM's fact vocabulary for the leak audit (worlds/core/leak-audit.ts): the facts characters
 * share (a dog's breed, a trip's destination; facts.ts). Every kind draws its values from a closed
 * list and no two kinds share a value, so a text states a fact exactly when it names one of its
 * values, as the reader finds them. A fact becomes true for the conversation when someone says it:
 * a character who repeats what was said only while it was away (a segment it missed) leaks it;
 * the one who says it first does not (it is that character's own news).
 */
import type { Fact, FactSource, FactVocabulary } from "../core/leak-audit.js";
import { FACT_KINDS, valueIn } from "./facts.js";
import type { FantomAction, FantomState } from "./world.js";

/** The shared facts a text names: "beagle (dog breed)". */
function factsIn(text: string): Fact[] {
  const out: Fact[] = [];
  for (const kind of FACT_KINDS) {
    const value = valueIn(kind, text);
    if (value !== undefined) out.push({ id: `${kind.id}=${value}`, text: `${value} (${kind.id.replace(/_/g, " ")})` });
  }
  return out;
}

/** One event per utterance, departure or return: an utterance has sentences of its own. */
const EVENT_START = /\s+(?=[A-Z][\p{L}'-]*(?: [A-Z][\p{L}'-]*)? (?:said: "|left the conversation\.|joined the conversation\.))/u;

function vocabulary(state?: FantomState): FactVocabulary {
  return {
    facts: factsIn,
    update: (sentence) => ({ begin: factsIn(sentence), end: [] }),
    split: (text) => text.split(EVENT_START).filter((e) => e.trim() !== ""),
    stated(action) {
      const a = action as Partial<FantomAction> | null;
      if (!a || typeof a !== "object" || a.type !== "say" || !Array.isArray(a.facts)) return [];
      // The world's fact ids stand for statements ("Linda's dog is a beagle."): what those name.
      return a.facts.flatMap((id) => {
        const statement = state?.facts[id];
        return typeof statement === "string" ? factsIn(statement) : [];
      });
    },
  };
}

export const fantomFacts: FactSource = {
  forEpisode: (_context, initialState) => ({ vocabulary: vocabulary(initialState as FantomState | undefined), initialTruths: [] }),
  reads: (sentence) => /^[A-Z][\p{L}'-]*(?: [A-Z][\p{L}'-]*)? (?:said: "|left the conversation\.|joined the conversation\.)/u.test(sentence),
};

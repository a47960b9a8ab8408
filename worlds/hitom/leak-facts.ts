/**
 * Hi-ToM's fact vocabulary for the leak audit (worlds/core/leak-audit.ts): where each object is.
 * A move, the narrator, or an entrance ("... entered the attic. The onion is in the red_box.")
 * makes a fact true; a claim states a place without making it true, and a claim's structure (its
 * object and container) is what the audit checks a speaker's knowledge against.
 */
import { LocationFacts, locationFact, type LocationGrammar } from "../core/location-facts.js";
import type { Fact, FactSource } from "../core/leak-audit.js";
import { parseSentence } from "./sentences.js";
import type { HitomAction, HitomState } from "./world.js";

const grammar: LocationGrammar = {
  truth(sentence) {
    const s = parseSentence(sentence);
    return s?.kind === "move" || s?.kind === "located" ? { object: s.object, container: s.container } : undefined;
  },
  names(sentence) {
    const s = parseSentence(sentence);
    switch (s?.kind) {
      case "move":
      case "located":
      case "public_claim":
      case "private_claim":
        return { objects: [s.object], containers: [s.container] };
      default:
        return { objects: [], containers: [] };
    }
  },
};

/** A claim states where its object is; moving an object states where it is now (the mover sees it). */
function stated(action: unknown): Fact[] {
  const a = action as Partial<HitomAction> | null;
  if (a && typeof a === "object" && a.type === "claim" && typeof a.object === "string" && typeof a.container === "string") return [locationFact(a.object, a.container)];
  return [];
}

export const hitomFacts: FactSource = {
  forEpisode(context, initialState) {
    const state = initialState as HitomState | undefined;
    const vocabulary = LocationFacts.of(
      grammar,
      context.socialized_context.map((s) => s.state),
      state ? { objects: state.layout.objects, containers: state.layout.containers } : undefined,
      stated,
    );
    const initialTruths: Fact[] = [];
    for (const [o, c] of state?.objectContainer ?? []) initialTruths.push(locationFact(o, c));
    return { vocabulary, initialTruths };
  },
  reads: (sentence) => parseSentence(sentence) !== undefined,
};

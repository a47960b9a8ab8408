/**
 * ToMi's fact vocabulary for the leak audit (worlds/core/leak-audit.ts): where each object is.
 * A move or the narrator ("The apple is in the box.") makes a fact true; "The box is in the
 * kitchen." places a container (its place is a room of the story) and states no fact about objects.
 */
import { LocationFacts, locationFact, type LocationGrammar } from "../core/location-facts.js";
import { sentencesOf, type Fact, type FactSource } from "../core/leak-audit.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { parseSentence } from "./sentences.js";
import type { TomiState } from "./world.js";

function grammar(rooms: ReadonlySet<string>): LocationGrammar {
  return {
    truth(sentence) {
      const s = parseSentence(sentence);
      if (s?.kind === "move") return { object: s.object, container: s.container };
      if (s?.kind === "located" && !rooms.has(s.place)) return { object: s.subject, container: s.place };
      return undefined;
    },
    names(sentence) {
      const s = parseSentence(sentence);
      if (s?.kind === "move") return { objects: [s.object], containers: [s.container] };
      if (s?.kind === "located") return rooms.has(s.place) ? { objects: [], containers: [s.subject] } : { objects: [s.subject], containers: [s.place] };
      return { objects: [], containers: [] };
    },
  };
}

function roomsOf(context: SocializedContext, state?: TomiState): Set<string> {
  const rooms = new Set(state?.layout.rooms ?? []);
  for (const step of context.socialized_context) {
    for (const sentence of sentencesOf(step.state)) {
      const s = parseSentence(sentence);
      if (s?.kind === "enter" || s?.kind === "exit" || s?.kind === "agents_at") rooms.add(s.room);
    }
  }
  return rooms;
}

export const tomiFacts: FactSource = {
  forEpisode(context, initialState) {
    const state = initialState as TomiState | undefined;
    const vocabulary = LocationFacts.of(
      grammar(roomsOf(context, state)),
      context.socialized_context.map((s) => s.state),
      state ? { objects: state.layout.objects, containers: state.layout.containers } : undefined,
    );
    const initialTruths: Fact[] = state ? [...state.objectContainer].map(([o, c]) => locationFact(o, c)) : [];
    return { vocabulary, initialTruths };
  },
  reads: (sentence) => parseSentence(sentence) !== undefined,
};

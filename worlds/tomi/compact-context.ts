/**
 * The compact socialized context: who saw where each object was. The world model's socialized
 * context (simulation.ts) read as location facts: for the story's own view, each agent's, and
 * each pair of agents' (what the two perceived together), where the view first saw each object
 * and where it saw it last. Every belief question of a ToMi story is one of these lines: reality
 * is the story's `now`, memory its `first`, first order the agent's `now`, second order the pair's
 * `now` (an agent knows what another saw only where they were together). A small policy reads
 * this in simulation mode instead of the timestep-by-timestep context (question-prompt.ts): the
 * perspective-taking is the world model's; reading the question, finding its line and writing
 * the place is the policy's.
 *
 *   - story spinach first:
 *   green_crate
 *   - story spinach now:
 *   green_treasure_chest
 *   - Ella spinach first:
 *   green_crate
 *   ...
 *   - Ella and Avery spinach now:
 *   green_crate
 *
 * Each place follows its view, object and `first`/`now`: the words a question names are the words
 * just before its answer. They are written as they tokenize in the question and in the answer: a
 * name after a space (" Ella", as in "Where will Ella look"), a place at the start of a line (as
 * the answer starts); a word tokenizes differently after a space and at a line's start, and a
 * small policy would have to learn each word's two forms as one. A view that saw nothing of an
 * object has no line.
 */
import type { SocializedContext } from "../core/socialized-context.js";
import { Perspectives } from "./simulation.js";

export function compactTomiContext(ctx: SocializedContext): string {
  const views = Perspectives.fromContext(ctx);
  const names = ctx.agents_names;
  const titled: [string, readonly string[]][] = [["story", []]];
  for (const a of names) titled.push([a, [a]]);
  for (let i = 0; i < names.length; i++) for (let j = i + 1; j < names.length; j++) titled.push([`${names[i]} and ${names[j]}`, [names[i]!, names[j]!]]);
  const lines: string[] = [];
  for (const [title, path] of titled) {
    // Each object's first and latest place in this view, objects in the order the view first saw them.
    const places = new Map<string, { first: string; now: string }>();
    for (const [object, container] of views.facts(path)) {
      const seen = places.get(object);
      if (seen) seen.now = container;
      else places.set(object, { first: container, now: container });
    }
    for (const [object, { first, now }] of places) lines.push(`- ${title} ${object} first:`, first, `- ${title} ${object} now:`, now);
  }
  return lines.join("\n");
}

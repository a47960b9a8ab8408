/**
 * The compact socialized context: who saw where each object was. The world model's socialized
 * context (simulation.ts) read as location facts: where the story had each object first and has
 * it now, and where each agent, and each pair of agents (what the two perceived together, in both
 * orders), saw it last. Every belief question of a ToMi story is one of these lines: reality is
 * the story's `now`, memory its `first`, first order the agent's `now`, second order the pair's
 * `now` as the question names the two (an agent knows what another saw only where they were
 * together). A small policy reads this in simulation mode instead of the timestep-by-timestep
 * context (question-prompt.ts) and answers by citing a line: the perspective-taking is the world
 * model's; reading the question and citing its line is the policy's.
 *
 *   - story spinach first:
 *   green_crate
 *   - story spinach now:
 *   green_treasure_chest
 *   - Ella spinach now:
 *   green_crate
 *   ...
 *   - both Avery and Ella spinach now:
 *   green_crate
 *
 * Each place follows its view, object and `first`/`now`: the words a question names are the words
 * just before its answer. They are written as they tokenize in the question and in the answer: a
 * name after a space (" Ella", as in "Where will Ella look"), a place at the start of a line (as
 * the answer starts; worlds/core/compact-context.ts). A view that saw nothing of an object has no
 * line. No view's first place but the story's is listed: no question asks it, and a policy that
 * read it learned to answer a belief question with the place most lines hold (the object's
 * first). Pairs are listed in both orders because a citing reply follows its question's words
 * (under the action grammar, a pair named in the other order than the only line's would leave
 * the reply no line but an agent's own).
 */
import type { CompactContext, CompactLine } from "../core/compact-context.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { parseQuestion } from "./sentences.js";
import type { TomiQuestion } from "./sentence.js";
import { Perspectives } from "./simulation.js";

export function compactTomiContext(ctx: SocializedContext): CompactContext {
  const views = Perspectives.fromContext(ctx);
  const names = ctx.agents_names;
  const titled: [string, readonly string[]][] = [["story", []]];
  for (const a of names) titled.push([a, [a]]);
  // Each pair in both orders, so that a reply cites the pair as its question names it.
  for (const a of names) for (const b of names) if (a !== b) titled.push([`both ${a} and ${b}`, [a, b]]);
  const lines: CompactLine[] = [];
  for (const [title, path] of titled) {
    // Each object's first and latest place in this view, objects in the order the view first saw them.
    const places = new Map<string, { first: string; now: string }>();
    for (const [object, container] of views.facts(path)) {
      const seen = places.get(object);
      if (seen) seen.now = container;
      else places.set(object, { first: container, now: container });
    }
    for (const [object, { first, now }] of places) {
      // Only the story's first place is asked (memory); a view's first place would be a distractor.
      if (path.length === 0) lines.push({ title: `${title} ${object} first`, value: first });
      lines.push({ title: `${title} ${object} now`, value: now });
    }
  }
  const byTitle = new Map(lines.map((l) => [l.title, l]));
  return {
    heading: "Where each object was first and is now, and where each one and each two together saw it last:",
    lines,
    answerLine(question) {
      const q = parseQuestion(question);
      return q && byTitle.get(answerTitle(q));
    },
  };
}

/** The title of the line a question is answered from. */
function answerTitle(q: TomiQuestion): string {
  switch (q.kind) {
    case "reality":
      return `story ${q.object} now`;
    case "memory":
      return `story ${q.object} first`;
    case "first_order":
      return `${q.agent} ${q.object} now`;
    case "second_order":
      return `both ${q.agent} and ${q.other} ${q.object} now`;
  }
}

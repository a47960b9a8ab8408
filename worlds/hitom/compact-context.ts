/**
 * The compact socialized context of a Hi-ToM story: where the object a question asks about really
 * is, where each agent thinks it is, and where each chain of agents thinks it ("Hannah William
 * carrot": where Hannah thinks William thinks the carrot is), to the benchmark's depth of four, as
 * the world model reads them from the characters' observations (simulation.ts). A small policy
 * reads this in simulation mode and answers by citing the line its question names
 * (worlds/core/compact-context.ts): the perspective-taking, lies and trust included, is the world
 * model's; reading the question and citing its line is the policy's.
 *
 *   - story carrot:
 *   green_drawer
 *   - Hannah carrot:
 *   blue_pantry
 *   - Hannah William carrot:
 *   green_bathtub
 *   ...
 *
 * Which lines. Chains of one and two agents are listed in every order: a claim makes them differ
 * ("Hannah William", where the speaker Hannah thinks her hearer William now believes her, is not
 * "William Hannah"). From three agents on, a chain's belief is what all of them saw together, the
 * same in any order (simulation.ts reads claims into chains of one and two only), so each set is
 * one line written in the story's order of the agents, and its other orders are aliases a reply may
 * cite (a question names the agents in any order; 24 orders of each set of four would not fit).
 * Only the object the question asks about is listed (41 lines for five agents): the whole story's
 * three objects would not fit a 1,024-token window.
 */
import type { CompactContext, CompactLine } from "../core/compact-context.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { parseQuestion } from "./sentences.js";
import { mindsOf } from "./simulation.js";
import { orderedChains } from "./world.js";
import { allChains } from "../core/rooms.js";

export function compactHitomContext(ctx: SocializedContext, question?: string): CompactContext {
  const minds = mindsOf(ctx);
  const names = ctx.agents_names;
  const asked = question === undefined ? undefined : parseQuestion(question)?.object;
  const objects = asked === undefined ? minds.objects() : [asked];
  // Hi-ToM asks orders 0 to 4.
  const chains = [[], ...ordered(names, 1), ...ordered(names, 2), ...sets(names, 3), ...sets(names, 4)];
  const lines: CompactLine[] = [];
  for (const object of objects) {
    for (const chain of chains) {
      const value = minds.belief(chain, object);
      if (value === undefined) continue;
      const aliases = chain.length > 2 ? permutations(chain).slice(1).map((c) => titleOf(c, object)) : [];
      lines.push({ title: titleOf(chain, object), value, ...(aliases.length ? { aliases } : {}) });
    }
  }
  const byTitle = new Map<string, CompactLine>();
  for (const line of lines) for (const title of [line.title, ...(line.aliases ?? [])]) byTitle.set(title, line);
  return {
    heading: "Where the object really is, where each one thinks it is, and where each one thinks the next thinks it is:",
    lines,
    answerLine(text) {
      const q = parseQuestion(text);
      if (!q) return undefined;
      const title = titleOf(q.agents, q.object);
      const line = byTitle.get(title);
      return line && { title, value: line.value };
    },
  };
}

/** A chain's title, as its question names it: the agents outermost first, then the object ("story" for where it really is). */
function titleOf(chain: readonly string[], object: string): string {
  return `${chain.length ? chain.join(" ") : "story"} ${object}`;
}

/** Chains of k distinct agents in every order, each set's orders together. */
function ordered(names: readonly string[], k: number): string[][] {
  return sets(names, k).flatMap(permutations);
}

/** Sets of k agents, each in the story's order (itertools.combinations). */
function sets(names: readonly string[], k: number): string[][] {
  return orderedChains(names, k).filter((c) => c.length === k);
}

/** Every order of a chain, the chain itself first. */
function permutations(chain: readonly string[]): string[][] {
  return allChains(chain, chain.length).filter((c) => c.length === chain.length);
}

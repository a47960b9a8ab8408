/**
 * ToMi's written context (worlds/core/written-context.ts): the trace of the asked object a policy
 * writes in simulation mode with `context=self`. One line per place the object was put or moved
 * to and per change of who saw it there together (agents entering or leaving its room), the place
 * first and then who perceived it (the agents in the room), in the order the story introduces them:
 *
 *   green_crate Ella Avery
 *   green_treasure_chest Avery
 *   - Ella spinach now:
 *   green_crate
 *
 * Every question is read off these lines: reality is the last line's place, memory the first's,
 * an agent's belief the last line that names the agent, "A thinks B thinks" the last line that
 * names both (they saw it together). The answer line is the compact context's (compact-context.ts),
 * so that both modes end in the same citation. A place starts a line and a name follows a space, as
 * they tokenize in the story and the answer (compact-context.ts's notes).
 *
 * Latest first (`context=self-latest`) the lines are the same, reversed, and the heading says so:
 * reality is then the first line's place, memory the last's, an agent's belief the first line that
 * names the agent, "A thinks B thinks" the first line that names both.
 */
import type { SocializedContext } from "../core/socialized-context.js";
import { wordChoice, type TraceOrder, type WrittenContext } from "../core/written-context.js";
import { compactTomiContext } from "./compact-context.js";
import { parseQuestion } from "./sentences.js";
import { Perspectives } from "./simulation.js";

export function writtenTomiContext(ctx: SocializedContext, question: string, order: TraceOrder = "story"): WrittenContext {
  const q = parseQuestion(question);
  const views = Perspectives.fromContext(ctx);
  const names = ctx.agents_names;
  const object = q?.object ?? "object";
  // Merged in the story's order either way, so that both orders hold the very same lines.
  const lines = q ? merged(views.sightings(object, names)).map(({ place, by }) => [place, ...by].join(" ")) : [];
  const trace = order === "latest" ? lines.reverse() : lines;
  const answer = q ? compactTomiContext(ctx).answerLine(question) : undefined;
  const heading = `Who saw the ${object} where, ${order === "latest" ? "latest first, " : ""}then the answer:`;
  return { heading, trace, answer, pattern: replyPattern(views, names, object) };
}

/**
 * The sightings, each kept only where it says more than its neighbours: of two lines in a row with
 * the same place where one's agents are among the other's, the larger is kept. No question's answer
 * changes (the line dropped names no one the kept one does not, at the same place), and a story's
 * trace is a line per place and per change of who was there together, not per sentence: the world
 * model restates a place at every entry into its room and every timestep that repeats the state.
 */
function merged(sightings: readonly { place: string; by: string[] }[]): { place: string; by: string[] }[] {
  const kept: { place: string; by: string[] }[] = [];
  for (const s of sightings) {
    const last = kept.at(-1);
    if (last && last.place === s.place && s.by.every((a) => last.by.includes(a))) continue;
    let k = kept.length;
    while (k > 0 && kept[k - 1]!.place === s.place && kept[k - 1]!.by.every((a) => s.by.includes(a))) k--;
    kept.splice(k, kept.length - k, s);
  }
  return kept;
}

/**
 * The reply's grammar: trace lines, each a place the story names and then some of its agents, then
 * an answer line titled as a question about the object is (a pair of two different agents), valued
 * with one of the story's containers. The number of trace lines is left to the token budget (the
 * decoder finishes the reply in time): a count bound on the lines (one per timestep), nested over
 * the bound on names, multiplied the automaton's states by the story's length.
 */
function replyPattern(views: Perspectives, names: readonly string[], object: string): string {
  const facts = views.facts([]);
  const places = new Set(facts.map((f) => f[1]));
  // A container is a place something is in that is not itself a place (a room holds containers).
  const containers = [...new Set(facts.filter((f) => !places.has(f[0])).map((f) => f[1]))];
  const place = wordChoice(places.size ? [...places] : ["none"]);
  const name = wordChoice(names.length ? names : ["nobody"]);
  const obj = wordChoice([object]);
  // A pair is two different agents: `both Jacob and Jacob` names no view.
  const pairs = names.flatMap((a) => names.filter((b) => b !== a).map((b) => `${a} and ${b}`));
  const both = pairs.length ? `|both ${wordChoice(pairs)} ${obj} now` : "";
  const title = `(?:story ${obj} (?:first|now)|${name} ${obj} now${both})`;
  return `^(?:${place}(?: ${name}){0,${Math.max(1, names.length)}}\\n)*- ${title}:\\n${wordChoice(containers.length ? containers : [...places])}$`;
}

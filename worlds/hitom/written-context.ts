/**
 * Hi-ToM's written context (worlds/core/written-context.ts): the trace of the asked object a
 * policy writes in simulation mode with `context=self`, in the story's order. Three kinds of line:
 *
 *   blue_suitcase Logan Jackson Jack Emily Isabella    seen: its place, then who saw it there together
 *   blue_suitcase Jack Emily Isabella                  an exit: its place, then who is still with it
 *   blue_suitcase Logan Jack from Emily not Isabella   a claim: the place said, who believed it, the speaker, who did not
 *   - Isabella Logan peas:
 *   green_bottle
 *
 * A sighting line is written where a sentence says where the object is (the story's, a move, an
 * entry into its room), naming the agents who perceived it; an exit line where agents who are with
 * the object leave its room (exits are announced to all), naming who stays; a claim line where an
 * agent tells others where it is, publicly or privately. Names are in the order the story
 * introduces them. A line that repeats the one before it is dropped, and so is a line followed by
 * one at the same place that names everyone it does and more (an entry into the room).
 *
 * Each question is answered by the last line that gives its chain of agents a view (the place
 * first on every line, so the answer is the place of that line):
 *   - order 0 ("really"): the last sighting or exit line (no `from`);
 *   - a sighting or exit line gives a view to every chain of its names (they saw it together);
 *   - a claim line "P B.. from S not D.." gives P to each believer B, to "B thinks S" (B thinks the
 *     speaker believes what it said), and to "S thinks H" for every hearer H, believer or not (the
 *     speaker thinks it is believed); nothing else (the speaker's own belief stays; see rules.ts).
 * So an agent's belief is the last line naming it before any `from`; "A thinks B thinks" the last
 * sighting or exit line naming both, or claim line where A believed B or A told B; orders 3 and 4
 * the last sighting or exit line naming them all.
 *
 * Each line is derivable from the story and the lines before it. Who believes a claim too: a
 * hearer trusts the speaker when no sighting line names the hearer (it never saw the object), or a
 * sighting or exit line after the last one naming the hearer names the speaker (the speaker was
 * with the object after the hearer left it: the trust rule of world.ts). Exit lines are written
 * for this: without them the trace would not say who left the object's room first. A claim made in
 * the object's room (a story file may have one; the generator and the dev file talk in the
 * waiting_room) is read by the same rule: its hearers are there too (a private claim's listener is
 * in the speaker's room, story.ts), so on the last line, and doubt it, as world.ts has it.
 *
 * Latest first (`context=self-latest`) the lines are the same, reversed: every rule reads the first
 * line instead of the last. The answer line is the compact context's (compact-context.ts), so both
 * modes end in the same citation.
 */
import type { SocializedContext } from "../core/socialized-context.js";
import { wordChoice, type TraceOrder, type WrittenContext } from "../core/written-context.js";
import { compactHitomContext } from "./compact-context.js";
import { parseQuestion } from "./sentences.js";
import { mindsOf, type HitomHistoryEvent } from "./simulation.js";

/** A line of the trace: seen (and exit) lines name who sees the place; claim lines add the speaker and who did not believe it. */
interface TraceLine {
  readonly place: string;
  readonly by: readonly string[];
  readonly claim?: { readonly speaker: string; readonly doubters: readonly string[] };
}

export function writtenHitomContext(ctx: SocializedContext, question: string, order: TraceOrder = "story"): WrittenContext {
  const q = parseQuestion(question);
  const minds = mindsOf(ctx);
  const names = ctx.agents_names;
  const object = q?.object ?? "object";
  const lines = q ? merged(traceLines(minds.history(object, names))).map(render) : [];
  const trace = order === "latest" ? lines.reverse() : lines;
  const answer = q ? compactHitomContext(ctx, question).answerLine(question) : undefined;
  const heading = `Who saw the ${object} where and who was told where, ${order === "latest" ? "latest first, " : ""}then the answer:`;
  return { heading, trace, answer, pattern: replyPattern(minds.containers(), names, object) };
}

/** The history as lines: exits become lines only where someone who was with the object leaves. */
function traceLines(history: readonly HitomHistoryEvent[]): TraceLine[] {
  const out: TraceLine[] = [];
  let last: { place: string; by: readonly string[] } | undefined;
  for (const e of history) {
    if (e.kind === "seen") out.push((last = { place: e.place, by: e.by }));
    else if (e.kind === "left") {
      if (!last || !last.by.some((a) => e.agents.includes(a))) continue;
      out.push((last = { place: last.place, by: last.by.filter((a) => !e.agents.includes(a)) }));
    } else out.push({ place: e.place, by: e.believers, claim: { speaker: e.speaker, doubters: e.hearers.filter((a) => !e.believers.includes(a)) } });
  }
  return out;
}

/**
 * Lines kept where they say more than their neighbours: of sighting and exit lines in a row at one
 * place, a line that repeats the one before it (an entry's sight of the room, then the story saying
 * the same), and a line followed by one naming everyone it names and more (an agent entering), are
 * dropped. No answer changes, nor any trust: every agent on a dropped line is on a later kept one,
 * with the same place. A line naming fewer than the one before it stays: that is an exit's news.
 */
function merged(lines: readonly TraceLine[]): TraceLine[] {
  const kept: TraceLine[] = [];
  const sameSighting = (a: TraceLine | undefined, b: TraceLine) => a !== undefined && !a.claim && !b.claim && a.place === b.place;
  for (const l of lines) {
    const prev = kept.at(-1);
    if (sameSighting(prev, l) && prev!.by.length === l.by.length && prev!.by.every((a) => l.by.includes(a))) continue;
    while (sameSighting(kept.at(-1), l) && kept.at(-1)!.by.every((a) => l.by.includes(a))) kept.pop();
    kept.push(l);
  }
  return kept;
}

function render(l: TraceLine): string {
  const seen = [l.place, ...l.by].join(" ");
  if (!l.claim) return seen;
  return `${seen} from ${l.claim.speaker}${l.claim.doubters.length ? ` not ${l.claim.doubters.join(" ")}` : ""}`;
}

/**
 * The reply's grammar: trace lines, each one of the story's containers and then some of its agents,
 * a claim line then `from` an agent and maybe `not` and agents (at least one hearer named, believer
 * or doubter); then an answer line titled as a
 * question about the object is ("story carrot", or a chain of one to four different agents),
 * valued with one of the story's containers. The number of lines is left to the token budget, as
 * ToMi's (worlds/tomi/written-context.ts says why).
 */
function replyPattern(containers: readonly string[], names: readonly string[], object: string): string {
  const place = wordChoice(containers.length ? containers : ["none"]);
  const name = wordChoice(names.length ? names : ["nobody"]);
  const most = Math.max(1, names.length);
  const agents = (least: number) => `(?: ${name}){${least},${most}}`;
  // A claim line names a hearer, believing or not: the world writes no claim nobody heard.
  const heard = `${agents(1)} from ${name}(?: not${agents(1)})?| from ${name} not${agents(1)}`;
  const line = `${place}(?:${agents(0)}|${heard})\\n`;
  const title = `(?:story|${wordChoice(chains(names.length ? names : ["nobody"]).map((c) => c.join(" ")))}) ${wordChoice([object])}`;
  return `^(?:${line})*- ${title}:\\n${place}$`;
}

/** Chains of one to four different agents, in every order (a question names any). */
function chains(names: readonly string[]): string[][] {
  const out: string[][] = [];
  const grow = (path: string[]) => {
    if (path.length) out.push(path);
    if (path.length < 4) for (const n of names) if (!path.includes(n)) grow([...path, n]);
  };
  grow([]);
  return out;
}

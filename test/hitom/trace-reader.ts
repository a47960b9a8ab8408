/**
 * A reader of Hi-ToM's written traces (worlds/hitom/written-context.ts) by the documented rules,
 * apart from the world model: the tests check that its reading of the world model's trace is the
 * label, and that each claim line's believers are the ones the trust rule reads off the lines before.
 */
import type { TraceOrder } from "../../worlds/core/written-context.js";
import { parseQuestion } from "../../worlds/hitom/sentences.js";

/** A trace line read back: its place, who sees it there (believers, on a claim line), and a claim's speaker and doubters. */
export interface ReadLine {
  readonly place: string;
  readonly by: readonly string[];
  readonly claim?: { readonly speaker: string; readonly doubters: readonly string[] };
}

export function readLine(line: string): ReadLine {
  const [place, ...words] = line.split(" ");
  const from = words.indexOf("from");
  if (from < 0) return { place: place!, by: words };
  const not = words.indexOf("not");
  return { place: place!, by: words.slice(0, from), claim: { speaker: words[from + 1]!, doubters: not < 0 ? [] : words.slice(not + 1) } };
}

/** Whether a line gives the chain (the question's agents, outermost first) a view of the object. */
export function givesView(l: ReadLine, chain: readonly string[]): boolean {
  if (!l.claim) return chain.every((a) => l.by.includes(a));
  const { speaker, doubters } = l.claim;
  if (chain.length === 1) return l.by.includes(chain[0]!);
  if (chain.length !== 2) return false;
  const [a, b] = chain as [string, string];
  // A believed B; or A told B, who heard it (believing or not).
  return (l.by.includes(a) && b === speaker) || (a === speaker && (l.by.includes(b) || doubters.includes(b)));
}

/**
 * The answer as a reader of the trace finds it: the place of the last line (latest first: the
 * first) that gives the question's chain a view; "really": of the last sighting line.
 */
export function readHitomTrace(trace: readonly string[], question: string, order: TraceOrder = "story"): string | undefined {
  const q = parseQuestion(question);
  if (!q) throw new Error(`readHitomTrace: no rule reads "${question}"`);
  const rows = trace.map(readLine);
  const fits = (l: ReadLine) => (q.agents.length === 0 ? !l.claim : givesView(l, q.agents));
  return (order === "latest" ? rows.find(fits) : rows.findLast(fits))?.place;
}

/**
 * The believers of each claim line as the trust rule reads them off the lines before it (story
 * order): a hearer trusts the speaker when no sighting line names the hearer, or a sighting line
 * after the last one naming the hearer names the speaker. Undefined where every claim line agrees.
 */
export function trustDisagreement(trace: readonly string[]): string | undefined {
  const rows = trace.map(readLine);
  for (let i = 0; i < rows.length; i++) {
    const c = rows[i]!.claim;
    if (!c) continue;
    const sightings = rows.slice(0, i).filter((l) => !l.claim);
    const trusts = (h: string) => {
      const last = sightings.findLastIndex((l) => l.by.includes(h));
      return last < 0 || sightings.slice(last + 1).some((l) => l.by.includes(c.speaker));
    };
    for (const h of [...rows[i]!.by, ...c.doubters]) if (trusts(h) !== rows[i]!.by.includes(h)) return `line ${i + 1} "${trace[i]}": ${h}`;
  }
  return undefined;
}

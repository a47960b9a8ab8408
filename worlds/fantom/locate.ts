/**
 * Which lines of a conversation carry a set's fact. In generated conversations the fact
 * question parses (facts.ts) and the lines are exactly those that name one of its kind's values.
 * In the official data the fact is free text, so the lines are found by word overlap with what is
 * known of it (the fact question, and its answer where the caller may use it), preferring lines
 * said while someone was away (FANToM's facts are the ones some character missed), plus later
 * lines that retell it. That second way is a heuristic and reports say so.
 */
import { factStatement, parseFactQuestion, valueIn, type Fact } from "./facts.js";
import type { Utterance } from "./conversation.js";

export interface Located {
  /** Utterance indices that convey the fact, in order. */
  readonly lines: readonly number[];
  readonly method: "language" | "overlap";
  /** The fact, when the language parses it. */
  readonly fact?: Fact;
  /** The fact as a sentence: the world's statement, or the best line's text. */
  readonly statement: string;
}

export function locateByLanguage(utts: readonly Utterance[], factQuestion: string): Located | undefined {
  const parsed = parseFactQuestion(factQuestion);
  if (!parsed) return undefined;
  const lines: number[] = [];
  let value: string | undefined;
  utts.forEach((u, i) => {
    const v = valueIn(parsed.kind, u.text);
    if (v === undefined) return;
    lines.push(i);
    value ??= v;
  });
  if (value === undefined) return undefined;
  const fact = { kind: parsed.kind, owner: parsed.owner, value };
  return { lines, method: "language", fact, statement: factStatement(fact) };
}

const STOP = new Set(
  (
    "a an the and or but if then so of to in on at for with about from by as is are was were be been being do does did " +
    "have has had i you he she it we they me him her us them my your his its our their this that these those what which " +
    "who whom whose when where why how not no yes just really very also too can could would should will shall may might " +
    "must there here all any some more most much many such than into out up down over again oh well like know think " +
    "believe said say says tell told question answer information precise correct characters character list"
  ).split(" "),
);

export function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    if (w.length > 2 && !STOP.has(w)) out.add(stem(w));
  }
  return out;
}

/** A crude stem, enough to match "adopted" with "adopt" and "parrots" with "parrot". */
function stem(w: string): string {
  if (w.length <= 4) return w;
  return w.replace(/(ies|ied)$/, "y").replace(/(ing|ed|es|s)$/, "");
}

/**
 * The lines that best match `query`: the best-scoring line said while someone was away (or any
 * line if none was), and any later line that scores nearly as well (a retelling).
 */
export function locateByOverlap(utts: readonly Utterance[], hearers: readonly (readonly string[])[], characters: readonly string[], query: string): Located | undefined {
  const q = contentWords(query);
  if (q.size === 0) return undefined;
  const scores = utts.map((u) => {
    let s = 0;
    // The speaker counts: "What did Gina adopt?" is matched by what Gina says.
    for (const w of contentWords(`${u.speaker} ${u.text}`)) if (q.has(w)) s++;
    return s;
  });
  const missed = utts.map((_, i) => hearers[i]!.length < characters.length);
  const pick = (allowed: (i: number) => boolean) => {
    let best = -1;
    scores.forEach((s, i) => {
      if (allowed(i) && s > 0 && (best < 0 || s > scores[best]!)) best = i;
    });
    return best;
  };
  let best = pick((i) => missed[i]!);
  if (best < 0) best = pick(() => true);
  if (best < 0) return undefined;
  const bar = Math.max(2, Math.ceil(scores[best]! * 0.75));
  const lines = scores.flatMap((s, i) => (i === best || (i > best && s >= bar) ? [i] : []));
  return { lines, method: "overlap", statement: utts[best]!.text };
}

/**
 * A language as a tree: what the JSON-schema compiler, the regex parser and the choice lists
 * produce, and what the byte automaton is built from. Characters are code-point sets; `text` is a
 * string whose length is counted (in UTF-16 units, as JavaScript and zod count it), written either
 * as a JSON string (quoted, escaped as JSON.stringify escapes) or as raw UTF-8 text: raw text
 * either ends the language or is closed by a character its body never writes (a pattern's
 * bounded group, `(?=[^\n]{1,384}\n)...\n`, closed by its line break as a string by its quote).
 *
 * The constructors simplify as they build: an impossible part (`never`) makes a sequence
 * impossible and drops out of a choice, so a recursion cut at its depth limit leaves only the
 * alternatives that end.
 */
import type { CharSet } from "./charset.js";

export type Lang =
  | { readonly k: "chars"; readonly set: CharSet }
  | { readonly k: "literal"; readonly text: string }
  | { readonly k: "seq"; readonly items: readonly Lang[] }
  | { readonly k: "alt"; readonly items: readonly Lang[] }
  | { readonly k: "rep"; readonly item: Lang; readonly min: number; readonly max: number; readonly sep?: Lang }
  | { readonly k: "text"; readonly body: Lang; readonly min: number; readonly max: number; readonly quoted: boolean; readonly pointer: string; readonly close?: number }
  | { readonly k: "object"; readonly members: readonly Member[]; readonly ws: Lang; readonly rest?: { readonly key: Lang; readonly value: Lang } }
  /** A language already compiled to a minimal byte DFA (numbers: their digit lanes merged). */
  | { readonly k: "dfa"; readonly dfa: ByteDfa }
  | { readonly k: "never" };

/** A DFA over bytes: trans[s * 256 + b] (-1: none), from state `start`. */
export interface ByteDfa {
  readonly size: number;
  readonly start: number;
  readonly trans: Int32Array;
  readonly accepting: Uint8Array;
}

/** A property of an object: its key as written (quoted, escaped) and its value. */
export interface Member {
  readonly key: string;
  readonly value: Lang;
  readonly required: boolean;
}

export const NEVER: Lang = { k: "never" };
export const EMPTY: Lang = { k: "seq", items: [] };

export const chars = (set: CharSet): Lang => (set.length === 0 ? NEVER : { k: "chars", set });

/** Text written as it is (outside strings: JSON punctuation, keys, literal values). */
export const literal = (text: string): Lang => (text === "" ? EMPTY : { k: "literal", text });

export function seq(...items: Lang[]): Lang {
  const flat: Lang[] = [];
  for (const it of items) {
    if (it.k === "never") return NEVER;
    if (it.k === "seq") flat.push(...it.items);
    else flat.push(it);
  }
  return flat.length === 1 ? flat[0]! : { k: "seq", items: flat };
}

export function alt(...items: Lang[]): Lang {
  const live: Lang[] = [];
  for (const it of items) {
    if (it.k === "never") continue;
    if (it.k === "alt") live.push(...it.items);
    else live.push(it);
  }
  if (live.length === 0) return NEVER;
  return live.length === 1 ? live[0]! : { k: "alt", items: live };
}

/** item{min,max}; max may be Infinity. */
export function rep(item: Lang, min: number, max: number): Lang {
  if (max < min) return NEVER;
  if (max === 0) return EMPTY;
  if (item.k === "never") return min === 0 ? EMPTY : NEVER;
  if (min === 1 && max === 1) return item;
  return { k: "rep", item, min, max };
}

export const opt = (item: Lang): Lang => rep(item, 0, 1);

/** item (sep item)*, min..max items: an unbounded list compiles its item once. */
export function list(item: Lang, sep: Lang, min: number, max: number): Lang {
  if (max < min) return NEVER;
  if (max === 0) return EMPTY;
  if (item.k === "never") return min === 0 ? EMPTY : NEVER;
  if (min === 1 && max === 1) return item;
  return { k: "rep", item, min, max, sep };
}

/**
 * An object, its members in the order given (optional ones may be left out), then, with `rest`,
 * any number of further key-value pairs (a record's entries); `ws` between its tokens.
 */
export function object(members: Member[], ws: Lang, rest?: { key: Lang; value: Lang }): Lang {
  const live = members.filter((m) => m.value.k !== "never" || m.required);
  if (live.some((m) => m.value.k === "never")) return NEVER;
  return { k: "object", members: live, ws, ...(rest && rest.key.k !== "never" && rest.value.k !== "never" ? { rest } : {}) };
}

/**
 * A counted string: `body` (characters only) with min..max UTF-16 units (max may be Infinity).
 * Raw text (not quoted) with `close` (an ASCII character the body never writes) ends on that
 * character, which is part of the text as a string's closing quote is; without it, raw text must
 * end the language.
 */
export function text(body: Lang, min: number, max: number, quoted: boolean, pointer: string, close?: number): Lang {
  if (max < min || body.k === "never") return NEVER;
  return { k: "text", body, min, max, quoted, pointer, ...(close !== undefined && !quoted ? { close } : {}) };
}

/** Whether a language holds a counted string anywhere. */
export function hasText(l: Lang): boolean {
  switch (l.k) {
    case "text":
      return true;
    case "seq":
    case "alt":
      return l.items.some(hasText);
    case "rep":
      return hasText(l.item) || (l.sep !== undefined && hasText(l.sep));
    case "object":
      return l.members.some((m) => hasText(m.value)) || (l.rest !== undefined && (hasText(l.rest.key) || hasText(l.rest.value)));
    default:
      return false;
  }
}

/**
 * Sets of Unicode code points as sorted, disjoint, non-adjacent ranges, and the byte sequences
 * that write them: UTF-8 (raw text) or JSON's canonical string encoding (what JSON.stringify
 * writes: raw UTF-8 except `"`, `\` and the control characters, which are escaped).
 *
 * A character set becomes a union of byte-range sequences (each position one byte range), the
 * form the byte automaton reads; surrogates (U+D800-U+DFFF) are not characters and are never
 * written.
 */

/** Inclusive code point range. */
export type CpRange = readonly [lo: number, hi: number];
export type CharSet = readonly CpRange[];

export const MAX_CP = 0x10ffff;
export const ANY: CharSet = [[0, MAX_CP]];

export function charSet(ranges: Iterable<CpRange>): CharSet {
  const sorted = [...ranges].filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export const single = (cp: number): CharSet => [[cp, cp]];
export const union = (...sets: CharSet[]): CharSet => charSet(sets.flat());

export function complement(set: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

export const minus = (a: CharSet, b: CharSet): CharSet => intersect(a, complement(b));

export function intersect(a: CharSet, b: CharSet): CharSet {
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]![0], b[j]![0]);
    const hi = Math.min(a[i]![1], b[j]![1]);
    if (lo <= hi) out.push([lo, hi]);
    if (a[i]![1] < b[j]![1]) i++;
    else j++;
  }
  return out;
}

export const isEmpty = (set: CharSet): boolean => set.length === 0;

/** One byte range per position: the bytes of a character (or of several, for a literal). */
export type ByteSeq = readonly CpRange[];

/** A way to write characters as bytes: each character is one or more byte sequences. */
export type Encoding = "utf8" | "json";

/** UTF-16 code units of a code point: how JavaScript (and zod's min/max) measure a string's length. */
export const utf16Units = (cp: number): number => (cp > 0xffff ? 2 : 1);

/**
 * The byte sequences that write the characters of `set`, each with the number of UTF-16 units
 * its character counts for. Sequences are grouped so that one sequence never mixes characters of
 * different lengths.
 */
export function encodeSet(set: CharSet, encoding: Encoding): { seq: ByteSeq; units: number }[] {
  const out: { seq: ByteSeq; units: number }[] = [];
  let rest = minus(set, [[0xd800, 0xdfff]]);
  if (encoding === "json") {
    for (const [lo, hi] of intersect(rest, [[0, 0x1f], [0x22, 0x22], [0x5c, 0x5c]])) {
      for (let cp = lo; cp <= hi; cp++) out.push({ seq: bytesOf(jsonEscape(cp)), units: 1 });
    }
    rest = minus(rest, [[0, 0x1f], [0x22, 0x22], [0x5c, 0x5c]]);
  }
  for (const [lo, hi] of rest) for (const seq of utf8Sequences(lo, hi)) out.push({ seq, units: seq.length === 4 ? 2 : 1 });
  return out;
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 0x22: '\\"', 0x5c: "\\\\", 0x08: "\\b", 0x0c: "\\f", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t" };

/** JSON.stringify's escape of a character it escapes. */
function jsonEscape(cp: number): string {
  return SHORT_ESCAPES[cp] ?? `\\u${cp.toString(16).padStart(4, "0")}`;
}

function bytesOf(ascii: string): ByteSeq {
  return Array.from(ascii, (ch) => [ch.charCodeAt(0), ch.charCodeAt(0)] as const);
}

/** The UTF-8 bytes of a string, as a sequence of single-byte ranges. */
export function literalBytes(text: string): ByteSeq {
  return Array.from(UTF8.encode(text), (b) => [b, b] as const);
}

const UTF8 = new TextEncoder();

const UTF8_LIMITS = [0x7f, 0x7ff, 0xffff, MAX_CP];

/**
 * The code points lo..hi (no surrogates) as UTF-8 byte-range sequences: the range is split at
 * encoded-length boundaries, then wherever a continuation byte would not span its full range, so
 * that every piece is a product of byte ranges (the classic construction of RE2 and Rust's regex).
 */
export function utf8Sequences(lo: number, hi: number): ByteSeq[] {
  const out: ByteSeq[] = [];
  const split = (a: number, b: number): void => {
    if (a > b) return;
    for (const limit of UTF8_LIMITS) {
      if (a <= limit && b > limit) {
        split(a, limit);
        split(limit + 1, b);
        return;
      }
    }
    const n = utf8Length(a);
    for (let i = 1; i < n; i++) {
      const m = (1 << (6 * i)) - 1;
      if ((a & ~m) !== (b & ~m)) {
        if ((a & m) !== 0) {
          split(a, a | m);
          split((a | m) + 1, b);
          return;
        }
        if ((b & m) !== m) {
          split(a, (b & ~m) - 1);
          split(b & ~m, b);
          return;
        }
      }
    }
    const ea = utf8Encode(a);
    const eb = utf8Encode(b);
    out.push(ea.map((x, i) => [x, eb[i]!] as const));
  };
  split(lo, hi);
  return out;
}

function utf8Length(cp: number): number {
  return cp <= 0x7f ? 1 : cp <= 0x7ff ? 2 : cp <= 0xffff ? 3 : 4;
}

function utf8Encode(cp: number): number[] {
  if (cp <= 0x7f) return [cp];
  if (cp <= 0x7ff) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp <= 0xffff) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

/**
 * A regular expression for "text that does not contain WORD", written without lookaheads, so a
 * schema-constrained decoder (which compiles regexes and JSON Schema `pattern`s to automata) can
 * enforce it token by token. It is the automaton that matches WORD letter by letter (its state is
 * how much of WORD the text ends with), written as a regex; it needs WORD's first letter to occur
 * nowhere else in WORD, true of every closing tag `</name>`.
 */

function esc(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c;
}

export interface AvoidingPatterns {
  /** Any text without WORD. */
  readonly any: string;
  /** Any text without WORD that starts with a character other than whitespace. */
  readonly startsWithText: string;
}

export function avoiding(word: string): AvoidingPatterns {
  const first = word[0];
  if (first === undefined || word.length < 2) throw new Error("avoiding: the word needs two characters or more");
  if (word.indexOf(first, 1) >= 0) throw new Error(`avoiding: "${word}" repeats its first character`);
  const f = esc(first);
  // After the first letter, i letters further into WORD (prefix = word[1..i]):
  const prefixes = Array.from({ length: word.length - 1 }, (_, i) => [...word.slice(1, 1 + i)].map(esc).join(""));
  // ... back to "just read the first letter" on reading it again,
  const loop = prefixes.map((p) => `${p}${f}`).join("|");
  // ... back to the start on any letter that neither goes on with WORD nor starts it again,
  const exit = prefixes.map((p, i) => `${p}[^${esc(word[1 + i]!)}${f}]`).join("|");
  // ... or the text ends there (with part of WORD, never all of it).
  const tail = prefixes.filter((p) => p !== "").join("|");
  const any = `(?:[^${f}]|${f}(?:${loop})*(?:${exit}))*(?:${f}(?:${loop})*(?:${tail})?)?`;
  return {
    any,
    startsWithText: `(?:[^\\s${f}]${any}|${f}(?:${loop})*(?:(?:${exit})${any}|${tail})?)`,
  };
}

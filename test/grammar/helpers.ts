/** Seeded walks through the grammar automata, and small vocabularies, for the grammar tests. */
import { expect } from "vitest";
import { ByteAutomaton, DEAD } from "../../models/grammar/byte-automaton.js";
import { compileBytes, Vocabulary, type ConstraintSpec, type TokenAutomaton } from "../../models/grammar/index.js";
import { tokenAutomaton } from "../../models/grammar/token-automaton.js";
import { Rng } from "../../worlds/core/rng.js";

const UTF8 = new TextEncoder();

/**
 * A vocabulary of every byte plus `pieces` (JSON punctuation, words, and pieces that split
 * characters: "\xC3" alone, "\xA9\"", ...), then one end-of-sequence token.
 */
export function byteVocabulary(pieces: readonly (string | readonly number[])[]): { vocab: Vocabulary; bytes: Uint8Array[]; eos: number } {
  const bytes: Uint8Array[] = [];
  for (let b = 0; b < 256; b++) bytes.push(Uint8Array.of(b));
  for (const p of pieces) bytes.push(typeof p === "string" ? UTF8.encode(p) : Uint8Array.from(p));
  const eos = bytes.length;
  return { vocab: new Vocabulary({ tokens: [...bytes, null], eos: [eos] }), bytes, eos };
}

export const JSON_PIECES = ['{"', '":"', '","', '"}', '":', ',"', "type", "move", "enter", "room", "answer", '"},', "123", ".5", "-0", "00", " the", "é", "\u00e9\"", [0xc3], [0xa9, 0x22], [0xf0, 0x9f], [0x98, 0x80, 0x22], "\\n", "\\u00", "true", "null", "]}", "[\"", '":[', "e\"", "a\"}"];

/** A random text of the language: a walk of the byte automaton that ends at an accepting state (by its distance). */
export function randomText(a: ByteAutomaton, rng: Rng, budget = 200): Uint8Array {
  let s = a.start;
  const out: number[] = [];
  for (let left = budget; ; left--) {
    const moves: [number, number][] = [];
    for (let b = 0; b < 256; b++) {
      const t = a.step(s, b);
      if (t !== DEAD && a.distance[t]! <= left - 1) moves.push([b, t]);
    }
    const stop = a.accepts(s);
    if (moves.length === 0 || (stop && rng.next() < 0.15)) {
      if (!stop) throw new Error(`stuck at a state that does not accept: ${new TextDecoder().decode(Uint8Array.from(out))}`);
      return Uint8Array.from(out);
    }
    const [b, t] = moves[Math.floor(rng.next() * moves.length)]!;
    out.push(b);
    s = t;
  }
}

/** A random token sequence of the automaton within `budget` tokens (uniform over what is allowed); ends in an accepting state. */
export function randomTokens(a: TokenAutomaton, rng: Rng, budget: number): number[] {
  const tokens = new Int32Array(a.vocabSize + a.eos.length);
  const next = new Int32Array(a.vocabSize + a.eos.length);
  let s = a.start;
  const out: number[] = [];
  for (let k = 0; k < budget; k++) {
    const n = a.allowed(s, budget - k, tokens, next);
    if (n === 0) throw new Error("no token allowed");
    const i = Math.floor(rng.next() * n);
    if (next[i] === -1) return out;
    out.push(tokens[i]!);
    s = next[i]!;
  }
  if (!a.accepts(s)) throw new Error("the budget ran out outside an accepting state");
  return out;
}

export const textOf = (bytes: Uint8Array): string => new TextDecoder("utf-8", { fatal: true }).decode(bytes);

/** Allowed tokens by brute force: every token's bytes stepped through the byte automaton. */
export function bruteAllowed(bytes: ByteAutomaton, a: TokenAutomaton, tokens: readonly (Uint8Array | null)[], state: number, remaining: number): string[] {
  const out: string[] = [];
  tokens.forEach((tok, id) => {
    if (!tok || tok.length === 0 || a.eos.includes(id)) return;
    let s = state;
    for (const b of tok) {
      s = bytes.step(s, b);
      if (s === DEAD) return;
    }
    if (a.distance(s) <= remaining - 1) out.push(`${id}>${s}`);
  });
  if (bytes.accepts(state)) for (const e of a.eos) out.push(`${e}>-1`);
  return out.sort();
}

export function allowedOf(a: TokenAutomaton, state: number, remaining: number): string[] {
  const t = new Int32Array(a.vocabSize + 4);
  const n = new Int32Array(a.vocabSize + 4);
  const k = a.allowed(state, remaining, t, n);
  return Array.from({ length: k }, (_, i) => `${t[i]}>${n[i]}`).sort();
}

/** Walks of the token automaton (random budgets), each state's allowed tokens checked against brute force. */
export function check(spec: ConstraintSpec, vocab: Vocabulary, tokens: readonly (Uint8Array | null)[], walks: number, seed: string): void {
  const bytes = compileBytes(spec);
  const a = tokenAutomaton(bytes, vocab);
  const rng = Rng.seeded(seed);
  const scratchT = new Int32Array(a.vocabSize + 4);
  const scratchN = new Int32Array(a.vocabSize + 4);
  for (let w = 0; w < walks; w++) {
    const budget = a.minBudget + Math.floor(rng.next() * 12);
    let s = a.start;
    for (let k = 0; k < budget && s !== -1; k++) {
      const left = budget - k;
      expect(allowedOf(a, s, left), `state ${s}, ${left} left`).toEqual(bruteAllowed(bytes, a, tokens, s, left));
      const n = a.allowed(s, left, scratchT, scratchN);
      const i = Math.floor(rng.next() * n);
      s = scratchN[i]!;
    }
    if (s !== -1) expect(a.accepts(s)).toBe(true);
  }
}

/**
 * Constrained decoding's grammars: what a model may write, compiled for a tokenizer's vocabulary
 * into a token automaton whose allowed-token rows a sampler masks the logits with, so every
 * sample is a text of the grammar by construction.
 *
 *   spec (JSON Schema, json_object, regex, choice list, bounded text)
 *     -> language tree (json-schema.ts, regex.ts, numbers.ts)
 *     -> byte NFA (nfa.ts) -> byte DFA with counted strings (byte-automaton.ts)
 *     -> token automaton over the vocabulary (token-automaton.ts, vocabulary.ts)
 *
 * This folder depends on nothing of the project's agents, server or command line: a vocabulary
 * comes in as data (each token id's bytes).
 */
import { ByteAutomaton } from "./byte-automaton.js";
import { ANY, minus } from "./charset.js";
import { GrammarError } from "./errors.js";
import { freeObject, jsonSchemaLang, type Whitespace } from "./json-schema.js";
import { alt, chars, hasText, literal, rep, text, type Lang } from "./language.js";
import { Nfa } from "./nfa.js";
import { BMP, regexLang } from "./regex.js";
import { tokenAutomaton, type TokenAutomaton } from "./token-automaton.js";
import type { Vocabulary } from "./vocabulary.js";

export { ByteAutomaton } from "./byte-automaton.js";
export { GrammarError } from "./errors.js";
export type { Whitespace } from "./json-schema.js";
export { TokenAutomaton, type TokenAutomatonData } from "./token-automaton.js";
export { Vocabulary, type VocabularyInput } from "./vocabulary.js";

/** What to constrain to. JSON kinds write compact JSON; the others write raw text. */
export type ConstraintSpec =
  | { readonly type: "json_schema"; readonly schema: unknown; readonly whitespace?: Whitespace; readonly maxRefDepth?: number; readonly freeDepth?: number }
  /** Any JSON object (values nested at most `depth` deep, default 3). */
  | { readonly type: "json_object"; readonly whitespace?: Whitespace; readonly depth?: number }
  /** Text matching an ECMAScript pattern (JSON Schema's `pattern` rules: unanchored unless ^...$; `(?=C{m,n}L)G L` bounds G's length: regex.ts). */
  | { readonly type: "regex"; readonly pattern: string }
  /** Exactly one of these texts. */
  | { readonly type: "choice"; readonly choices: readonly string[] }
  /** Any text of minLength..maxLength UTF-16 units (singleLine: without line breaks). */
  | { readonly type: "text"; readonly minLength?: number; readonly maxLength?: number; readonly singleLine?: boolean };

export interface CompileLimits {
  /** NFA states at most (default 400,000). */
  readonly nfaStates?: number;
  /** Explicit DFA states at most (default 20,000). */
  readonly explicitStates?: number;
  /** Counted string states at most (default 1,000,000). */
  readonly countedStates?: number;
}

export function specLanguage(spec: ConstraintSpec): Lang {
  switch (spec.type) {
    case "json_schema":
      return jsonSchemaLang(spec.schema, spec);
    case "json_object":
      return freeObject(spec.depth ?? 3, spec.whitespace);
    case "regex": {
      // The whole pattern as one raw text (a body DFA, no counter to speak of), unless it has
      // bounded groups, which are counted texts themselves.
      const lang = regexLang(spec.pattern, "", BMP);
      return hasText(lang) ? lang : text(lang, 0, Infinity, false, "");
    }
    case "choice": {
      if (spec.choices.length === 0) throw new GrammarError("a choice list needs at least one choice");
      if (spec.choices.includes("")) throw new GrammarError("a choice may not be empty");
      return alt(...spec.choices.map((c) => literal(c)));
    }
    case "text": {
      const min = spec.minLength ?? 0;
      const max = spec.maxLength ?? Infinity;
      if (!(min >= 0 && max >= min)) throw new GrammarError(`no text has between ${min} and ${max} characters`);
      const excluded: [number, number][] = spec.singleLine ? [[0x0a, 0x0a], [0x0d, 0x0d], [0xd800, 0xdfff]] : [[0xd800, 0xdfff]];
      return text(rep(chars(minus(ANY, excluded)), 0, Infinity), min, max, false, "");
    }
  }
}

/** The byte automaton of a language (or of a spec). */
export function compileBytes(what: ConstraintSpec | Lang, limits: CompileLimits = {}): ByteAutomaton {
  const lang = "k" in what ? what : specLanguage(what);
  if (lang.k === "never") throw new GrammarError("the language is empty");
  const nfa = new Nfa(limits.nfaStates ?? 400_000);
  const { start, end } = nfa.build(lang, "utf8", limits.nfaStates ?? 400_000);
  return new ByteAutomaton(nfa, start, end, { maxExplicit: limits.explicitStates ?? 20_000, maxCounted: limits.countedStates ?? 1_000_000 });
}

/** The token automaton of a spec over a vocabulary. */
export function compileConstraint(what: ConstraintSpec | Lang, vocab: Vocabulary, limits: CompileLimits = {}): TokenAutomaton {
  return tokenAutomaton(compileBytes(what, limits), vocab);
}

/**
 * The token automaton against brute force: in every state a walk reaches, with every budget, the
 * tokens it allows are exactly those whose bytes the byte automaton reads from there into a state
 * that can still finish within the budget (shared rows, relative targets and count guards
 * included), plus end-of-sequence exactly where the text may end. Walks within a budget always
 * end in a complete text, end-of-sequence is forced when nothing else fits, and the vocabulary
 * may split characters anywhere.
 */
import { grammarVocabulary } from "../../agents/policy/action-grammar.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ByteAutomaton, DEAD } from "../../models/grammar/byte-automaton.js";
import { compileBytes, compileConstraint, GrammarError, Vocabulary, type ConstraintSpec } from "../../models/grammar/index.js";
import { tokenAutomaton, type TokenAutomaton } from "../../models/grammar/token-automaton.js";
import { Rng } from "../../worlds/core/rng.js";
import { tinyModel } from "../policy/fixtures.js";
import { allowedOf, byteVocabulary, check, JSON_PIECES, randomTokens, textOf } from "./helpers.js";

const SPECS: Record<string, ConstraintSpec> = {
  tomi: { type: "json_schema", schema: z.toJSONSchema(z.discriminatedUnion("type", [z.object({ type: z.literal("none") }), z.object({ type: z.literal("enter"), room: z.string().min(1).max(6) }), z.object({ type: z.literal("move"), object: z.enum(["apple", "ape"]), n: z.int().min(-3).max(120) })])) },
  strings: { type: "json_schema", schema: { type: "object", properties: { a: { type: "string", minLength: 2, maxLength: 5 }, b: { type: "array", items: { type: "string", maxLength: 3 }, maxItems: 3 }, c: { type: "string", pattern: "^[a-c]+\\.[0-9]{2}$" } }, required: ["a", "b", "c"], additionalProperties: false } },
  free: { type: "json_object", depth: 2, whitespace: "flexible" },
  answer: { type: "text", maxLength: 7 },
  unbounded: { type: "text", minLength: 3 },
  regex: { type: "regex", pattern: "^(yes|no|maybe [0-9]+)$" },
  choice: { type: "choice", choices: ["box", "basket", "bo", "crate \u{1F4E6}"] },
};

describe("allowed tokens", () => {
  it("match brute force over a vocabulary whose pieces cross quotes, keys and characters", () => {
    const { vocab, bytes } = byteVocabulary(JSON_PIECES);
    for (const [name, spec] of Object.entries(SPECS)) check(spec, vocab, bytes, 12, name);
  });

  it("match brute force over a real (tiny, byte-level BPE) tokenizer", async () => {
    const { tokenizer } = await tinyModel(2);
    const vocab = grammarVocabulary(tokenizer);
    const tokens = Array.from({ length: tokenizer.vocabSize }, (_, id) => (vocab.eos.includes(id) ? null : Uint8Array.from(tokenizer.tokenBytes(id))));
    for (const name of ["tomi", "strings", "answer"]) check(SPECS[name]!, vocab, tokens, 6, `${name}-bpe`);
  });
});

describe("walks", () => {
  it("finish every text within their budget, and end-of-sequence is forced when nothing else is left", () => {
    const { vocab, bytes, eos } = byteVocabulary(JSON_PIECES);
    const decode = (ids: number[]) => textOf(Uint8Array.from(ids.flatMap((t) => [...bytes[t]!])));
    const rng = Rng.seeded("walks");
    for (const spec of Object.values(SPECS)) {
      const a = compileConstraint(spec, vocab);
      const b = compileBytes(spec);
      for (let i = 0; i < 40; i++) {
        const ids = randomTokens(a, rng, a.minBudget + Math.floor(rng.next() * 4));
        expect(b.matches(new TextEncoder().encode(decode(ids)))).toBe(true);
        expect(a.acceptsTokens(ids)).toBe(true);
      }
    }
    // After a whole choice nothing but the end may follow.
    const a = compileConstraint({ type: "choice", choices: ["box"] }, vocab);
    let s = a.start;
    for (const ch of "box") s = a.advance(s, ch.charCodeAt(0))!;
    expect(allowedOf(a, s, 5)).toEqual([`${eos}>-1`]);
  });

  it("keep strings within their length at every budget", () => {
    const { vocab, bytes } = byteVocabulary([...JSON_PIECES, "abcdefgh", "\u{1F600}\u{1F600}"]);
    const a = compileConstraint({ type: "text", minLength: 2, maxLength: 5 }, vocab);
    const rng = Rng.seeded("lengths");
    for (let i = 0; i < 300; i++) {
      const text = textOf(Uint8Array.from(randomTokens(a, rng, 8).flatMap((t) => [...bytes[t]!])));
      expect(text.length, text).toBeGreaterThanOrEqual(2);
      expect(text.length, text).toBeLessThanOrEqual(5);
      expect([...text].length, text).toBeGreaterThanOrEqual(2);
    }
  });
});

describe("vocabularies", () => {
  it("need a single-byte token for every byte the grammar writes, and an end-of-sequence token", () => {
    const tokens = ["a", "b", '"', "{", "}", ":", "ab"].map((t) => new TextEncoder().encode(t));
    const vocab = new Vocabulary({ tokens: [...tokens, null], eos: [tokens.length] });
    expect(() => compileConstraint({ type: "choice", choices: ["ab", "ba"] }, vocab)).not.toThrow();
    expect(() => compileConstraint({ type: "choice", choices: ["abc"] }, vocab)).toThrow(/no single-byte token for 0x63/);
    expect(() => new Vocabulary({ tokens, eos: [] })).toThrow(GrammarError);
  });
});

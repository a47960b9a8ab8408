/**
 * A pattern's bounded group, `(?=C{m,n}L)G L`: G compiled as a counted text closed by L (a counter
 * beside G's small automaton, as a JSON string's maxLength is counted), not G written out n times.
 * Checked against RegExp, which reads the lookahead as the same bound; at the bound exactly, with
 * tokens that straddle it; and by the automaton's size (six states of 384 characters, a usersim
 * reply's, in well under the explicit states' limit).
 */
import { describe, expect, it } from "vitest";
import { compileBytes, compileConstraint, type ConstraintSpec } from "../../models/grammar/index.js";
import { UNREACHABLE } from "../../models/grammar/byte-automaton.js";
import { Rng } from "../../worlds/core/rng.js";
import { allowedOf, byteVocabulary, check, JSON_PIECES, randomText, randomTokens, textOf } from "./helpers.js";

const UTF8 = new TextEncoder();

const PATTERNS = [
  "^(?=[^\\n]{1,3}\\n)[a-c]+\\n!$",
  "^x(?=[a-c]{2,4};)(?:ab|c)*;(?=[^;]{0,2};)[a-d ]*;$",
  "^(?:(?=[^\\n]{0,2}\\n)a*\\n|b)+$",
  "(?=[^\\n]{2}\\n)[a-z\\u00e9]{0,5}\\n",
  "^(?=[^\\n]{1,4}\\n)(?:[^\\s<>](?:[^<>\\r\\n]*[^\\s<>])?)\\n<$",
  "^(?=[^\\n]{1,3}\\n)a+\\n(?=[^\\n]{0,2}\\n)[bc]*\\n$",
  // Bounded to the end of the input: the group, closed by a word, ends the pattern (a usersim reply's response).
  "^x(?=[\\s\\S]{2,5}$)(?:[a-c\\n]*;!)$",
  "^<r>\\n(?=[\\s\\S]{3,7}$)(?:(?:[^<]|<[^/])*\\n<\\/r>)$",
  "^(?=[^;]{1,4}$)(?:[a-d ]+)$|^;$",
];

/** A reply's state (usersim's STATE_PATTERN) bounded at n characters, between tags. */
const statePattern = (n: number, tags: readonly string[]) =>
  `^${tags.map((t) => `<${t}>\\n(?=[^\\n]{1,${n}}\\n)(?:[^\\s<>](?:[^<>\\r\\n]*[^\\s<>])?)\\n</${t}>`).join("\\n")}$`;
const SIX = ["stance", "emotion", "belief", "value", "goal", "communication"];

describe("bounded groups", () => {
  it("accept exactly what RegExp.test accepts, and write only what it accepts", () => {
    const rng = Rng.seeded("bounded");
    const alphabet = ["a", "b", "c", "d", "x", ";", "!", "\n", " ", "<", "\u00e9"];
    for (const p of PATTERNS) {
      const a = compileBytes({ type: "regex", pattern: p });
      const re = new RegExp(p);
      const agree = (s: string) => expect(a.matches(UTF8.encode(s)), `${p} on ${JSON.stringify(s)}`).toBe(re.test(s));
      for (let i = 0; i < 2000; i++) agree(Array.from({ length: Math.floor(rng.next() * 9) }, () => rng.pick(alphabet)).join(""));
      for (let i = 0; i < 100; i++) {
        const s = textOf(randomText(a, rng, 40));
        expect(re.test(s), `${p} wrote ${JSON.stringify(s)}`).toBe(true);
        // Texts one edit away, most of them near a bound.
        const at = Math.floor(rng.next() * (s.length + 1));
        agree(s.slice(0, at) + rng.pick(alphabet) + s.slice(at));
        agree(s.slice(0, at) + s.slice(at + 1));
        agree(s.slice(0, at) + rng.pick(alphabet) + s.slice(at + 1));
      }
    }
  });

  it("hold a state of exactly its bound and refuse one character more (a 2-byte character counts one)", () => {
    const p = statePattern(384, ["s"]);
    const a = compileBytes({ type: "regex", pattern: p });
    const re = new RegExp(p);
    for (const [state, ok] of [
      ["a".repeat(384), true],
      ["a".repeat(385), false],
      ["\u00e9".repeat(384), true],
      ["\u00e9".repeat(385), false],
      [`a${" ".repeat(382)}b`, true],
      [`a${" ".repeat(383)}`, false],
      ["", false],
    ] as const) {
      const s = `<s>\n${state}\n</s>`;
      expect(a.matches(UTF8.encode(s)), `${state.length} characters`).toBe(ok);
      expect(re.test(s)).toBe(ok);
    }
  });

  it("mask every token that writes past the bound, multi-character and closing tokens included", () => {
    const pieces = ["ab", "abc", "aaaaaaaa", "b\n</s>", "\n</s>", "\u00e9a", "a\u00e9"];
    const { vocab, bytes, eos } = byteVocabulary(pieces);
    const id = (piece: string) => 256 + pieces.indexOf(piece);
    const a = compileConstraint({ type: "regex", pattern: statePattern(10, ["s"]) }, vocab);
    let s = a.start;
    for (const ch of "<s>\n") s = a.advance(s, ch.charCodeAt(0))!;
    const tokensAt = (state: number) => new Set(allowedOf(a, state, 1000).map((e) => Number(e.split(">")[0])));
    const state = (count: number) => {
      let t = s;
      for (let i = 0; i < count; i++) t = a.advance(t, 0x61)!;
      return t;
    };
    // Eight characters written, two to go: "ab" (2) fits, "abc" (3) and "aaaaaaaa" do not; "b\n</s>" closes after one.
    const at8 = tokensAt(state(8));
    for (const piece of ["ab", "b\n</s>", "\n</s>", "\u00e9a", "a\u00e9"]) expect(at8.has(id(piece)), piece).toBe(true);
    for (const piece of ["abc", "aaaaaaaa"]) expect(at8.has(id(piece)), piece).toBe(false);
    // Nine: one character left; "ab", "\u00e9a" and "a\u00e9" (2 each, whatever their bytes) no longer fit.
    const at9 = tokensAt(state(9));
    for (const piece of ["ab", "\u00e9a", "a\u00e9"]) expect(at9.has(id(piece)), piece).toBe(false);
    expect(at9.has(id("b\n</s>"))).toBe(true);
    expect(at9.has(0x61)).toBe(true);
    // At the bound only the line break, alone or in a token that goes on to the closing tag, may come.
    const at10 = [...tokensAt(state(10))].sort((x, y) => x - y);
    expect(at10).toEqual([0x0a, id("\n</s>")]);
    expect(a.acceptsTokens([..."<s>\n"].map((c) => c.charCodeAt(0)).concat(Array(10).fill(0x61), [id("\n</s>"), eos]))).toBe(true);
    expect(a.acceptsTokens([..."<s>\n"].map((c) => c.charCodeAt(0)).concat(Array(9).fill(0x61), [id("ab"), id("\n</s>")]))).toBe(false);
    // And against brute force over every state a walk reaches, at every budget.
    check({ type: "regex", pattern: statePattern(6, ["s", "t"]) }, vocab, bytes, 20, "bounded-tokens");
    check({ type: "regex", pattern: PATTERNS[1]! }, byteVocabulary(JSON_PIECES).vocab, byteVocabulary(JSON_PIECES).bytes, 20, "bounded-json-pieces");
  });

  it("count the distance to the end of a bounded text in tokens: a closing tag that is one token is one token away", () => {
    const pieces = ["\n</r>", "\n</s>\n<t>\n", "hello", " world"];
    const { vocab, bytes, eos } = byteVocabulary(pieces);
    const id = (piece: string) => 256 + pieces.indexOf(piece);
    const walk = (a: ReturnType<typeof compileConstraint>, text: string) => {
      let s = a.start;
      for (const ch of text) s = a.advance(s, ch.charCodeAt(0))!;
      return s;
    };
    // A response bounded to the end of the reply: after "abc", its closing "\n</r>" is one token (five bytes).
    const response = compileConstraint({ type: "regex", pattern: "^<r>\\n(?=[\\s\\S]{6,45}$)(?:(?:[^<]|<[^/])*\\n<\\/r>)$" }, vocab);
    const inside = walk(response, "<r>\nabc");
    expect(response.distance(inside)).toBe(1);
    // With one token left that closing comes (counted in bytes, nothing could), and with two a word may still come first.
    expect(allowedOf(response, inside, 1)).toEqual([`${id("\n</r>")}>${response.advance(inside, id("\n</r>"))}`]);
    expect(allowedOf(response, inside, 3).map((e) => Number(e.split(">")[0]))).toContain(id("hello"));
    expect(response.acceptsTokens([..."<r>\nabc"].map((c) => c.charCodeAt(0)).concat([id("hello"), id("\n</r>"), eos]))).toBe(true);
    // Near its bound the token count gives way to what still fits: 40 characters written, "hello" (5) does not.
    const full = walk(response, `<r>\n${"a".repeat(40)}`);
    expect(allowedOf(response, full, 10).map((e) => Number(e.split(">")[0]))).not.toContain(id("hello"));
    expect(response.distance(full)).toBe(1);
    // A state closed by its line break, then the next tag: one token to the next state's text.
    const states = compileConstraint({ type: "regex", pattern: statePattern(10, ["s", "t"]) }, vocab);
    const mid = walk(states, "<s>\nab");
    // From inside the first state: the token to the next state (1), a character (1), then "\n</t>" byte by byte (5); in bytes, 16.
    expect(states.distance(mid)).toBe(7);
    expect(states.distance(walk(states, "<s>\nab\n</s>\n<t>\nc"))).toBe(5);
    // Walks at tight budgets always finish, and the masks agree with brute force at the states the walks
    // reach (brute force reads the automaton's own distances, so the invariant test below is what
    // checks that none is too low).
    const rng = Rng.seeded("token-distances");
    for (const a of [response, states]) {
      for (let i = 0; i < 60; i++) {
        const ids = randomTokens(a, rng, a.minBudget + Math.floor(rng.next() * 3));
        expect(a.acceptsTokens(ids)).toBe(true);
      }
    }
    check({ type: "regex", pattern: "^<r>\\n(?=[\\s\\S]{6,20}$)(?:(?:[^<]|<[^/])*\\n<\\/r>)$" }, vocab, bytes, 30, "token-distance-response");
    check({ type: "regex", pattern: statePattern(6, ["s", "t"]) }, vocab, bytes, 30, "token-distance-states");
  });

  it("keep every distance: at each state a distance of d tokens has a token allowed with d left (0: the state accepts)", () => {
    // Exhaustive over the states, every count included: a distance one too low has no such token.
    const keeps = (a: ReturnType<typeof compileConstraint>, label: string) => {
      const tokens = new Int32Array(a.vocabSize + 4);
      const next = new Int32Array(a.vocabSize + 4);
      let finite = 0;
      for (let s = 0; s < a.numStates; s++) {
        const d = a.distance(s);
        if (d === UNREACHABLE) continue;
        finite++;
        expect(d, `${label}: state ${s}`).toBeGreaterThanOrEqual(0);
        if (d === 0) {
          expect(a.accepts(s), `${label}: state ${s} at distance 0 accepts`).toBe(true);
          continue;
        }
        const k = a.allowed(s, d, tokens, next);
        expect(next.subarray(0, k).some((to) => to >= 0), `${label}: state ${s} keeps its distance ${d}`).toBe(true);
      }
      expect(finite, label).toBeGreaterThan(0);
    };
    const emoji = "\u{1F600}";
    const pieces = ["\n</r>", "\n!", "hello", " world", "ab", "abc", emoji, `a${emoji}`, `${emoji}\n`, [0xf0, 0x9f], [0x98, 0x80], "\u00e9a", "b\n</s>", "\n</s>\n<t>\n"];
    const vocabularies = [byteVocabulary(pieces).vocab, byteVocabulary(JSON_PIECES).vocab];
    const patterns = [
      ...PATTERNS,
      statePattern(6, ["s", "t"]),
      "^<r>\\n(?=[\\s\\S]{6,20}$)(?:(?:[^<]|<[^/])*\\n<\\/r>)$",
      // A 4-byte character (one of the bound's characters, four tokens in bytes) and a minimum above 0.
      `^(?=[^\\n]{2,5}\\n)[ab${emoji}]+\\n!$`,
      // Raw text that ends the pattern (no closing character: its body states accept).
      `^<r>(?=[^<]{2,6}$)(?:[a ${emoji}]*b)$`,
    ];
    for (const p of patterns) for (const [i, vocab] of vocabularies.entries()) keeps(compileConstraint({ type: "regex", pattern: p }, vocab), `${p} (vocabulary ${i})`);
  });

  it("count six 384-character states instead of writing them out: a few hundred explicit states", () => {
    const b = compileBytes({ type: "regex", pattern: statePattern(384, SIX) });
    expect(b.texts.length).toBe(6);
    const stride = b.texts[0]!.stride;
    // One small body automaton per state (its UTF-8 and the spaces it may not start or end with), counted 0..384.
    expect(stride).toBeLessThan(64);
    expect(b.countedStates).toBe(6 * 385 * stride);
    expect(b.explicitAccepting.length).toBeLessThan(200);
    const { vocab } = byteVocabulary(["ab", "\n</", "stance>", " the"]);
    const a = compileConstraint({ type: "regex", pattern: statePattern(384, SIX) }, vocab);
    expect(a.numStates).toBe(b.size);
    // Written out, the same bound is a state per character and state: over the 20,000-state limit.
    const spelled = `^${SIX.map((t) => `<${t}>\\n[^\\s<>](?:[^<>\\r\\n]{0,382}[^\\s<>])?\\n</${t}>`).join("\\n")}$`;
    expect(() => compileBytes({ type: "regex", pattern: spelled }, { nfaStates: 20_000 })).toThrow(/too large/);
  });

  it("refuse lookaheads that are not a length bound, saying why", () => {
    const refused = (pattern: string) => () => compileBytes({ type: "regex", pattern });
    expect(refused("^(?=a)b$")).toThrow(/lookaround assertions are supported only as a length bound .*C needs its count/);
    expect(refused("^(?=(?:ab){1,2}\\n)ab\\n$")).toThrow(/C must be one character or class/);
    expect(refused("^(?=[^\\n]{1,3}a)b$")).toThrow(/one ASCII character L that C does not hold/);
    expect(refused("^(?=[a-z]{1,3}\\n)[a-z0-9]+\\n$")).toThrow(/only write characters of its bound's class/);
    expect(refused("^(?=[^\\n]{1,3}\\n)a+b$")).toThrow(/followed by its bound's closing character "\\n"/);
    expect(refused("^(?=[^\\n]{1,3}\\n)$")).toThrow(/followed by the group it bounds/);
    expect(refused("^(?=[^\\n]{1,3}\\n)a+\\n*$")).toThrow(/may not be repeated/);
    expect(refused("^(?=[a-c]{1,3}$)a+b$")).toThrow(/must be followed by its group and then the pattern's end/);
    expect(refused("^(?:(?=[a-c]{1,3}$)a+)$")).toThrow(/must be followed by its group and then the pattern's end/);
    expect(refused("^(?=[a-c]{1,3}$)$")).toThrow(/followed by the group it bounds/);
    expect(refused("^(?![a-z])b$")).toThrow(/lookaround assertions are not supported/);
    expect(refused("^(?<=a)b$")).toThrow(/lookaround assertions are not supported/);
    // A string's pattern has its own counter (its maxLength): a bound inside it would need a second.
    const inString: ConstraintSpec = { type: "json_schema", schema: { type: "string", pattern: "^(?=[a-z]{1,3}!)[a-z]+!$" } };
    expect(() => compileBytes(inString)).toThrow(/may not hold another/);
  });
});

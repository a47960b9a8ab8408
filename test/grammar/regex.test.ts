/**
 * Patterns against JavaScript's own RegExp: on random strings over a small alphabet the automaton
 * accepts exactly what RegExp.test accepts (a JSON Schema pattern matches anywhere unless
 * anchored), and every string it writes matches.
 */
import { describe, expect, it } from "vitest";
import { compileBytes } from "../../models/grammar/index.js";
import { Rng } from "../../worlds/core/rng.js";
import { randomText, textOf } from "./helpers.js";

const PATTERNS = [
  "^[a-c]+\\.[0-9]{2}$",
  "^(ab|a)*c?$",
  "^\\d{3}-\\d{4}$",
  "b.c",
  "^a|c$",
  "^[^ab]{1,3}$",
  "^(?:x|y(?<g>z)){2,3}$",
  "^\\w+\\s\\W$",
  "^[\\x61-\\u0063-]+$",
  "^(a|b)?(c|d){0,2}[.]$",
];

describe("patterns", () => {
  it("accept exactly what RegExp.test accepts", () => {
    const rng = Rng.seeded("regex");
    const alphabet = ["a", "b", "c", "d", "x", "y", "z", "0", "1", "-", ".", " ", "!", "\u00e9"];
    for (const p of PATTERNS) {
      const a = compileBytes({ type: "regex", pattern: p });
      const re = new RegExp(p);
      for (let i = 0; i < 600; i++) {
        const s = Array.from({ length: Math.floor(rng.next() * 7) }, () => alphabet[Math.floor(rng.next() * alphabet.length)]).join("");
        expect(a.matches(new TextEncoder().encode(s)), `${p} on ${JSON.stringify(s)}`).toBe(re.test(s));
      }
      for (let i = 0; i < 60; i++) {
        const s = textOf(randomText(a, rng, 30));
        expect(re.test(s), `${p} wrote ${JSON.stringify(s)}`).toBe(true);
      }
    }
  });

  it("refuse what is not regular or not supported, saying where", () => {
    expect(() => compileBytes({ type: "regex", pattern: "^(a)\\1$" })).toThrow(/backreferences are not supported \(at offset 6\)/);
    expect(() => compileBytes({ type: "regex", pattern: "a\\bc" })).toThrow(/word boundaries/);
    expect(() => compileBytes({ type: "regex", pattern: "a^b" })).toThrow(/anchors/);
    expect(() => compileBytes({ type: "regex", pattern: "(a" })).toThrow(/missing \)/);
    expect(() => compileBytes({ type: "regex", pattern: "\\p{L}" })).toThrow(/property escapes/);
    expect(() => compileBytes({ type: "regex", pattern: "a{2000}" })).toThrow(/above 1000/);
  });
});

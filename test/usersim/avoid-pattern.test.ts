import { describe, expect, it } from "vitest";
import { avoiding } from "../../worlds/usersim/avoid-pattern.js";
import { Rng } from "../../worlds/core/rng.js";

describe("avoiding(word): a lookahead-free regex for text without WORD", () => {
  it("matches exactly the texts without the word, on 24,000 random texts built from its pieces", () => {
    const rng = Rng.seeded("avoid");
    for (const word of ["</response>", "<a>", "ab"]) {
      const p = avoiding(word);
      expect(p.any).not.toMatch(/\(\?[=!<]/);
      const any = new RegExp(`^${p.any}$`);
      const text = new RegExp(`^${p.startsWithText}$`);
      const letters = [...new Set([...word, " ", "\n", "x"])];
      for (let t = 0; t < 8_000; t++) {
        let s = "";
        for (let i = rng.int(12); i > 0; i--) s += rng.chance(0.35) ? word.slice(0, 1 + rng.int(word.length)) : rng.pick(letters);
        expect(any.test(s), JSON.stringify(s)).toBe(!s.includes(word));
        expect(text.test(s), JSON.stringify(s)).toBe(!s.includes(word) && /^\S/.test(s));
      }
    }
  });

  it("refuses a word whose first letter comes back (the automaton would need more states)", () => {
    expect(() => avoiding("abca")).toThrow(/repeats its first character/);
    expect(() => avoiding("a")).toThrow(/two characters/);
  });
});

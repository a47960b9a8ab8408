/**
 * The policy's compiled grammars are cached per tokenizer, and so is a grammar that cannot
 * compile: every request of a batch asks for the same grammar, and a compile can run for seconds
 * before it fails (a usersim reply pattern with long bounded states took 8 s to be refused, and a
 * bench of 60 records compiled it 60 times).
 */
import { describe, expect, it } from "vitest";
import { compiledConstraint } from "../../agents/policy/action-grammar.js";
import { GrammarError } from "../../models/grammar/index.js";
import { tinyModel } from "./fixtures.js";

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("the policy's grammar cache", () => {
  it("compiles a grammar once, and remembers one that cannot compile by its error", async () => {
    const { tokenizer } = await tinyModel(5);
    const good = { type: "choice", choices: ["yes", "no"] } as const;
    expect(compiledConstraint(tokenizer, good)).toBe(compiledConstraint(tokenizer, good));

    const bad = { type: "regex", pattern: "^a{2000}$" } as const;
    const first = thrown(() => compiledConstraint(tokenizer, bad));
    expect(first).toBeInstanceOf(GrammarError);
    expect((first as Error).message).toMatch(/repetition counts above 1000/);
    // The same error again, not a second compile's.
    expect(thrown(() => compiledConstraint(tokenizer, bad))).toBe(first);
    // The good grammar is still served.
    expect(compiledConstraint(tokenizer, good).acceptsTokens(tokenizer.encode("yes"))).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileBytes } from "../../models/grammar/index.js";
import { Rng } from "../../worlds/core/rng.js";
import { DEFAULT_HIERARCHY, MAX_DIMENSIONS, MAX_TOKENS, maxChars, RESPONSE_ONLY_HIERARCHY, parseHierarchy } from "../../worlds/usersim/hierarchy.js";
import { parseReply, renderReply, replySchema, replyTextPattern, type Reply } from "../../worlds/usersim/reply.js";

const H = parseHierarchy({ stance: { desc: "where they stand", max_tokens: 8 }, emotion: { desc: "what they feel", max_tokens: 8 }, response: { desc: "the reply", max_tokens: 64 } }, "se.json");
const REPLY: Reply = { states: { stance: "strongly agrees with a four-day work week", emotion: "mild hope for a four-day work week" }, response: "We tried it.\nIt worked <3" };
const TEXT = "<stance>\nstrongly agrees with a four-day work week\n</stance>\n<emotion>\nmild hope for a four-day work week\n</emotion>\n<response>\nWe tried it.\nIt worked <3\n</response>";

const error = (text: string, h = H) => {
  const r = parseReply(text, h);
  return r.ok ? "ok" : r.error;
};

describe("the hierarchical reply", () => {
  it("is written in HumanLM's layout and read back exactly", () => {
    expect(renderReply(REPLY, H)).toBe(TEXT);
    expect(parseReply(TEXT, H)).toEqual({ ok: true, action: REPLY });
    // Whitespace between and inside tags is allowed; the texts are trimmed.
    expect(parseReply("  <stance>strongly agrees with a four-day work week</stance> <emotion> mild hope for a four-day work week </emotion>\n\n<response>We tried it.\nIt worked <3</response>\n", H)).toEqual({ ok: true, action: REPLY });
    expect(renderReply({ states: {}, response: "Sure." }, RESPONSE_ONLY_HIERARCHY)).toBe("<response>\nSure.\n</response>");
  });

  it("refuses anything but the hierarchy's tags, once each, in order, with nothing around them", () => {
    expect(error("")).toBe("empty reply");
    expect(error("<emotion>x</emotion><stance>y</stance><response>z</response>")).toBe('expected <stance> first, found "<emotion>x</emotion><sta"');
    expect(error("Sure! <stance>x</stance><emotion>y</emotion><response>z</response>")).toBe('expected <stance> first, found "Sure! <stance>x</stance>"');
    expect(error("<stance>x</stance><response>z</response>")).toBe('expected <emotion> after </stance>, found "<response>z</response>"');
    expect(error("<stance>x</stance><emotion>y</emotion><response>z</response> Hope that helps")).toBe('text after </response>: " Hope that helps"');
    expect(error("<stance>x</stance><emotion>y</emotion><response>z</response><response>w</response>")).toBe('text after </response>: "<response>w</response>"');
    expect(error("<stance>x</stance><emotion>y</emotion><response>z")).toBe("<response> is never closed");
    expect(error("<STANCE>x</STANCE><emotion>y</emotion><response>z</response>")).toBe('expected <stance> first, found "<STANCE>x</STANCE><emoti"');
    expect(error("<stance> </stance><emotion>y</emotion><response>z</response>")).toBe("stance is empty");
    expect(error("<stance>x\ny</stance><emotion>y</emotion><response>z</response>")).toBe("stance must be one line of text without < or >");
    expect(error("<stance>x <b>y</b></stance><emotion>y</emotion><response>z</response>")).toBe("stance must be one line of text without < or >");
    expect(error(`<stance>${"x".repeat(65)}</stance><emotion>y</emotion><response>z</response>`)).toBe("stance is longer than 64 characters");
    expect(error("<stance>x</stance><emotion>y</emotion><response></response>")).toBe("the response is empty");
    expect(error("<stance>x</stance><emotion>y</emotion><response>z</response>", RESPONSE_ONLY_HIERARCHY)).toBe('expected <response> first, found "<stance>x</stance><emoti"');
  });

  it("validates the JSON form with the zod schema, whose JSON Schema keeps the tags' order and bounds", () => {
    const schema = replySchema(H);
    expect(schema.safeParse(REPLY).success).toBe(true);
    expect(schema.safeParse({ states: { stance: "x" }, response: "y" }).success).toBe(false);
    expect(schema.safeParse({ states: { ...REPLY.states, goal: "x" }, response: "y" }).success).toBe(false);
    expect(schema.safeParse({ states: REPLY.states, response: "a </response> b" }).error?.issues[0]?.message).toBe("the response must not contain </response>");
    const json = z.toJSONSchema(schema) as unknown as { properties: { states: { properties: Record<string, { maxLength: number; pattern: string; description: string }>; required: string[] }; response: { pattern: string } } };
    expect(Object.keys(json.properties.states.properties)).toEqual(["stance", "emotion"]);
    expect(json.properties.states.required).toEqual(["stance", "emotion"]);
    expect(json.properties.states.properties.stance).toMatchObject({ maxLength: 64, description: "where they stand" });
    // Patterns a decoder can compile: no lookaround.
    for (const p of [json.properties.states.properties.stance!.pattern, json.properties.response.pattern]) expect(p).not.toMatch(/\(\?[=!<]/);
  });

  it("has one regex for the text form: every rendered reply matches it, and what it matches parses", () => {
    const re = new RegExp(replyTextPattern(DEFAULT_HIERARCHY));
    // Its only lookaheads are the length bounds of the states and the response, which the grammar compiler reads as counters.
    expect(replyTextPattern(DEFAULT_HIERARCHY).match(/\(\?[=!<]/g)).toHaveLength(DEFAULT_HIERARCHY.states.length + 1);
    expect(replyTextPattern(DEFAULT_HIERARCHY)).toContain("(?=[^\\n]{1,384}\\n)");
    // The response's: the rest of the reply is the response (1 to 4,096 characters) and "\n</response>".
    expect(replyTextPattern(DEFAULT_HIERARCHY)).toContain("<response>\\n(?=[\\s\\S]{13,4108}$)");
    const rng = Rng.seeded("reply-pattern");
    const letters = "ab <>/\n.response".split("");
    const text = (n: number, line: boolean) => {
      let s = "";
      for (let i = 0; i < n; i++) s += rng.pick(line ? letters.filter((c) => !"<>\n".includes(c)) : letters);
      return s.trim() || "x";
    };
    let matched = 0;
    for (let t = 0; t < 1000; t++) {
      // Some states about as long as their bound (384 characters): the pattern bounds them as the schema does.
      const states = Object.fromEntries(DEFAULT_HIERARCHY.states.map((d) => [d.name, text(rng.chance(0.05) ? 380 + rng.int(10) : 1 + rng.int(20), true)]));
      // Some responses about as long as their bound (4,096 characters) too.
      const response = rng.chance(0.1) ? `${text(5, false)}</response>${text(5, false)}` : text(rng.chance(0.05) ? 4090 + rng.int(10) : 1 + rng.int(40), false);
      const rendered = renderReply({ states, response }, DEFAULT_HIERARCHY);
      const valid = replySchema(DEFAULT_HIERARCHY).safeParse({ states, response }).success;
      expect(re.test(rendered), rendered).toBe(valid);
      if (valid) {
        matched++;
        expect(parseReply(rendered, DEFAULT_HIERARCHY)).toEqual({ ok: true, action: { states, response } });
      }
    }
    // Some replies held "</response>" in their response or a text past its bound: those neither validate nor match.
    expect(matched).toBeGreaterThan(400);
    expect(matched).toBeLessThan(1000);
  });

  it("compiles for a constrained decoder, each text a counter, up to the widest hierarchy a file may give", () => {
    const widest = parseHierarchy(Object.fromEntries(Array.from({ length: MAX_DIMENSIONS }, (_, i) => [`s${i}`, { desc: "x", max_tokens: (MAX_TOKENS - 512) / MAX_DIMENSIONS }])), "widest");
    const longest = parseHierarchy({ s: { desc: "x", max_tokens: 1 }, response: { desc: "r", max_tokens: MAX_TOKENS - 1 } }, "longest");
    for (const h of [DEFAULT_HIERARCHY, RESPONSE_ONLY_HIERARCHY, widest, longest]) {
      const a = compileBytes({ type: "regex", pattern: replyTextPattern(h) });
      // Each state, then the response with its closing tag.
      expect(a.texts.map((t) => t.max)).toEqual([...h.states.map(maxChars), maxChars(h.response) + "\n</response>".length]);
      expect(a.explicitAccepting.length).toBeLessThan(100 * (h.states.length + 1));
      // A counted text takes (bound + 1) x its body's states: the bodies are minimal DFAs (the response's was 375 states before it was minimized).
      expect(a.texts.at(-1)!.stride).toBeLessThan(50);
    }
  });
});

import { describe, expect, it } from "vitest";
import { DEFAULT_HIERARCHY, RESPONSE_ONLY_HIERARCHY, parseHierarchy } from "../../worlds/usersim/hierarchy.js";
import type { Reference } from "../../worlds/usersim/judge.js";
import { judgeCacheKey, judgePrompt, judgeReference, levelPrompt, parseJudgeReply, rubricFor, systemPrompt } from "../../worlds/usersim/prompts.js";

const REF: Reference = { states: { stance: "strongly agrees with bike lanes" }, response: "Finally! Build them." };

describe("the world's prompts", () => {
  it("give the user the hierarchy's tags in order, each with its description", () => {
    const p = systemPrompt(DEFAULT_HIERARCHY, { user: "maple_fern", platform: "forum" });
    expect(p).toMatch(/^You are maple_fern, a real person on forum\./);
    const at = DEFAULT_HIERARCHY.states.map((d) => p.indexOf(`<${d.name}>\n${d.desc}\n</${d.name}>`));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(p.indexOf("<response>")).toBeGreaterThan(at.at(-1)!);
    expect(p).not.toMatch(/\{\w+\}/);
    const r = systemPrompt(RESPONSE_ONLY_HIERARCHY, { user: "maple_fern" });
    expect(r).toMatch(/^You are maple_fern, a real person\./);
    expect(r).toContain("<response>\nThe reply itself, exactly as the user would write it.\n</response>");
    expect(r).not.toContain("<stance>");
  });

  it("ask for one level at a time, after the levels already written", () => {
    const p = levelPrompt(DEFAULT_HIERARCHY, "emotion", { user: "maple_fern" }, { stance: "strongly agrees with bike lanes", goal: "not yet" });
    expect(p).toContain("What you have already written down about yourself:\n<stance>\nstrongly agrees with bike lanes\n</stance>\n");
    expect(p).not.toContain("not yet");
    expect(p.endsWith(`<emotion>\n${DEFAULT_HIERARCHY.states[1]!.desc}\n</emotion>`)).toBe(true);
    expect(levelPrompt(DEFAULT_HIERARCHY, "stance", { user: "x" })).not.toContain("already written");
    expect(() => levelPrompt(DEFAULT_HIERARCHY, "mood", { user: "x" })).toThrow('"mood" is not a tag of the hierarchy');
  });

  it("judge a tag against its true text, else against the real reply, with the tag's rubric", () => {
    expect(judgeReference(DEFAULT_HIERARCHY, "stance", REF)).toEqual({ label: "The user's true stance", text: "strongly agrees with bike lanes" });
    expect(judgeReference(DEFAULT_HIERARCHY, "emotion", REF)).toEqual({ label: "The user's real reply (judge the emotion it shows)", text: "Finally! Build them." });
    expect(judgeReference(DEFAULT_HIERARCHY, "response", REF)).toEqual({ label: "The user's real reply", text: "Finally! Build them." });
    const p = judgePrompt({ hierarchy: DEFAULT_HIERARCHY, tag: "stance", context: "op wrote:\nBike lanes on Main Street?", reference: REF, generations: ["somewhat agrees with bike lanes", 'says "no"'] });
    expect(p).toContain(rubricFor("stance"));
    expect(p).toContain("The user's true stance:\n<<<\nstrongly agrees with bike lanes\n>>>");
    expect(p).toContain('1. "somewhat agrees with bike lanes"\n2. "says \\"no\\""');
    expect(p).toContain("(2 of them)");
    expect(p).not.toMatch(/\{(dimension|description|rubric|context|reference|reference_label|count|generations)\}/);
    const custom = parseHierarchy({ sentiment: { desc: "a valence label", max_tokens: 8 } }, "s.json");
    expect(judgePrompt({ hierarchy: custom, tag: "sentiment", context: "c", reference: REF, generations: ["positive"] })).toContain(rubricFor("other"));
    expect(() => judgePrompt({ hierarchy: custom, tag: "sentiment", context: "c", reference: REF, generations: [] })).toThrow("nothing to judge");
  });

  it("read the judge's scores strictly, one per generation", () => {
    expect(parseJudgeReply('Here you go:\n{"scores": [{"id": 2, "reason": "r", "score": 0.25}, {"id": 1, "reason": "r", "score": 1}]}', 2)).toEqual([1, 0.25]);
    expect(() => parseJudgeReply("no idea", 1)).toThrow("the judge's answer has no JSON object");
    expect(() => parseJudgeReply('{"scores": [{"id": 1, "reason": "r", "score": 1.5}]}', 1)).toThrow("a score is from 0 to 1");
    expect(() => parseJudgeReply('{"scores": [{"id": 1, "reason": "r", "score": 1}]}', 2)).toThrow("the judge did not score generation 2");
    expect(() => parseJudgeReply('{"scores": [{"id": 1, "reason": "r", "score": 1}, {"id": 1, "reason": "r", "score": 0}]}', 2)).toThrow("the judge scored generation 1 twice");
    expect(() => parseJudgeReply('{"scores": [{"id": 3, "reason": "r", "score": 1}]}', 2)).toThrow("the judge scored generation 3, but there are 2");
    expect(() => parseJudgeReply('{"scores": [{"id": 1, "score": 1}]}', 1)).toThrow(/does not match/);
  });

  it("cache a score under the tag, the generation and what it was judged against", () => {
    const ref = judgeReference(DEFAULT_HIERARCHY, "stance", REF);
    expect(judgeCacheKey("stance", " x ", ref)).toBe(judgeCacheKey("stance", "x", ref));
    expect(judgeCacheKey("stance", "x", ref)).not.toBe(judgeCacheKey("emotion", "x", ref));
    expect(judgeCacheKey("stance", "x", ref)).not.toBe(judgeCacheKey("stance", "x", { ...ref, text: "other" }));
  });
});

/**
 * The world's reward functions: SQuAD's token F1 and exact match, ROUGE-L as Google's rouge-score
 * computes it (its README's own example), the strict format check against zod action schemas, and
 * how a reply's reward is put together.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sameAction } from "../../worlds/core/rewards/exact-match.js";
import { lcsLength, rougeL, rougeTokens } from "../../worlds/core/rewards/rouge-l.js";
import { strictFormat } from "../../worlds/core/rewards/strict-format.js";
import { maxOverReferences, normalizeAnswer, normalizedExactMatch, tokenF1 } from "../../worlds/core/rewards/token-f1.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { TomiActionSchema } from "../../worlds/tomi/world.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import type { DecisionPoint } from "../../trainers/grpo/decision-point.js";
import { scoreReply } from "../../trainers/grpo/reward.js";

describe("token F1 (SQuAD v1.1)", () => {
  it("normalizes as normalize_answer does: case, punctuation (underscores too), articles, spaces", () => {
    expect(normalizeAnswer("The  Green_Crate.")).toBe("greencrate");
    expect(normalizeAnswer("an apple, a pear and THE plum!")).toBe("apple pear and plum");
    expect(normalizedExactMatch("the green_crate", "Green_crate.")).toBe(true);
  });

  it("F1 over the tokens in common", () => {
    // prediction: red box and blue box; reference: blue box -> 2 in common, P = 2/5, R = 1
    expect(tokenF1("red box and blue box", "blue box")).toBeCloseTo((2 * 0.4) / 1.4, 12);
    expect(tokenF1("blue box", "blue box")).toBe(1);
    expect(tokenF1("green", "blue box")).toBe(0);
    expect(tokenF1("", "blue box")).toBe(0);
    expect(maxOverReferences(tokenF1, "blue box", ["red", "a blue box"])).toBe(1);
  });
});

describe("ROUGE-L (rouge-score)", () => {
  it("matches rouge-score's README example: precision 0.625, recall 0.5556, F 0.5882", () => {
    // rouge_scorer.RougeScorer(['rougeL']).score('The quick brown fox jumps over the lazy dog', 'The quick brown dog jumps on the log.')
    const s = rougeL("The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog");
    expect(s.precision).toBeCloseTo(0.625, 12);
    expect(s.recall).toBeCloseTo(5 / 9, 12);
    expect(s.fmeasure).toBeCloseTo(0.5882352941176471, 12);
  });

  it("tokenizes on anything but a-z0-9; empty sides score 0", () => {
    expect(rougeTokens("Moves the potato to the green_envelope!")).toEqual(["moves", "the", "potato", "to", "the", "green", "envelope"]);
    expect(lcsLength(["a", "b", "c", "d"], ["b", "d"])).toBe(2);
    expect(rougeL("", "x").fmeasure).toBe(0);
    expect(rougeL("the cat sat on the mat", "the cat on the mat").fmeasure).toBeCloseTo(10 / 11, 12);
  });
});

describe("strict format", () => {
  it("a single-field answer: the bare single line, or its exact JSON", () => {
    expect(strictFormat("green_crate", AnswerSchema)).toEqual({ ok: true, action: { answer: "green_crate" } });
    expect(strictFormat('{"answer": "box"}', AnswerSchema)).toEqual({ ok: true, action: { answer: "box" } });
    expect(strictFormat("  ", AnswerSchema).ok).toBe(false);
    expect(strictFormat("box\nbecause", AnswerSchema).ok).toBe(false);
    expect(strictFormat('{"answer": 3}', AnswerSchema).ok).toBe(false);
    expect(strictFormat('{"answer": "box"', AnswerSchema).ok).toBe(false);
    expect(strictFormat("x".repeat(4001), AnswerSchema).ok).toBe(false);
  });

  it("a structured action must be JSON the world's schema accepts, nothing around it", () => {
    expect(strictFormat('{"type":"enter","room":"kitchen"}', TomiActionSchema)).toEqual({ ok: true, action: { type: "enter", room: "kitchen" } });
    expect(strictFormat("enter kitchen", TomiActionSchema).ok).toBe(false);
    expect(strictFormat('I will {"type":"none"}', TomiActionSchema).ok).toBe(false);
    expect(strictFormat('{"type":"fly"}', TomiActionSchema).ok).toBe(false);
  });

  it("actions compare as JSON values, whatever the key order", () => {
    expect(sameAction({ type: "move", object: "apple", container: "box" }, { container: "box", type: "move", object: "apple" })).toBe(true);
    expect(sameAction({ type: "exit" }, { type: "exit", room: "hall" })).toBe(false);
  });
});

describe("a reply's reward", () => {
  const point: DecisionPoint = {
    id: "q1",
    messages: [{ role: "user", content: "Where is the apple?" }],
    schema: AnswerSchema as z.ZodType<unknown>,
    reference: "blue box",
    exact: (a) => ((a as { answer: string }).answer === "blue box" ? 1 : 0),
    answerText: (a) => (a as { answer: string }).answer,
  };
  const reply = (text: string, tokens = 3) => ({ text, tokens, finish: "stop_token", logprob: -1 });

  it("format failure gets the lowest reward and nothing else", () => {
    const c = GrpoConfigSchema.parse({ rewards: { exact: 1, f1: 1, rougeL: 1, format: 0.5 } });
    const r = scoreReply(point, reply(""), c);
    expect(r).toMatchObject({ reward: -1, format: false, exact: 0, f1: 0 });
  });

  it("weighted sum of exact, F1, ROUGE-L and the format bonus, plus the overlong penalty", () => {
    const c = GrpoConfigSchema.parse({ rewards: { exact: 1, f1: 0.5, rougeL: 0.25, format: 0.1 }, maxNewTokens: 10, overlongBuffer: 4 });
    const exact = scoreReply(point, reply("blue box"), c);
    expect(exact.reward).toBeCloseTo(1 + 0.5 + 0.25 + 0.1, 12);
    const partial = scoreReply(point, reply("red box", 8), c);
    // F1 0.5 (box), ROUGE-L 0.5 (box), overlong: 8 tokens, 2 past 10 - 4 -> -0.5
    expect(partial.reward).toBeCloseTo(0.5 * 0.5 + 0.25 * 0.5 + 0.1 - 0.5, 12);
    expect(partial.overlong).toBeCloseTo(-0.5, 12);
  });

  it("the leak penalty: minus the penalty for each fact the reply states that its agent never perceived", () => {
    const leaky: DecisionPoint = { ...point, leaks: (_a, text) => (text.includes("blue") ? 2 : 0) };
    const c = GrpoConfigSchema.parse({ leakPenalty: 0.5 });
    expect(scoreReply(leaky, reply("blue box"), c)).toMatchObject({ reward: 1 - 1, leaks: 2 });
    expect(scoreReply(leaky, reply("red box"), c)).toMatchObject({ reward: 0, leaks: 0 });
    // Off by default: the audit does not even run.
    const off = scoreReply(leaky, reply("blue box"), GrpoConfigSchema.parse({}));
    expect(off.reward).toBe(1);
    expect(off.leaks).toBeUndefined();
  });
});

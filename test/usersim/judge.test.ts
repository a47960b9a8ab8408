import { describe, expect, it } from "vitest";
import { DEFAULT_HIERARCHY, parseHierarchy } from "../../worlds/usersim/hierarchy.js";
import { checkWeights, judgeReply, judgeText, MALFORMED_REWARD, pairedScore, scoreState, stancePair, type Reference } from "../../worlds/usersim/judge.js";
import { latentTexts, type Latent } from "../../worlds/usersim/latent.js";
import { summarizeJudgements } from "../../worlds/usersim/metrics.js";
import { renderReply, type Reply } from "../../worlds/usersim/reply.js";

const WEEK = "a four-day work week";
const LATENT: Latent = {
  stances: [
    { target: WEEK, position: 2 },
    { target: "return-to-office mandates", position: -1 },
  ],
  emotions: [{ emotion: "frustration", intensity: 3, target: "return-to-office mandates" }],
  belief: "people rarely change their habits unless they are forced to",
  value: "time with family comes before work",
  goal: { kind: "persuade", target: WEEK },
  communication: { tone: "blunt", structure: "tells a personal story then draws a lesson" },
  seed: 1,
};
const REF: Reference = { states: latentTexts(LATENT), latent: LATENT, response: "We switched last year and nobody wants to go back." };
const score = (dim: string, text: string, ref = REF) => scoreState(dim, text, ref);

describe("the offline judge", () => {
  it("scores stances part by part: the target first, then how far the position is", () => {
    expect(score("stance", "strongly agrees with a four-day work week; somewhat disagrees with return-to-office mandates")).toEqual({ score: 1, method: "structured" });
    // Same targets in another order and wording (articles, case, final stop): each pair one step off = 0.5.
    expect(score("stance", "Somewhat agrees with the Four-Day Work Week; strongly disagrees with return-to-office mandates.").score).toBe(0.5);
    // One right, one missing: 1 / max(1, 2).
    expect(score("stance", "strongly agrees with a four-day work week").score).toBe(0.5);
    // Opposite direction (4 steps) and a wrong target count nothing.
    expect(score("stance", "strongly disagrees with a four-day work week; somewhat disagrees with congestion pricing").score).toBe(0);
    expect(stancePair({ target: "x", position: 1 }, { target: "x", position: -1 })).toBe(0);
    // An extra stance costs as much as a missing one: (1 + 1) / 3.
    expect(score("stance", `strongly agrees with ${WEEK}; somewhat disagrees with return-to-office mandates; is neutral on hot desking`).score).toBeCloseTo(2 / 3, 12);
    expect(pairedScore([], [], () => 1)).toBe(1);
  });

  it("scores emotions as 0.5 feeling + 0.25 intensity + 0.25 target", () => {
    const about = "return-to-office mandates";
    expect(score("emotion", `strong frustration about ${about}`).score).toBe(1);
    // Same family (0.5 * 0.5), one step weaker (0.25 * 0.5), same target (0.25).
    expect(score("emotion", `moderate irritation about ${about}`).score).toBe(0.625);
    // Another family: only intensity and target.
    expect(score("emotion", `strong hope for ${about}`).score).toBe(0.5);
    // Right feeling, two steps off, wrong target.
    expect(score("emotion", `mild frustration about ${WEEK}`).score).toBe(0.5);
  });

  it("scores belief and value as the same sentence or not, goal and communication half and half", () => {
    expect(score("belief", "People rarely change their habits unless they are forced to.")).toEqual({ score: 1, method: "structured" });
    expect(score("belief", "hard work is noticed and rewarded in the long run")).toEqual({ score: 0, method: "structured" });
    expect(score("value", "time with family comes before work").score).toBe(1);
    expect(score("goal", `persuade others about the four-day work week`).score).toBe(1);
    expect(score("goal", `ask others about ${WEEK}`).score).toBe(0.5);
    expect(score("goal", "share a personal experience with congestion pricing").score).toBe(0);
    expect(score("communication", "blunt, gives reasons step by step").score).toBe(0.5);
    expect(score("communication", "Blunt, tells a personal story then draws a lesson").score).toBe(1);
  });

  it("falls back to ROUGE-L F1 on free text, and leaves out a state with no ground truth", () => {
    // [people never change] against the 10 tokens of the belief: LCS 2, P 2/3, R 1/5, F 4/13.
    expect(score("belief", "people never change").method).toBe("free-text");
    expect(score("belief", "people never change").score).toBeCloseTo(4 / 13, 12);
    // A text ground truth in the vocabulary's words is read too (no latent needed).
    const textOnly: Reference = { states: { stance: "strongly agrees with bike lanes" }, response: "yes" };
    expect(score("stance", "somewhat agrees with bike lanes", textOnly)).toEqual({ score: 0.5, method: "structured" });
    expect(score("stance", "I love them", textOnly)).toEqual({ score: 0, method: "free-text" });
    expect(score("goal", "persuade others about bike lanes", textOnly)).toEqual({ score: null, method: "none" });
    expect(scoreState("belief", "people never change", REF, { freeText: () => 0.75 })).toEqual({ score: 0.75, method: "free-text" });
  });

  it("combines the judged scores with the weights, and gives a malformed reply -1", () => {
    const reply: Reply = {
      states: { ...latentTexts(LATENT), stance: "strongly agrees with a four-day work week", belief: "hard work is noticed and rewarded in the long run" },
      response: "We switched last year and nobody wants to go back.",
    };
    const j = judgeReply(reply, REF, DEFAULT_HIERARCHY);
    // stance 0.5, belief 0, the four others 1, the response 1: (0.5 + 0 + 4 + 1) / 7.
    expect(j.states.stance!.score).toBe(0.5);
    expect(j.response).toBe(1);
    expect(j.alignment).toBeCloseTo(5.5 / 7, 12);
    expect(j.reward).toBe(j.alignment);
    const w = judgeReply(reply, REF, DEFAULT_HIERARCHY, { weights: { response: 2, belief: 0, stance: 3 } });
    // (3 * 0.5 + 0 * 0 + 4 * 1 + 2 * 1) / (3 + 0 + 4 + 2)
    expect(w.alignment).toBeCloseTo(7.5 / 9, 12);
    // The same through the text form.
    expect(judgeText(renderReply(reply, DEFAULT_HIERARCHY), REF, DEFAULT_HIERARCHY)).toEqual(j);

    const bad = judgeText("I think it's great!", REF, DEFAULT_HIERARCHY);
    expect(bad).toMatchObject({ wellFormed: false, error: 'expected <stance> first, found "I think it\'s great!"', response: 0, alignment: 0, reward: MALFORMED_REWARD });
    expect(Object.values(bad.states).every((s) => s.score === 0 && s.method === "malformed")).toBe(true);
  });

  it("judges real data without states on the response alone (the states are left to the LLM judge)", () => {
    const real: Reference = { states: {}, response: "YTA, it was one day." };
    const reply: Reply = { states: Object.fromEntries(DEFAULT_HIERARCHY.states.map((d) => [d.name, "anything"])), response: "YTA, one day." };
    const j = judgeReply(reply, real, DEFAULT_HIERARCHY);
    expect(Object.values(j.states).every((s) => s.score === null)).toBe(true);
    // [yta one day] against [yta it was one day]: LCS 3, P 1, R 3/5, F 0.75.
    expect(j.alignment).toBeCloseTo(0.75, 12);
    const bad = judgeText("no tags", real, DEFAULT_HIERARCHY);
    expect(Object.values(bad.states).every((s) => s.score === null && s.method === "none")).toBe(true);
  });

  it("refuses weights that name no tag, are negative, or are all 0", () => {
    expect(checkWeights({ stance: 2, response: 1 }, DEFAULT_HIERARCHY)).toBeUndefined();
    expect(checkWeights({ sentiment: 1 }, DEFAULT_HIERARCHY)).toMatch(/^weight for "sentiment", which is not a tag of the hierarchy \(stance, emotion/);
    expect(checkWeights({ stance: -1 }, DEFAULT_HIERARCHY)).toBe("the weight of stance must be a number >= 0, got -1");
    const h = parseHierarchy({ stance: { desc: "s", max_tokens: 8 } }, "s.json");
    expect(checkWeights({ stance: 0, response: 0 }, h)).toBe("every weight is 0");
  });

  it("summarizes replies into the benchmark's numbers", () => {
    const good = judgeReply({ states: latentTexts(LATENT), response: REF.response }, REF, DEFAULT_HIERARCHY);
    const half = judgeReply({ states: { ...latentTexts(LATENT), stance: "strongly agrees with a four-day work week" }, response: "nobody" }, REF, DEFAULT_HIERARCHY);
    const bad = judgeText("", REF, DEFAULT_HIERARCHY);
    const s = summarizeJudgements([good, half, bad], DEFAULT_HIERARCHY);
    // half: stance 0.5, the five other states 1; the response [nobody] against 10 tokens: LCS 1, P 1, R 1/10, F 2/11.
    const halfAlignment = (0.5 + 5 + 2 / 11) / 7;
    expect(half.alignment).toBeCloseTo(halfAlignment, 12);
    expect(s).toMatchObject({ items: 3, wellFormed: 2, formatRate: 2 / 3 });
    expect(s.accuracy).toBeCloseTo((1 + halfAlignment + 0) / 3, 12);
    expect(s.meanReward).toBeCloseTo((1 + halfAlignment - 1) / 3, 12);
    expect(s.states.stance).toEqual({ mean: 0.5, judged: 3, structured: 2 });
    expect(s.states.belief).toEqual({ mean: 2 / 3, judged: 3, structured: 2 });
    expect(s.response).toBeCloseTo((1 + 2 / 11) / 3, 12);
  });
});

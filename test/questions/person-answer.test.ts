/**
 * A person's answer to a benchmark question is refused with the reason when it is empty or, for a
 * question that takes only some answers, not one of them; every official label of ToMi's val split
 * and of the Hi-ToM dev slice is taken (the check never refuses a right answer).
 */
import { describe, expect, it } from "vitest";
import { HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { closedAnswers, personAnswerProblem } from "../../worlds/question/person-answer.js";
import type { QuestionTask } from "../../worlds/question/world.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { TOM_DATA, tomData } from "../data-paths.js";

const base: QuestionTask = { benchmark: "tomi", itemId: "x", mode: "vanilla", story: "s", question: "Where is the apple?", prompt: "p" };

describe("a person's answer to a question", () => {
  it("refuses an empty answer, naming the answers to choose from when there are some", () => {
    expect(personAnswerProblem(base, "  ")).toBe("the answer is empty: type your answer");
    const tomi = { ...base, candidates: ["green_box", "blue_pantry"], answerInCandidates: true };
    expect(personAnswerProblem(tomi, "")).toBe("the answer is empty: choose one of green_box, blue_pantry");
  });

  it("refuses an answer that is not a candidate when every right answer is one, whatever the spelling", () => {
    const tomi = { ...base, candidates: ["green_box", "blue_pantry"], answerInCandidates: true };
    expect(personAnswerProblem(tomi, "red_box")).toBe('"red_box" is not one of the answers this question takes: green_box, blue_pantry');
    for (const ok of ["green_box", "Green box", "the green_box", " blue  pantry."]) expect(personAnswerProblem(tomi, ok), ok).toBeUndefined();
  });

  it("takes any answer when the candidates are only a sample (usersim's random replies), and checks choices always", () => {
    const open = { ...base, candidates: ["a reply", "another"] };
    expect(closedAnswers(open)).toBeUndefined();
    expect(personAnswerProblem(open, "my own reply")).toBeUndefined();
    const mc = { ...base, choices: ["(a) yes", "(b) no"] };
    expect(personAnswerProblem(mc, "(a) yes")).toBeUndefined();
    expect(personAnswerProblem(mc, "maybe")).toMatch(/^"maybe" is not one of the answers this question takes: \(a\) yes, \(b\) no$/);
  });

  it("lists at most twelve answers and says how many more", () => {
    const many = { ...base, choices: Array.from({ length: 15 }, (_, i) => `c${i}`) };
    expect(personAnswerProblem(many, "zz")).toMatch(/c11 \(and 3 more\)$/);
  });
});

describe.skipIf(!TOM_DATA)("official labels are answers a person may give (../shared/data/tom)", () => {
  it("every ToMi val label is one of its story's candidates", () => {
    const bench = new TomiBenchmark();
    const items = bench.load(tomData("tomi", "original", "fb_all_val.txt"));
    const refused = items.filter((item) => personAnswerProblem(bench.task(item, "vanilla"), String(item.answer)) !== undefined);
    expect(items.length).toBe(5994);
    expect(refused.map((i) => i.id)).toEqual([]);
  });

  it("every Hi-ToM dev label is one of its choices", () => {
    const bench = new HitomBenchmark();
    const items = bench.load(tomData("hitom", "Hi-ToM_dev.json"));
    const refused = items.filter((item) => personAnswerProblem(bench.task(item, "vanilla"), String(item.answer)) !== undefined);
    expect(items.length).toBeGreaterThan(100);
    expect(refused.map((i) => i.id)).toEqual([]);
  });
});

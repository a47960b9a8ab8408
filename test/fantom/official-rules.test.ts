/**
 * The official evaluator's rules on small hand-computed examples. Reference values come from
 * CPython 3.11 (`random.seed(99)`, `round`) and from the formulas in eval_fantom.py and sklearn's
 * f1_score, worked out by hand in the comments.
 */
import { describe, expect, it } from "vitest";
import { PythonRandom } from "../../worlds/fantom/python-random.js";
import { binarize, judgeBeliefFreeForm, judgeFact, judgeList, judgeMultipleChoice, parseResponse, wordF1 } from "../../worlds/fantom/judge.js";
import { officialPercent, officialReport, pyRound, weightedF1, type ScoredRow } from "../../worlds/fantom/metrics.js";
import { LexicalEmbedder } from "../../worlds/core/embedder.js";

describe("Python's random, as the official evaluator draws it", () => {
  it("random.seed(99): getrandbits(32) and choice([True, False]) match CPython", () => {
    const r = new PythonRandom(99);
    expect([r.getrandbits(32), r.getrandbits(32), r.getrandbits(32), r.getrandbits(32)]).toEqual([1735072617, 1635320116, 859317502, 2574571355]);
    const c = new PythonRandom(99);
    const draws = Array.from({ length: 24 }, () => c.choice([true, false]));
    // python3 -c "import random; random.seed(99); print([random.choice([True, False]) for _ in range(24)])"
    expect(draws).toEqual([false, false, true, true, true, true, true, true, false, false, true, false, true, false, true, false, false, true, true, false, true, false, true, true]);
  });
});

describe("per-question rules", () => {
  it("word F1 is compute_f1: whitespace tokens, multiset overlap, case as given", () => {
    // truth: Linda's dog is a beagle. (5) · response: Linda has a beagle. (4) · common: a, beagle. -> P 2/4, R 2/5
    expect(wordF1("Linda's dog is a beagle.", "Linda has a beagle.")).toBeCloseTo((2 * 0.5 * 0.4) / 0.9, 12);
    expect(wordF1("a a b", "a")).toBeCloseTo((2 * 1 * (1 / 3)) / (1 + 1 / 3), 12);
    expect(wordF1("Beagle", "beagle")).toBe(0);
    expect(judgeFact("Linda's dog is a Beagle.", "linda's DOG is a beagle.")).toBe(1);
    expect(wordF1("x", "")).toBe(0);
  });

  it("multiple choice: the letter at the start, or '(a)' anywhere", () => {
    expect(judgeMultipleChoice("a", "(a) David does not know.")).toBe(true);
    expect(judgeMultipleChoice("a", "a) yes")).toBe(true);
    expect(judgeMultipleChoice("a", "A. it is")).toBe(true);
    expect(judgeMultipleChoice("b", "The answer is (b).")).toBe(true);
    expect(judgeMultipleChoice("b", "b")).toBe(true);
    expect(judgeMultipleChoice("b", " b) with a leading space")).toBe(false);
    expect(judgeMultipleChoice("a", "(b)")).toBe(false);
  });

  it("lists: every correct name and no wrong name, as substrings in any case", () => {
    expect(judgeList(["Linda", "Kailey"], ["David"], "kailey and LINDA").correct).toBe(true);
    expect(judgeList(["Linda", "Kailey"], ["David"], "Linda").excludedAwareCharacter).toBe(true);
    const both = judgeList(["Linda"], ["David"], "David");
    expect([both.correct, both.excludedAwareCharacter, both.includedUnawareCharacter]).toEqual([false, true, true]);
  });

  it("binary answers map to 1 / 0 / -1 as map_binary_answer_to_int does", () => {
    expect(binarize("Yes, he does.")).toBe(1);
    expect(binarize("'yes'")).toBe(1);
    expect(binarize("Well, David knows it.")).toBe(1);
    expect(binarize("No.")).toBe(0);
    expect(binarize("David does not know it.")).toBe(0);
    expect(binarize("David does not know.")).toBe(-1); // " does not know " needs a space after "know"
    expect(binarize("Nope")).toBe(0); // startswith("no")
    expect(binarize("true")).toBe(1);
    expect(binarize("maybe")).toBe(-1);
  });

  it("parse_response keeps what follows the last 'Answer:'", () => {
    expect(parseResponse("Let me think. Answer: yes")).toBe("yes");
    expect(parseResponse("(a)")).toBe("(a)");
  });

  it("free-form beliefs: right only when strictly closer to the correct answer", () => {
    const e = new LexicalEmbedder();
    const correct = "David does not know what breed Linda's dog is.";
    const wrong = "David believes that Linda's dog is a beagle.";
    const right = judgeBeliefFreeForm(correct, wrong, correct, e);
    expect(right.correct).toBe(true);
    expect(right.wordOverlap).toBe(1);
    const bad = judgeBeliefFreeForm(correct, wrong, "David thinks Linda's dog is a beagle.", e);
    expect(bad.correct).toBe(false);
    expect(bad.wordOverlap).toBeCloseTo(wordF1(wrong, "David thinks Linda's dog is a beagle."), 12);
    // A tie (the same answer as both options) counts as wrong, as `>=` does in the official code.
    expect(judgeBeliefFreeForm(correct, correct, correct, e).correct).toBe(false);
  });
});

describe("report metrics", () => {
  it("weighted F1 as sklearn computes it", () => {
    // labels -1, 0, 1. Label 0: tp 1, fp 0, fn 2 -> F1 1/2, support 3. Label 1: tp 1, fp 1, fn 0 -> F1 2/3, support 1.
    // Label -1: F1 0, support 0. Weighted: (1/2 * 3 + 2/3 * 1) / 4 = 13/24.
    expect(weightedF1([0, 0, 0, 1], [0, 1, -1, 1])).toBeCloseTo(13 / 24, 12);
    expect(weightedF1([1, 0], [1, 0])).toBe(1);
    expect(weightedF1([1, 1], [0, 0])).toBe(0);
  });

  it("values are round(v, 3) * 100, with Python's round-half-even", () => {
    expect(pyRound(0.0625, 3)).toBe(0.062);
    expect(pyRound(0.1875, 3)).toBe(0.188);
    expect(pyRound(0.8765, 3)).toBe(0.876); // 0.8765 is stored just below the half
    expect(officialPercent(2 / 3)).toBe(0.667 * 100);
    expect(officialPercent(0.8765)).toBe(0.876 * 100);
  });

  const row = (setId: string, questionType: string, result: boolean | number, extra: Partial<ScoredRow> = {}): ScoredRow => ({
    setId,
    questionType,
    scenario: "inaccessible",
    question: "Does David know the precise correct answer to this question?",
    result,
    ...extra,
  });

  it("ALL* needs every ToM question of a set right; ALL only the multiple-choice, list and binary ones", () => {
    const rows: ScoredRow[] = [
      row("1-0-0", "fact", 0.5),
      row("1-0-0", "tom:belief:inaccessible", true, { question: "What does David believe?", tomType: "first-order", wordOverlap: 0.8 }),
      row("1-0-0", "tom:belief:inaccessible:multiple-choice", true, { question: "What does David believe?\n(a) x\n(b) y" }),
      row("1-0-0", "tom:answerability:list", true, { prediction: "linda" }),
      row("1-0-0", "tom:answerability:binary", true, { correctAnswer: "no", binarized: 0 }),
      row("2-0-0", "fact", 1),
      row("2-0-0", "tom:belief:inaccessible", false, { question: "What does David believe?", tomType: "second-order:cyclic", wordOverlap: 0.1 }),
      row("2-0-0", "tom:belief:inaccessible:multiple-choice", true, { question: "What does David believe?\n(a) x\n(b) y" }),
      row("2-0-0", "tom:answerability:list", true, { prediction: "linda" }),
      row("2-0-0", "tom:answerability:binary", true, { correctAnswer: "no", binarized: 0 }),
    ];
    const r = officialReport(rows);
    expect(r["inaccessible:set:ALL*"]).toBe(50);
    expect(r["inaccessible:set:ALL"]).toBe(100);
    expect(r["inaccessible:belief:distance"]).toBe(50);
    expect(r["inaccessible:belief_true_word-f1"]).toBe(80); // only right answers count: 0.8
    expect(r["fact_word-f1"]).toBe(75);
    expect(r["inaccessible:first-order"]).toBe(100);
    expect(r["inaccessible:second-order"]).toBe(0);
    // Per character: David's binary and beliefs in set 1 all right; in set 2 a belief is wrong.
    expect(r["inaccessible:set:ALL_character"]).toBe(50);
    // Binary said "no" (0) and David is not named in the list answer (0): consistent in both sets.
    expect(r["inaccessible:set:character_answer_consistency"]).toBe(100);
    // Nothing of the accessible scenario: those metrics are absent, as pandas would give NaN.
    expect(r["accessible:set:ALL*"]).toBeUndefined();
  });

  it("ALL* groups by part or conversation when asked", () => {
    const rows = [row("1-0-0", "tom:answerability:list", true), row("1-0-1", "tom:answerability:list", false), row("1-1-0", "tom:answerability:list", true)];
    expect(officialReport(rows, "set")["inaccessible:set:ALL*"]).toBe(pyRound(2 / 3, 3) * 100);
    expect(officialReport(rows, "part")["inaccessible:set:ALL*"]).toBe(50);
    expect(officialReport(rows, "conversation")["inaccessible:set:ALL*"]).toBe(0);
  });
});

/**
 * FANToM's question sets flattened into the questions the official evaluator asks, in its order
 * (`setup_fantom`): per set, the fact question; each belief question free-form, then as a
 * multiple choice; the answerability list and binary questions; the info-accessibility list and
 * binary questions. Multiple-choice options are ordered by the evaluator's own draw
 * (`random.seed(99)`, one `random.choice([True, False])` per belief question in file order).
 * The full-context adjustments of the accessibility labels and the short-context removal of
 * `no:long` binary questions are applied as the official code applies them.
 */
import type { FantomSet } from "./format.js";
import { PythonRandom } from "./python-random.js";

export type ContextMode = "short" | "full";
export type PromptKind = "question" | "choice" | "target" | "information";

export interface FantomQuestion {
  /** Unique within a set: "fact", "belief:0", "belief:0:mc", "answerability:list", "answerability:binary:2", ... */
  readonly key: string;
  readonly setIndex: number;
  readonly setId: string;
  /** Where the question is in the file: "[3].beliefQAs[0]". */
  readonly field: string;
  readonly questionType: string;
  /** `missed_info_accessibility` as the evaluator sees it (undefined for a fact question that has none). */
  readonly scenario: "inaccessible" | "accessible" | undefined;
  readonly tomType?: string;
  /** As asked after "Question:" (multiple choice: with its options and "Choose an answer from above:"). */
  readonly question: string;
  /** Text; names for lists; "yes"/"no"/"no:long" for binary; the letter "a"/"b" for multiple choice. */
  readonly correct: string | readonly string[];
  readonly wrong?: string | readonly string[];
  /** Multiple choice: the option texts, in the order shown. */
  readonly choices?: readonly [string, string];
  readonly factQuestion: string;
  readonly factAnswer: string;
  /** The conversation given with the question (short or full context, stripped). */
  readonly context: string;
  readonly promptKind: PromptKind;
}

export const MC_SEED = 99;

export function flattenFantom(sets: readonly FantomSet[], mode: ContextMode = "short"): FantomQuestion[] {
  const rng = new PythonRandom(MC_SEED);
  const out: FantomQuestion[] = [];
  sets.forEach((set, i) => {
    const context = (mode === "short" ? set.short_context : set.full_context).trim();
    const factQ = set.factQA.question;
    const factA = set.factQA.correct_answer;
    const base = { setIndex: i, setId: set.set_id, factQuestion: factQ, factAnswer: factA, context };
    out.push({
      ...base,
      key: "fact",
      field: `[${i}].factQA`,
      questionType: set.factQA.question_type ?? "fact",
      scenario: set.factQA.missed_info_accessibility ?? set.missed_info_accessibility,
      question: factQ,
      correct: factA,
      promptKind: "question",
    });
    set.beliefQAs.forEach((qa, b) => {
      const field = `[${i}].beliefQAs[${b}]`;
      const common = { ...base, field, scenario: qa.missed_info_accessibility, tomType: qa.tom_type };
      out.push({ ...common, key: `belief:${b}`, questionType: qa.question_type, question: qa.question, correct: qa.correct_answer, wrong: qa.wrong_answer, promptKind: "question" });
      // set_beliefQA_multiple_choices: option (a) is the wrong answer when the correct one "goes last".
      const answerGoesLast = rng.choice([true, false]);
      const choices: [string, string] = answerGoesLast ? [qa.wrong_answer, qa.correct_answer] : [qa.correct_answer, qa.wrong_answer];
      const choicesText = `(a) ${choices[0]}\n(b) ${choices[1]}\n`;
      out.push({
        ...common,
        key: `belief:${b}:mc`,
        questionType: `${qa.question_type}:multiple-choice`,
        question: `${qa.question}\n${choicesText.trim()}\n\nChoose an answer from above:`,
        correct: answerGoesLast ? "b" : "a",
        choices,
        promptKind: "choice",
      });
    });
    const lists = [
      ["answerability", set.answerabilityQA_list, set.answerabilityQAs_binary, "answerabilityQA_list", "answerabilityQAs_binary", "target"],
      ["info_accessibility", set.infoAccessibilityQA_list, set.infoAccessibilityQAs_binary, "infoAccessibilityQA_list", "infoAccessibilityQAs_binary", "information"],
    ] as const;
    for (const [kind, list, binaries, listField, binaryField, promptKind] of lists) {
      const listScenario = mode === "full" && list.wrong_answer.length > 0 ? "inaccessible" : list.missed_info_accessibility;
      out.push({
        ...base,
        key: `${kind}:list`,
        field: `[${i}].${listField}`,
        questionType: `tom:${kind}:list`,
        scenario: listScenario,
        question: list.question,
        correct: list.correct_answer,
        wrong: list.wrong_answer,
        promptKind,
      });
      let binaryScenario: "inaccessible" | "accessible" | undefined;
      if (mode === "full" && binaries.length) {
        binaryScenario = binaries[0]!.missed_info_accessibility;
        if (binaries.some((q) => q.correct_answer !== "yes")) binaryScenario = "inaccessible";
      }
      binaries.forEach((qa, q) => {
        if (mode === "short" && qa.correct_answer === "no:long") return;
        out.push({
          ...base,
          key: `${kind}:binary:${q}`,
          field: `[${i}].${binaryField}[${q}]`,
          questionType: `tom:${kind}:binary`,
          scenario: binaryScenario ?? qa.missed_info_accessibility,
          question: `${qa.question} Answer yes or no.`,
          correct: qa.correct_answer,
          promptKind,
        });
      });
    }
  });
  return out;
}

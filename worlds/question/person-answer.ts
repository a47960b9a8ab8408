/**
 * Which answers a person in a question's seat may give. A model's answer is scored as it comes (an
 * empty or stray answer is simply wrong); a person's is checked first, so that a slip (nothing
 * typed, a typo in a container's name, an answer the question cannot take) is refused with the
 * reason and can be corrected before the deadline, rather than scored wrong without a word.
 */
import type { QuestionTask } from "./world.js";

/** The answers the question takes when it takes only some: its choices, or its candidates when every right answer is one. */
export function closedAnswers(task: QuestionTask): readonly string[] | undefined {
  if (task.choices?.length) return task.choices;
  return task.answerInCandidates && task.candidates?.length ? task.candidates : undefined;
}

/** Spelling that does not change an answer: case, spaces or underscores, a leading "the". */
function key(answer: string): string {
  return answer
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, " ")
    .replace(/^the /, "")
    .replace(/[.!]$/, "");
}

/** Why `answer` is refused for `task` when a person gives it, or undefined when it is taken. */
export function personAnswerProblem(task: QuestionTask, answer: string): string | undefined {
  const closed = closedAnswers(task);
  if (answer.trim() === "") {
    return closed ? `the answer is empty: choose one of ${list(closed)}` : "the answer is empty: type your answer";
  }
  if (closed && !closed.some((c) => key(c) === key(answer))) {
    return `"${answer.trim()}" is not one of the answers this question takes: ${list(closed)}`;
  }
  return undefined;
}

function list(answers: readonly string[]): string {
  const shown = answers.slice(0, 12).join(", ");
  return answers.length > 12 ? `${shown} (and ${answers.length - 12} more)` : shown;
}

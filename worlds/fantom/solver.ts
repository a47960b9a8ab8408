import type { QuestionTask } from "../../worlds/question/world.js";
import type { Solution } from "./index.js";
import { answerFantom } from "./fantom.js";

/** Answers a FANToM question from the conversation text and the question alone (one replay per conversation). */
export async function fantomSolver(task: QuestionTask): Promise<Solution> {
  return answerFantom(task.story, task.question);
}

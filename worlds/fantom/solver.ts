import type { QuestionTask } from "../question/world.js";
import type { Solution } from "../question/solver.js";
import { answerFantom } from "./simulation.js";

/** Answers a FANToM question from the conversation text and the question alone (one replay per conversation). */
export async function fantomSolver(task: QuestionTask): Promise<Solution> {
  return answerFantom(task.story, task.question);
}

import type { QuestionTask } from "../../worlds/question/world.js";
import { parseQuestion } from "../../worlds/tomi/sentences.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";
import type { Solution } from "./index.js";
import { answerTomi, Perspectives, simulateTomi } from "./tomi.js";

const contexts = new Map<string, { context: SocializedContext; views: Perspectives }>();

/** Answers a ToMi question from the story text alone (one simulation per distinct story). */
export function tomiSolver(task: QuestionTask): Solution {
  let ctx = contexts.get(task.story);
  if (!ctx) {
    const context = simulateTomi(task.story);
    ctx = { context, views: new Perspectives(context) };
    contexts.set(task.story, ctx);
    // Questions about one story come together; a big cache only feeds the GC.
    if (contexts.size > 8) contexts.delete(contexts.keys().next().value!);
  }
  const { context, views } = ctx;
  const q = parseQuestion(task.question);
  if (!q) throw new Error(`not a ToMi question: "${task.question}"`);
  return { answer: answerTomi(views, q) ?? "", context };
}

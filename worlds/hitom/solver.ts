import type { QuestionTask } from "../question/world.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { parseQuestion } from "./sentences.js";
import type { Solution } from "../question/solver.js";
import { mindsOf, simulateHitom } from "./simulation.js";
import { RecentCache } from "../core/recent-cache.js";

const contexts = new RecentCache<string, Promise<SocializedContext>>(64);

/** Answers a Hi-ToM question from the story text alone (one simulation per distinct story), as the option text. */
export async function hitomSolver(task: QuestionTask): Promise<Solution> {
  let ctx = contexts.get(task.story);
  if (!ctx) {
    ctx = simulateHitom(task.story);
    contexts.set(task.story, ctx);
  }
  const context = await ctx;
  const minds = mindsOf(context);
  const q = parseQuestion(task.question);
  if (!q) throw new Error(`not a Hi-ToM question: "${task.question}"`);
  const belief = minds.answer(q);
  // The option as the choices write it (they are the story's own container names).
  const answer = belief === undefined ? "" : (task.choices?.find((c) => c === belief) ?? belief);
  return { answer, context };
}

import type { QuestionTask } from "../question/world.js";
import { parseQuestion } from "./sentences.js";
import type { SocializedContext } from "../core/socialized-context.js";
import type { Solution } from "../question/solver.js";
import { RecentCache } from "../core/recent-cache.js";
import { toSocializedContext } from "../core/socialize.js";
import type { Episode } from "../core/episode.js";
import { answerTomi, Perspectives, simulateTomiEpisode } from "./simulation.js";

interface Simulated {
  readonly episode: Episode;
  readonly views: Perspectives;
  /** Written when first asked for (simulation mode logs it). */
  context?: SocializedContext;
}

const contexts = new RecentCache<string, Simulated>(8);

/** Answers a ToMi question from the story text alone (one simulation per distinct story). */
export function tomiSolver(task: QuestionTask): Solution {
  let ctx = contexts.get(task.story);
  if (!ctx) {
    const episode = simulateTomiEpisode(task.story);
    ctx = { episode, views: Perspectives.fromEpisode(episode), context: undefined };
    // Questions about one story come together; a big cache only feeds the GC.
    contexts.set(task.story, ctx);
  }
  const q = parseQuestion(task.question);
  if (!q) throw new Error(`not a ToMi question: "${task.question}"`);
  const answer = answerTomi(ctx.views, q) ?? "";
  if (task.mode !== "simulation") return { answer };
  ctx.context ??= toSocializedContext(ctx.episode, { mentalStates: false });
  return { answer, context: ctx.context };
}

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

// Questions about one story come together (a file's six, or a few at once): a few stories suffice.
const simulations = new RecentCache<string, Simulated>(8);

/** Answers a ToMi question from the story text alone (one simulation per distinct story). */
export function tomiSolver(task: QuestionTask): Solution {
  let sim = simulations.get(task.story);
  if (!sim) {
    const episode = simulateTomiEpisode(task.story);
    sim = { episode, views: Perspectives.fromEpisode(episode) };
    simulations.set(task.story, sim);
  }
  const q = parseQuestion(task.question);
  if (!q) throw new Error(`not a ToMi question: "${task.question}"`);
  const answer = answerTomi(sim.views, q) ?? "";
  if (task.mode !== "simulation") return { answer };
  sim.context ??= toSocializedContext(sim.episode, { mentalStates: false });
  return { answer, context: sim.context };
}

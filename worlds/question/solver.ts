/** A world's symbolic solver, which the simulation agent asks: the answer from the story text alone. */
import type { SocializedContext } from "../core/socialized-context.js";
import type { QuestionTask } from "./world.js";

export interface Solution {
  readonly answer: string;
  /** The socialized context the agent wrote for the story (simulation mode; vanilla may skip it). */
  readonly context?: SocializedContext;
}

/**
 * Synchronous where it can be (ToMi's): a run asks thousands of questions, and a promise per
 * question made the simulation agent's part of a ToMi val run a tenth more work.
 */
export type Solver = (task: QuestionTask) => Solution | Promise<Solution>;

/** The per-benchmark solvers of the simulation agent, by benchmark name. */
import type { SocializedContext } from "../../worlds/core/socialized-context.js";
import type { QuestionTask } from "../../worlds/question/world.js";
import { tomiSolver } from "./tomi-solver.js";
import { hitomSolver } from "./hitom-solver.js";
import { fantomSolver } from "./fantom-solver.js";

export interface Solution {
  readonly answer: string;
  /** The socialized context the agent wrote for the story (simulation mode; vanilla may skip it). */
  readonly context?: SocializedContext;
}

/** Synchronous where it can be: thousands of questions should not each cost a promise. */
export type Solver = (task: QuestionTask) => Solution | Promise<Solution>;

export const SOLVERS: Readonly<Record<string, Solver>> = {
  tomi: tomiSolver,
  hitom: hitomSolver,
  fantom: fantomSolver,
};

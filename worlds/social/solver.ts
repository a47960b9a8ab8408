/**
 * The `simulation` agent's answer to a social question: the latent model's decision and text,
 * recomputed from the tree's latent block (baselines.ts), and in simulation mode the socialized
 * context of what the user saw (contexts.ts: nothing latent in it, no label).
 */
import type { Solution } from "../question/solver.js";
import type { QuestionTask } from "../question/world.js";
import { taskBehind } from "./asked.js";
import { SimulationPredictor } from "./baselines.js";
import { visibleContext } from "./contexts.js";

const simulation = new SimulationPredictor();

export function socialSolver(q: QuestionTask): Solution {
  const task = taskBehind(q);
  const answer = simulation.predict(task);
  return q.mode === "simulation" ? { answer, context: visibleContext(task) } : { answer };
}

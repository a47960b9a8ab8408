/** The per-benchmark solvers of the simulation agent, by benchmark name. */
import type { SocializedContext } from "../core/socialized-context.js";
import type { QuestionTask } from "./world.js";

export interface Solution {
  readonly answer: string;
  /** The socialized context the agent wrote for the story (simulation mode; vanilla may skip it). */
  readonly context?: SocializedContext;
}

/** Synchronous where it can be: thousands of questions should not each cost a promise. */
export type Solver = (task: QuestionTask) => Solution | Promise<Solution>;

// Each solver brings its own world model: a run loads only the one its benchmark needs.
const LOADERS = new Map<string, () => Promise<Solver>>([
  ["tomi", async () => (await import("../tomi/solver.js")).tomiSolver],
  ["hitom", async () => (await import("../hitom/solver.js")).hitomSolver],
  ["fantom", async () => (await import("../fantom/solver.js")).fantomSolver],
]);
const loaded = new Map<string, Solver>();

/** The solver for `benchmark` (a promise the first time, while it loads), or undefined when there is none. */
export function solverFor(benchmark: string): Solver | Promise<Solver> | undefined {
  const solver = loaded.get(benchmark);
  if (solver) return solver;
  const load = LOADERS.get(benchmark);
  return load?.().then((s) => {
    loaded.set(benchmark, s);
    return s;
  });
}

/**
 * The symbolic simulation agent: it reads only the story or conversation text, replays it through
 * the world model to get every character's observation history (the socialized context), and
 * answers with nested beliefs read from those histories. It never sees a label. Each world brings
 * its own solver (worlds/<world>/solver.ts, found through the registry).
 */
import type { Agent, AgentReply, AgentTurn } from "../worlds/core/agent.js";
import type { Answer, QuestionTask } from "../worlds/question/world.js";
import type { Solution, Solver } from "../worlds/question/solver.js";
import { loadSolver } from "../worlds/registry.js";

/** Solvers already loaded: a synchronous solver answers at once (the game loop then awaits nothing). */
const solvers = new Map<string, Solver>();

export class SimulationAgent implements Agent<Answer> {
  readonly id = "simulation";
  readonly trusted = true;

  act(turn: AgentTurn<Answer>): AgentReply<Answer> | Promise<AgentReply<Answer>> {
    const task = turn.observation.data as QuestionTask | undefined;
    if (!task || typeof task.benchmark !== "string") throw new Error("the simulation agent answers benchmark questions only");
    const reply = ({ answer, context }: Solution): AgentReply<Answer> => ({
      action: { answer },
      ...(task.mode === "simulation" && context ? { info: { socializedContext: context } } : {}),
    });
    const solve = (s: Solver): AgentReply<Answer> | Promise<AgentReply<Answer>> => {
      const solved = s(task);
      return solved instanceof Promise ? solved.then(reply) : reply(solved);
    };
    const solver = solvers.get(task.benchmark);
    if (solver) return solve(solver);
    return loadSolver(task.benchmark).then(
      (s) => {
        solvers.set(task.benchmark, s);
        return solve(s);
      },
      (err: Error) => {
        throw new Error(`the simulation agent cannot answer: ${err.message}`);
      },
    );
  }
}

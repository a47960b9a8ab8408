/**
 * The symbolic simulation agent: it reads only the story or conversation text, replays it through
 * the world model to get every character's observation history (the socialized context), and
 * answers with nested beliefs read from those histories. It never sees a label.
 */
import type { Agent, AgentReply, AgentTurn } from "../worlds/core/agent.js";
import type { Answer, QuestionTask } from "../worlds/question/world.js";
import { solverFor, type Solver, type Solution } from "../worlds/question/solver.js";

export class SimulationAgent implements Agent<Answer> {
  readonly id = "simulation";
  readonly trusted = true;

  act(turn: AgentTurn<Answer>): AgentReply<Answer> | Promise<AgentReply<Answer>> {
    const task = turn.observation.data as QuestionTask | undefined;
    if (!task || typeof task.benchmark !== "string") throw new Error("the simulation agent answers benchmark questions only");
    const solver = solverFor(task.benchmark);
    if (!solver) throw new Error(`the simulation agent has no solver for "${task.benchmark}"`);
    const reply = ({ answer, context }: Solution): AgentReply<Answer> => ({
      action: { answer },
      ...(task.mode === "simulation" && context ? { info: { socializedContext: context } } : {}),
    });
    const solve = (s: Solver): AgentReply<Answer> | Promise<AgentReply<Answer>> => {
      const solved = s(task);
      return solved instanceof Promise ? solved.then(reply) : reply(solved);
    };
    return solver instanceof Promise ? solver.then(solve) : solve(solver);
  }
}

import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { solverFor } from "../../worlds/question/solver.js";
import type { Observation } from "../../worlds/core/world.js";
import type { QuestionTask } from "../../worlds/question/world.js";

const story = "1 Ella entered the garage.\n2 The spinach is in the green_crate.\n3 Ella exited the garage.";

function task(benchmark: string): QuestionTask {
  return { benchmark, itemId: "x#0", mode: "vanilla", story, question: "Where is the spinach really?", prompt: "" };
}

function turnOf(t: QuestionTask) {
  const observation: Observation = { text: "", data: t };
  return { world: "question", agent: "respondent", timestep: 1, observation, actionSchema: undefined as never };
}

describe("simulation agent solvers", () => {
  it("loads a benchmark's solver on first use, then answers synchronously", async () => {
    const first = solverFor("tomi");
    const solver = await first;
    expect(typeof solver).toBe("function");
    const again = solverFor("tomi");
    expect(again).toBe(solver);
    expect(again instanceof Promise).toBe(false);
    const agent = new SimulationAgent();
    const reply = agent.act(turnOf(task("tomi")));
    expect(reply instanceof Promise).toBe(false);
    expect(await reply).toEqual({ action: { answer: "green_crate" } });
  });

  it("has no solver for an unknown benchmark, nor for names inherited from Object", () => {
    expect(solverFor("babi")).toBeUndefined();
    expect(solverFor("constructor")).toBeUndefined();
    expect(() => new SimulationAgent().act(turnOf(task("toString")))).toThrow('the simulation agent has no solver for "toString"');
  });
});

import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { loadSolver } from "../../worlds/registry.js";
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
  it("loads a world's solver through the registry on first use, then answers synchronously", async () => {
    const solver = await loadSolver("tomi");
    expect(typeof solver).toBe("function");
    expect(await loadSolver("tomi")).toBe(solver);
    const agent = new SimulationAgent();
    expect(await agent.act(turnOf(task("tomi")))).toEqual({ action: { answer: "green_crate" } });
    const reply = agent.act(turnOf(task("tomi")));
    expect(reply instanceof Promise).toBe(false);
    expect(reply).toEqual({ action: { answer: "green_crate" } });
  });

  it("has no solver for an unknown world, nor for names inherited from Object", async () => {
    await expect(loadSolver("babi")).rejects.toThrow('unknown world "babi" (known: tomi, hitom, fantom, economy, usersim, social, rec)');
    await expect(loadSolver("constructor")).rejects.toThrow('unknown world "constructor"');
    await expect(new SimulationAgent().act(turnOf(task("toString")))).rejects.toThrow('the simulation agent cannot answer: unknown world "toString"');
  });
});

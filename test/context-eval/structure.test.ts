/**
 * The structural score against the rules of the social-world-model project's `validate_structure`
 * (social_world_model/social_world_model_eval.py), worked out by hand for each case:
 * 0.3 for both fields, 0.4 x the share of consistent timesteps, 0.3 / 0.15 / 0.1 for the timesteps.
 */
import { describe, expect, it } from "vitest";
import { pyInt, structuralScore } from "../../benchmarks/context-eval/structure.js";

const step = (timestep: unknown, obs: unknown = { A: "none", B: "none" }, act: unknown = { A: "none", B: "none" }) => ({ timestep, state: "none", observations: obs, actions: act });
const ctx = (steps: unknown[], agents: unknown = ["A", "B"]) => ({ agents_names: agents, socialized_context: steps });

describe("structural score (upstream rules)", () => {
  it("gives 1 to a well-formed context, in either layout", () => {
    expect(structuralScore(ctx([step("1"), step("2"), step("3")])).score).toBe(1);
    expect(structuralScore(ctx([step("0"), step("1")])).score).toBe(1);
    const lines = ctx([step("1", ["A: none", "B: <same_as_state />"], ["B: none", "A: none"]), step("2", ["A: x", "B: y"], ["A: z", "B: w"])]);
    expect(structuralScore(lines)).toEqual({ score: 1, requiredFields: true, agentConsistency: 1, timesteps: "sequential" });
  });

  it("gives 0 without either field, and 0.3 for an empty context", () => {
    expect(structuralScore({ socialized_context: [step("1")] }).score).toBe(0);
    expect(structuralScore({ agents_names: ["A"] }).score).toBe(0);
    expect(structuralScore([step("1")]).score).toBe(0);
    expect(structuralScore(null).score).toBe(0);
    expect(structuralScore(ctx([])).score).toBe(0.3);
  });

  it("counts the share of timesteps whose observations and actions name exactly the agents", () => {
    // 3 of 4 consistent: 0.3 + 0.4 * 0.75 + 0.3, summed in upstream's order.
    const s = structuralScore(ctx([step("1"), step("2"), step("3", { A: "none" }), step("4")]));
    expect(s.agentConsistency).toBe(0.75);
    expect(s.score).toBe(0.3 + 0.4 * 0.75 + 0.3);
    // An extra agent, a missing one in the actions, a line without a name: each breaks its step.
    const t = structuralScore(
      ctx([step("1", { A: "x", B: "y", C: "z" }), step("2", { A: "x", B: "y" }, { A: "x" }), step("3", ["A: x", "no colon here"]), step("4"), step("5")]),
    );
    expect(t.agentConsistency).toBe(0.4);
    expect(t.score).toBe(0.3 + 0.4 * 0.4 + 0.3);
    // Order and repeats do not matter (sets), names do, exactly (case counts).
    expect(structuralScore(ctx([step("1", ["B: x", "A: y", "A: z"], { B: "", A: "" })])).agentConsistency).toBe(1);
    expect(structuralScore(ctx([step("1", { a: "x", B: "y" })])).agentConsistency).toBe(0);
  });

  it("scores timesteps as upstream's int() reads them", () => {
    expect(structuralScore(ctx([step("1"), step("3"), step("3")])).score).toBeCloseTo(0.3 + 0.4 + 0.15, 15);
    expect(structuralScore(ctx([step("1"), step("3"), step("3")])).timesteps).toBe("non_decreasing");
    expect(structuralScore(ctx([step("2"), step("1")])).score).toBe(0.3 + 0.4);
    expect(structuralScore(ctx([step("morning"), step("noon")])).score).toBeCloseTo(0.3 + 0.4 + 0.1, 15);
    expect(structuralScore(ctx([step(" 1 "), step("+2"), step(3)])).timesteps).toBe("sequential");
    // A missing timestep reads as "0": 0, 1, 2 is a sequence; 1, 0 is out of order.
    const { timestep: _t, ...noTimestep } = step("x");
    expect(structuralScore(ctx([noTimestep, step("1"), step("2")])).score).toBe(1);
    expect(structuralScore(ctx([step("1"), noTimestep])).timesteps).toBe("out_of_order");
    // A non-integer and a missing one: no 0.1 (not every step has a timestep).
    expect(structuralScore(ctx([step("t1"), noTimestep])).score).toBe(0.3 + 0.4);
    expect(structuralScore(ctx([step("1.5")])).timesteps).toBe("not_integers");
  });

  it("reads integers like Python's int()", () => {
    expect([" 7 ", "+3", "-2", "1_000", 4.9, true, "0"].map(pyInt)).toEqual([7, 3, -2, 1000, 4, 1, 0]);
    expect(["1.0", "1__0", "_1", "", "one", null, [], {}].map(pyInt)).toEqual(new Array(8).fill(undefined));
  });
});

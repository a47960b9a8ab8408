/** The socialized context as a policy reads it in simulation mode: one line per timestep, the event, then who observed it. */
import { describe, expect, it } from "vitest";
import { contextText } from "../../agents/policy/question-prompt.js";

describe("contextText", () => {
  it("lists who perceives each state, partial observations, and the actions other than none", () => {
    const text = contextText({
      agents_names: ["Ella", "Avery", "Liam"],
      socialized_context: [
        { timestep: "1", state: "none", observations: ["Ella: none", "Avery: none", "Liam: none"], actions: ["Ella: enters the garage", "Avery: none", "Liam: none"] },
        {
          timestep: "2",
          state: "Ella entered the garage. The spinach is in the green_crate.",
          observations: ["Ella: <same_as_state />", "Avery: The spinach is in the green_crate.", "Liam: none"],
          actions: ["Ella: none", "Avery: enters the garage", "Liam: exits the hall"],
        },
        {
          timestep: "3",
          state: "Avery entered the garage",
          observations: ["Ella: <same_as_state />", "Avery: <same_as_state />", "Liam: <same_as_state />"],
          actions: ["Ella: none", "Avery: none", "Liam: none"],
        },
      ],
    });
    expect(text).toBe(
      [
        "Agents: Ella, Avery, Liam.",
        "Timestep 1: none. Observed by nobody. Actions: Ella enters the garage.",
        "Timestep 2: Ella entered the garage. The spinach is in the green_crate. Observed by Ella (Avery: The spinach is in the green_crate.). Actions: Avery enters the garage; Liam exits the hall.",
        "Timestep 3: Avery entered the garage. Observed by Ella, Avery and Liam. Actions: none.",
      ].join("\n"),
    );
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  perceivedText,
  pythonJson,
  serializeSocializedContext,
  SocializedContextSchema,
  validateSocializedContext,
  mentalStatesOf,
} from "../../worlds/core/socialized-context.js";

const fixture = new URL("../fixtures/socialized-context.python.json", import.meta.url);

describe("socialized context", () => {
  it("writes byte for byte what Python's json.dumps(indent=2) writes", () => {
    // The fixture was written by Python's json module (ensure_ascii, non-BMP surrogates, \\u007f).
    const bytes = readFileSync(fixture, "utf8");
    const ctx = SocializedContextSchema.parse(JSON.parse(bytes));
    expect(serializeSocializedContext(ctx)).toBe(bytes);
  });

  it("escapes like Python for every character class", () => {
    expect(pythonJson({ s: "é\u2019\u{1F600}\u007f\t\n\"\\" })).toBe('{\n  "s": "\\u00e9\\u2019\\ud83d\\ude00\\u007f\\t\\n\\"\\\\"\n}');
  });

  it("resolves <same_as_state /> and drops mental states when reading an observation", () => {
    const step = {
      timestep: "2",
      state: "Ella entered the garage.",
      observations: ["Ella: <same_as_state /> <mental_state>I believe x.</mental_state>", "Avery: none"],
      actions: ["Ella: none", "Avery: none"],
    };
    expect(perceivedText(step, "Ella")).toBe("Ella entered the garage.");
    expect(perceivedText(step, "Avery")).toBe("");
    expect(mentalStatesOf(step.observations[0]!)).toEqual(["I believe x."]);
  });

  it("reports lines that do not follow agents_names", () => {
    const problems = validateSocializedContext({
      agents_names: ["A", "B"],
      socialized_context: [{ timestep: "1", state: "none", observations: ["A: none"], actions: ["B: none", "A: none"] }],
    });
    expect(problems).toEqual([
      "socialized_context[0].observations: 1 lines for 2 agents",
      'socialized_context[0].actions[0]: expected "A: ...", got "B: none"',
      'socialized_context[0].actions[1]: expected "B: ...", got "A: none"',
    ]);
  });
});

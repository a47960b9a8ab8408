/**
 * The socialized context: the episode format of the social-world-model project (SAP layout).
 *
 *   { "agents_names": ["Ella", "Avery"],
 *     "socialized_context": [
 *       { "timestep": "1", "state": "none",
 *         "observations": ["Ella: none", "Avery: none"],
 *         "actions": ["Ella: enters the garage", "Avery: none"] }, ... ] }
 *
 * `state` is the world before the timestep's actions; what the actions cause shows up in the
 * next timestep's state. Observations and actions are "Name: text" lines, one per agent, in
 * `agents_names` order. Tags: `<same_as_state />` (the observation is the whole state),
 * `<mental_state>...</mental_state>` (hidden, internal), and `none`.
 * Files are written the way the Python project writes them (json.dump, indent=2, ASCII-escaped)
 * so both projects read each other's files byte for byte.
 */
import { z } from "zod";

export const SAME_AS_STATE = "<same_as_state />";
export const NONE = "none";
const MENTAL_RE = /<mental_state>([\s\S]*?)<\/mental_state>/g;

export const SocializedStepSchema = z.object({
  timestep: z.string().describe("The timestep: an integer as a string, or a description of the time."),
  state: z
    .string()
    .describe("The state of the world at this timestep, before the actions are taken ('none' when there is nothing yet)."),
  observations: z
    .array(z.string())
    .describe(
      "One 'agent_name: observation' line per agent. Use '<same_as_state />' when the agent perceives the whole state, " +
        "'<mental_state>...</mental_state>' for internal thoughts or beliefs, and 'none' when the agent perceives nothing.",
    ),
  actions: z.array(z.string()).describe("One 'agent_name: action' line per agent; 'none' when the agent does nothing."),
});
export type SocializedStep = z.infer<typeof SocializedStepSchema>;

export const SocializedContextSchema = z.object({
  agents_names: z.array(z.string()).describe("The names of the agents."),
  socialized_context: z
    .array(SocializedStepSchema)
    .describe("The timesteps of the social world, in order. At the last timestep every action is 'none'."),
});
export type SocializedContext = z.infer<typeof SocializedContextSchema>;

/** Splits "Name: text" at the first colon; names are matched against `agents`. */
export function splitAgentLine(line: string): { name: string; text: string } {
  const i = line.indexOf(":");
  if (i < 0) return { name: "", text: line.trim() };
  return { name: line.slice(0, i).trim(), text: line.slice(i + 1).trim() };
}

export function agentLine(name: string, text: string): string {
  return `${name}: ${text}`;
}

/** Checks the structure beyond the schema: one line per agent, in order, names that exist. */
export function validateSocializedContext(ctx: SocializedContext): string[] {
  const problems: string[] = [];
  const names = ctx.agents_names;
  if (new Set(names).size !== names.length) problems.push("agents_names has duplicates");
  ctx.socialized_context.forEach((step, i) => {
    for (const field of ["observations", "actions"] as const) {
      const lines = step[field];
      if (lines.length !== names.length) {
        problems.push(`socialized_context[${i}].${field}: ${lines.length} lines for ${names.length} agents`);
      }
      lines.forEach((line, j) => {
        const { name } = splitAgentLine(line);
        if (name !== names[j]) {
          problems.push(`socialized_context[${i}].${field}[${j}]: expected "${names[j] ?? "?"}: ...", got "${line.slice(0, 40)}"`);
        }
      });
    }
  });
  return problems;
}

/** The per-agent text of a timestep's observation or action (undefined if the agent has no line). */
export function lineOf(lines: readonly string[], agent: string): string | undefined {
  for (const line of lines) {
    const { name, text } = splitAgentLine(line);
    if (name === agent) return text;
  }
  return undefined;
}

/** The observation with `<same_as_state />` resolved and mental states removed; "" when none. */
export function perceivedText(step: SocializedStep, agent: string): string {
  const raw = lineOf(step.observations, agent);
  if (raw === undefined) return "";
  const text = stripMentalStates(raw).split(SAME_AS_STATE).join(step.state === NONE ? "" : step.state).trim();
  return text === NONE ? "" : text;
}

export function stripMentalStates(text: string): string {
  return text.replace(MENTAL_RE, "").trim();
}

export function mentalStatesOf(text: string): string[] {
  return Array.from(text.matchAll(MENTAL_RE), (m) => m[1]!.trim());
}

/** JSON exactly as Python's `json.dumps(obj, indent=2)` (ensure_ascii=True) writes it. */
export function pythonJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\uffff]/g, (ch) => {
    return "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0");
  });
}

export function serializeSocializedContext(ctx: SocializedContext): string {
  return pythonJson({ agents_names: ctx.agents_names, socialized_context: ctx.socialized_context });
}

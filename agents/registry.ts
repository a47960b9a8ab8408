/**
 * Agents by name, as `--agent` and rooms take them: `simulation`, `random[:SEED]`, `majority:FILE`, `policy:DIR`,
 * `onnx:DIR`, `llm:MODEL[@BASE_URL]`. `checkAgentSpec` reads a spec without loading anything (a
 * room's options are checked before the room exists); `loadAgent` makes the agent, importing a
 * model-backed agent's code only when the spec names one: a command that runs the simulation agent
 * starts without the language-model clients, the tokenizers and the engine bindings (a fifth of
 * its start-up), and a checkpoint loads when its room starts, not when its options are checked.
 */
import { AgentSpecError } from "./agent-spec-error.js";
import type { Agent } from "../worlds/core/agent.js";
import { parseLlmTarget } from "./llm/options.js";
import { parseAgentTarget } from "./policy/options.js";
import { MajorityAgent } from "./majority-agent.js";
import { RandomAgent } from "./random-agent.js";
import { SimulationAgent } from "./simulation-agent.js";

export const AGENT_NAMES = ["simulation", "random[:SEED]", "majority:FILE", "policy:DIR[?options]", "onnx:DIR[?options]", "llm:MODEL[@BASE_URL][?options]"] as const;

/** Checks a spec's shape (a known kind, a folder or model named, options the agent takes); throws AgentSpecError. */
export function checkAgentSpec(spec: string): void {
  if (builtinAgent(spec)) return;
  const [kind, arg] = splitSpec(spec);
  switch (kind) {
    case "policy":
      parseAgentTarget(spec, arg ?? "");
      return;
    case "onnx":
      if (parseAgentTarget(spec, arg ?? "").options.soft_thinking !== undefined) throw new AgentSpecError(`${spec}: soft_thinking runs on the native engine (policy:DIR), not on onnxruntime`);
      return;
    case "llm":
      parseLlmTarget(spec, arg ?? "");
      return;
    default:
      throw unknownAgent(spec);
  }
}

/** The agent `spec` names; a model-backed agent loads its model (a bad folder fails here, naming the file). */
export async function loadAgent(spec: string): Promise<Agent> {
  const builtin = builtinAgent(spec);
  if (builtin) return builtin;
  const [kind, arg] = splitSpec(spec);
  switch (kind) {
    case "policy":
      return (await import("./policy/agents.js")).policyAgent(spec, arg ?? "");
    case "onnx":
      return (await import("./policy/agents.js")).onnxAgent(spec, arg ?? "");
    case "llm":
      return (await import("./llm/llm-agent.js")).llmAgent(spec, arg ?? "");
    default:
      throw unknownAgent(spec);
  }
}

/** The agents that need no model: `simulation`, `random[:SEED]` and `majority:FILE` (undefined for any other kind). */
function builtinAgent(spec: string): Agent | undefined {
  const [kind, arg] = splitSpec(spec);
  switch (kind) {
    case "simulation":
      if (arg !== undefined) throw new AgentSpecError(`the simulation agent takes no argument (got "${spec}")`);
      return new SimulationAgent() as Agent;
    case "random": {
      const seed = arg === undefined ? 0 : Number(arg);
      if (!Number.isInteger(seed)) throw new AgentSpecError(`random:SEED needs an integer seed (got "${spec}")`);
      return new RandomAgent(seed);
    }
    case "majority":
      return new MajorityAgent(arg ?? "") as Agent;
    default:
      return undefined;
  }
}

function unknownAgent(spec: string): AgentSpecError {
  return new AgentSpecError(`unknown agent "${spec}" (known: ${AGENT_NAMES.join(", ")})`);
}

function splitSpec(spec: string): [string, string | undefined] {
  const i = spec.indexOf(":");
  return i < 0 ? [spec, undefined] : [spec.slice(0, i), spec.slice(i + 1)];
}

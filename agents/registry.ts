/**
 * Agents by name, as `--agent` takes them: `simulation`, `random` or `random:SEED`.
 * (Model-backed agents register here as they land.)
 */
import type { Agent } from "./agent.js";
import { llmAgent } from "./llm/llm-agent.js";
import { onnxAgent, policyAgent } from "./policy/agents.js";
import { RandomAgent } from "./random-agent.js";
import { SimulationAgent } from "./simulation-agent.js";

export const AGENT_NAMES = ["simulation", "random[:SEED]", "policy:DIR[?options]", "onnx:DIR[?options]", "llm:MODEL[@BASE_URL][?options]"] as const;

export function createAgent(spec: string): Agent {
  const [kind, arg] = splitSpec(spec);
  switch (kind) {
    case "simulation":
      if (arg !== undefined) throw new Error(`the simulation agent takes no argument (got "${spec}")`);
      return new SimulationAgent() as Agent;
    case "random": {
      const seed = arg === undefined ? 0 : Number(arg);
      if (!Number.isInteger(seed)) throw new Error(`random:SEED needs an integer seed (got "${spec}")`);
      return new RandomAgent(seed);
    }
    case "policy":
      return policyAgent(spec, arg ?? "");
    case "onnx":
      return onnxAgent(spec, arg ?? "");
    case "llm":
      return llmAgent(spec, arg ?? "");
    default:
      throw new Error(`unknown agent "${spec}" (known: ${AGENT_NAMES.join(", ")})`);
  }
}

function splitSpec(spec: string): [string, string | undefined] {
  const i = spec.indexOf(":");
  return i < 0 ? [spec, undefined] : [spec.slice(0, i), spec.slice(i + 1)];
}

/**
 * The agents that need no model: `simulation` and `random[:SEED]`, and `loadAgent`, which
 * imports a model-backed agent's code only when the spec names one. A command that runs the
 * simulation agent over a benchmark then starts without loading the language-model clients, the
 * tokenizers and the engine bindings (a fifth of its start-up).
 */
import { AgentSpecError } from "./agent-spec-error.js";
import type { Agent } from "../worlds/core/agent.js";
import { RandomAgent } from "./random-agent.js";
import { SimulationAgent } from "./simulation-agent.js";

export const AGENT_NAMES = ["simulation", "random[:SEED]", "policy:DIR[?options]", "onnx:DIR[?options]", "llm:MODEL[@BASE_URL][?options]"] as const;

/** The agent for `spec` when it names one that needs no model; undefined for any other kind. */
export function builtinAgent(spec: string): Agent | undefined {
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
    default:
      return undefined;
  }
}

/** Any agent by spec, as `createAgent` makes it, loading model-backed agents' code on demand. */
export async function loadAgent(spec: string): Promise<Agent> {
  const agent = builtinAgent(spec);
  if (agent) return agent;
  const { createAgent } = await import("./registry.js");
  return createAgent(spec);
}

export function splitSpec(spec: string): [string, string | undefined] {
  const i = spec.indexOf(":");
  return i < 0 ? [spec, undefined] : [spec.slice(0, i), spec.slice(i + 1)];
}

/**
 * Agents by name, as `--agent` takes them: `simulation`, `random[:SEED]`, `policy:DIR`,
 * `onnx:DIR`, `llm:MODEL[@BASE_URL]`. Synchronous, for rooms and anything that already has the
 * model-backed agents loaded; one-shot commands use `loadAgent` (builtin-agents.ts).
 */
import { AgentSpecError } from "./agent-spec-error.js";
import type { Agent } from "../worlds/core/agent.js";
import { AGENT_NAMES, builtinAgent, splitSpec } from "./builtin-agents.js";
import { llmAgent } from "./llm/llm-agent.js";
import { onnxAgent, policyAgent } from "./policy/agents.js";

export { AGENT_NAMES };

export function createAgent(spec: string): Agent {
  const builtin = builtinAgent(spec);
  if (builtin) return builtin;
  const [kind, arg] = splitSpec(spec);
  switch (kind) {
    case "policy":
      return policyAgent(spec, arg ?? "");
    case "onnx":
      return onnxAgent(spec, arg ?? "");
    case "llm":
      return llmAgent(spec, arg ?? "");
    default:
      throw new AgentSpecError(`unknown agent "${spec}" (known: ${AGENT_NAMES.join(", ")})`);
  }
}

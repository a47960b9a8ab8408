/**
 * A script: what happens at each timestep of a story (one agent's action, or the environment's
 * events). Replaying a script through the game loop turns a benchmark story into an episode of
 * its world, with every agent's observations and mental states.
 */
import type { Agent } from "../../agents/agent.js";
import { ScriptedAgent } from "../../agents/scripted-agent.js";
import type { Director } from "./loop.js";
import type { World } from "./world.js";

export interface ScriptStepOf<A, X> {
  readonly actor?: string;
  readonly action?: A;
  readonly narration?: X;
}

/** Scripted agents and a director that together play `script`, one step per timestep. */
export function castScript<S, A, X>(
  world: World<S, A, X>,
  state: S,
  script: readonly ScriptStepOf<A, X>[],
): { agents: Record<string, Agent<A>>; director: Director<S, X> } {
  const byAgent = new Map<string, Map<number, A>>();
  script.forEach((step, i) => {
    if (step.actor === undefined || step.action === undefined) return;
    let m = byAgent.get(step.actor);
    if (!m) byAgent.set(step.actor, (m = new Map()));
    m.set(i + 1, step.action);
  });
  const agents: Record<string, Agent<A>> = {};
  for (const name of world.agents(state)) agents[name] = new ScriptedAgent(byAgent.get(name) ?? new Map(), world.noop(state, name));
  const director: Director<S, X> = {
    exogenous: (_s, t) => {
      const n = script[t - 1]?.narration;
      return n === undefined ? [] : [n];
    },
    done: (_s, t) => t > script.length,
  };
  return { agents, director };
}

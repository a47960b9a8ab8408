/**
 * A script: what happens at each timestep of a story (one agent's action, or the environment's
 * events). Replaying a script through the game loop turns a benchmark story into an episode of
 * its world, with every agent's observations and mental states.
 */
import type { Agent } from "./agent.js";
import { ScriptedAgent } from "./scripted-agent.js";
import type { Episode, TimestepRecord, TurnRecord } from "./episode.js";
import { InvalidActionError, type Director } from "./loop.js";
import { LazyRng, TimestepContext } from "./step-context.js";
import type { Observation, World } from "./world.js";

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
  return { agents, director: narrator(script) };
}

/**
 * Scripted agents and a director for a script whose steps may have several actors at once (a
 * group enters together): each agent plays its own actions, the director the narrator's sentences.
 */
export function castGroupScript<S, A, X>(
  world: World<S, A, X>,
  state: S,
  script: readonly { readonly actions?: Readonly<Record<string, A>>; readonly narration?: X }[],
): { agents: Record<string, Agent<A>>; director: Director<S, X> } {
  const byAgent = new Map<string, Map<number, A>>();
  script.forEach((step, i) => {
    for (const [agent, action] of Object.entries(step.actions ?? {})) {
      let m = byAgent.get(agent);
      if (!m) byAgent.set(agent, (m = new Map()));
      m.set(i + 1, action);
    }
  });
  const agents: Record<string, Agent<A>> = {};
  for (const name of world.agents(state)) agents[name] = new ScriptedAgent(byAgent.get(name) ?? new Map(), world.noop(state, name));
  return { agents, director: narrator(script) };
}

/** The director that speaks a script's narration, one step per timestep, and ends with it. */
function narrator<S, X>(script: readonly { readonly narration?: X }[]): Director<S, X> {
  return {
    exogenous: (_s, t) => {
      const n = script[t - 1]?.narration;
      return n === undefined ? [] : [n];
    },
    done: (_s, t) => t > script.length,
  };
}

/**
 * Plays `script` as a pure, synchronous fold over the world: the same episode the game loop
 * gives with scripted agents (a test holds the two to it), without agents, deadlines or promises.
 * This is what replaying a story means, and benchmark runs replay thousands of them: through the
 * game loop's promises, a ToMi val run took a tenth more work.
 * An action the state does not allow throws InvalidActionError (a story that contradicts itself).
 */
export function playScript<S, A, X>(
  world: World<S, A, X>,
  initialState: S,
  script: readonly ScriptStepOf<A, X>[],
  opts: { readonly seed?: number | string; readonly mentalStates?: boolean } = {},
): Episode<S> {
  const seed = opts.seed ?? 0;
  const withMind = opts.mentalStates ?? true;
  const rng = new LazyRng(seed);
  let state = initialState;
  const agents = world.agents(state).slice();
  const steps: TimestepRecord[] = [];
  const turns: TurnRecord[] = [];
  const returns: Record<string, number> = {};
  for (let i = 0; i < agents.length; i++) returns[agents[i]!] = 0;
  // Indexed loops: they run per agent per timestep of every story a run replays (for...of here took
  // a few percent of a ToMi val run).
  for (let t = 1; ; t++) {
    const observations: Record<string, Observation> = {};
    const mentalStates: Record<string, string | undefined> = {};
    for (let i = 0; i < agents.length; i++) {
      const name = agents[i]!;
      observations[name] = world.observe(state, name);
      if (withMind) mentalStates[name] = world.mentalState?.(state, name);
    }
    const stateText = world.describe(state);
    const step = script[t - 1];
    if (step === undefined || world.isTerminal(state)) {
      const actions: Record<string, string> = {};
      for (let i = 0; i < agents.length; i++) actions[agents[i]!] = "none";
      steps.push({ timestep: t, state: stateText, observations, actions, mentalStates, events: NO_EVENTS });
      break;
    }
    const joint = new Map<string, A>();
    const actions: Record<string, string> = {};
    for (let i = 0; i < agents.length; i++) {
      const name = agents[i]!;
      const action = step.actor === name && step.action !== undefined ? step.action : world.noop(state, name);
      joint.set(name, action);
      if (world.isNoop(action)) {
        actions[name] = "none";
        continue;
      }
      const reason = world.check?.(state, name, action);
      if (reason) throw new InvalidActionError(name, t, `action not possible: ${reason}`);
      actions[name] = world.renderAction(state, name, action);
    }
    const exogenous: readonly X[] = step.narration === undefined ? NO_EVENTS : [step.narration];
    const result = world.step(state, joint, new TimestepContext(rng, exogenous));
    for (let i = 0; i < agents.length; i++) {
      const name = agents[i]!;
      const reward = result.rewards?.[name];
      if (reward !== undefined) returns[name] = (returns[name] ?? 0) + reward;
      if (actions[name] === "none") continue;
      turns.push({ agent: name, timestep: t, observation: observations[name]!, action: joint.get(name), actionText: actions[name]!, source: "agent", reward, latencyMs: 0 });
    }
    steps.push({
      timestep: t,
      state: stateText,
      observations,
      actions,
      mentalStates,
      events: result.events,
      exogenous: step.narration !== undefined ? exogenous : undefined,
      rewards: result.rewards,
    });
    state = result.state;
  }
  return { world: world.name, seed, agents, steps, turns, finalState: state, returns, end: "terminal" };
}

const NO_EVENTS: readonly never[] = [];

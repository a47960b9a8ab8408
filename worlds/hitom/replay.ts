/** Plays a Hi-ToM story through the game loop: the episode, its socialized context and the final state. */
import { ScriptedAgent } from "../core/scripted-agent.js";
import type { Agent } from "../core/agent.js";
import type { Episode, TimestepRecord } from "../core/episode.js";
import { InvalidActionError, runEpisode, type Director } from "../core/loop.js";
import { toSocializedContext } from "../core/socialize.js";
import type { SocializedContext } from "../core/socialized-context.js";
import type { HitomRules } from "./rules.js";
import type { HitomScenario, Locate } from "./story.js";
import { HitomWorld, initialHitomState, type HitomAction, type HitomNarration, type HitomState } from "./world.js";

export const hitomWorld = new HitomWorld();

export interface HitomReplay {
  readonly episode: Episode<HitomState>;
  readonly context: SocializedContext;
}

export interface ReplayOptions {
  /** Write `<mental_state>` beliefs into the socialized context (default true). */
  readonly mentalStates?: boolean;
  /** Play under other belief-update rules (reproducing a generator's errors). */
  readonly rules?: HitomRules;
  readonly onTimestep?: (record: TimestepRecord, state: HitomState) => void | Promise<void>;
}

/**
 * The script cast as agents: each agent plays its own steps (several act at once when a group
 * enters), and a director speaks the narrator's sentences.
 */
function cast(state: HitomState, scenario: HitomScenario): { agents: Record<string, Agent<HitomAction>>; director: Director<HitomState, HitomNarration> } {
  const byAgent = new Map<string, Map<number, HitomAction>>();
  scenario.script.forEach((step, i) => {
    for (const [agent, action] of Object.entries(step.actions ?? {})) {
      let m = byAgent.get(agent);
      if (!m) byAgent.set(agent, (m = new Map()));
      m.set(i + 1, action);
    }
  });
  const agents: Record<string, Agent<HitomAction>> = {};
  for (const name of state.agents) agents[name] = new ScriptedAgent(byAgent.get(name) ?? new Map(), hitomWorld.noop());
  const director: Director<HitomState, HitomNarration> = {
    exogenous: (_s, t) => {
      const n = scenario.script[t - 1]?.narration;
      return n === undefined ? [] : [n];
    },
    done: (_s, t) => t > scenario.script.length,
  };
  return { agents, director };
}

export async function replayHitom(scenario: HitomScenario, locate: Locate, opts: ReplayOptions = {}): Promise<HitomReplay> {
  const state = initialHitomState({ ...scenario.init, ...(opts.rules ? { rules: opts.rules } : {}) });
  const { agents, director } = cast(state, scenario);
  const mentalStates = opts.mentalStates ?? true;
  let episode: Episode<HitomState>;
  try {
    episode = await runEpisode(hitomWorld, {
      seed: 0,
      initialState: state,
      agents,
      director,
      strict: true,
      mentalStates,
      ...(opts.onTimestep ? { onTimestep: opts.onTimestep } : {}),
    });
  } catch (err) {
    if (err instanceof InvalidActionError) {
      const step = scenario.script[err.timestep - 1];
      throw locate(step?.line ?? 0, `"${step?.text ?? "?"}": ${err.reason}`);
    }
    throw err;
  }
  return { episode, context: toSocializedContext(episode, { mentalStates }) };
}

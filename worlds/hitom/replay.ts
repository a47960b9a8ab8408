/** Plays a Hi-ToM story through the game loop: the episode, its socialized context and the final state. */
import type { Episode, TimestepRecord } from "../core/episode.js";
import { InvalidActionError, runEpisode } from "../core/loop.js";
import { castGroupScript } from "../core/script.js";
import { toSocializedContext } from "../core/socialize.js";
import type { SocializedContext } from "../core/socialized-context.js";
import type { HitomRules } from "./rules.js";
import type { HitomScenario, Locate } from "./story.js";
import { HitomWorld, initialHitomState, type HitomState } from "./world.js";

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

export async function replayHitom(scenario: HitomScenario, locate: Locate, opts: ReplayOptions = {}): Promise<HitomReplay> {
  const state = initialHitomState({ ...scenario.init, ...(opts.rules ? { rules: opts.rules } : {}) });
  const { agents, director } = castGroupScript(hitomWorld, state, scenario.script);
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

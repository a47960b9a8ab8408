/** Plays a ToMi story through the game loop: the episode, its socialized context and the final state. */
import { DataError } from "../core/errors.js";
import type { Episode, TimestepRecord } from "../core/episode.js";
import { InvalidActionError, runEpisode } from "../core/loop.js";
import { castScript, playScript } from "../core/script.js";
import { toSocializedContext } from "../core/socialize.js";
import type { SocializedContext } from "../core/socialized-context.js";
import type { TomiScenario } from "./story.js";
import { initialTomiState, TomiWorld, type TomiState } from "./world.js";

export const tomiWorld = new TomiWorld();

export interface TomiReplay {
  readonly episode: Episode<TomiState>;
  readonly context: SocializedContext;
}

export interface ReplayOptions {
  /** Write `<mental_state>` beliefs into the socialized context (default true). */
  readonly mentalStates?: boolean;
  /** Called after each timestep (the terminal demo paces and prints the story with it). */
  readonly onTimestep?: (record: TimestepRecord, state: TomiState) => void | Promise<void>;
}

export async function replayTomi(scenario: TomiScenario, file: string, opts: ReplayOptions = {}): Promise<TomiReplay> {
  const state = initialTomiState(scenario.init);
  let episode: Episode<TomiState>;
  try {
    // Without a per-timestep callback there is nothing to wait for: fold the script directly.
    if (!opts.onTimestep) {
      episode = playScript(tomiWorld, state, scenario.script, { mentalStates: opts.mentalStates ?? true });
      return { episode, context: toSocializedContext(episode, { mentalStates: opts.mentalStates ?? true }) };
    }
    const { agents, director } = castScript(tomiWorld, state, scenario.script);
    episode = await runEpisode(tomiWorld, {
      seed: 0,
      initialState: state,
      agents,
      director,
      strict: true,
      mentalStates: opts.mentalStates ?? true,
      ...(opts.onTimestep ? { onTimestep: opts.onTimestep } : {}),
    });
  } catch (err) {
    if (err instanceof InvalidActionError) {
      const step = scenario.script[err.timestep - 1];
      throw new DataError(file, { line: step?.line ?? 0 }, `"${step?.text ?? "?"}": ${err.reason}`);
    }
    throw err;
  }
  return { episode, context: toSocializedContext(episode, { mentalStates: opts.mentalStates ?? true }) };
}

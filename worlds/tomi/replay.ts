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

/** The story as a pure fold (synchronous, see playScript): the benchmark's and the simulation agent's replays. */
export function playTomi(scenario: TomiScenario, file: string, opts: { readonly mentalStates?: boolean } = {}): TomiReplay {
  const mentalStates = opts.mentalStates ?? true;
  try {
    const episode = playScript(tomiWorld, initialTomiState(scenario.init), scenario.script, { mentalStates });
    return { episode, context: toSocializedContext(episode, { mentalStates }) };
  } catch (err) {
    throw asDataError(err, scenario, file);
  }
}

/** The story through the game loop, with a callback per timestep (to pace and show it). */
export async function replayTomi(scenario: TomiScenario, file: string, opts: ReplayOptions = {}): Promise<TomiReplay> {
  if (!opts.onTimestep) return playTomi(scenario, file, opts);
  const state = initialTomiState(scenario.init);
  let episode: Episode<TomiState>;
  try {
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
    throw asDataError(err, scenario, file);
  }
  return { episode, context: toSocializedContext(episode, { mentalStates: opts.mentalStates ?? true }) };
}

/** A step the world refuses is bad data: name the story line. */
function asDataError(err: unknown, scenario: TomiScenario, file: string): unknown {
  if (!(err instanceof InvalidActionError)) return err;
  const step = scenario.script[err.timestep - 1];
  return new DataError(file, { line: step?.line ?? 0 }, `"${step?.text ?? "?"}": ${err.reason}`);
}

/** Plays a FANToM conversation through the game loop: its episode, socialized context and final state. */
import { DataError } from "../core/errors.js";
import type { Episode, TimestepRecord } from "../core/episode.js";
import { InvalidActionError, runEpisode } from "../core/loop.js";
import { castScript } from "../core/script.js";
import { toSocializedContext } from "../core/socialize.js";
import type { SocializedContext } from "../core/socialized-context.js";
import { inferPresence, type Presence, type Utterance } from "./conversation.js";
import { FantomWorld, initialFantomState, type FantomAction, type FantomState } from "./world.js";

export const fantomWorld = new FantomWorld();

export interface FantomReplay {
  readonly episode: Episode<FantomState>;
  readonly context: SocializedContext;
  readonly presence: Presence;
}

export interface ReplayOptions {
  /** Fact id -> statement, and the facts each utterance conveys (by utterance index). */
  readonly facts?: Readonly<Record<string, string>>;
  readonly factsByUtterance?: ReadonlyMap<number, readonly string[]>;
  readonly joiningSpeaker?: string;
  /** Write `<mental_state>` knowledge into the socialized context (default true). */
  readonly mentalStates?: boolean;
  /** Where the conversation came from, for error messages. */
  readonly file?: string;
  readonly field?: string;
  readonly onTimestep?: (record: TimestepRecord, state: FantomState) => void | Promise<void>;
}

export async function replayConversation(utts: readonly Utterance[], opts: ReplayOptions = {}): Promise<FantomReplay> {
  const presence = inferPresence(utts, {
    ...(opts.joiningSpeaker !== undefined ? { joiningSpeaker: opts.joiningSpeaker } : {}),
    ...(opts.factsByUtterance ? { facts: opts.factsByUtterance } : {}),
  });
  const state = initialFantomState({ characters: presence.characters, present: presence.initiallyPresent, facts: opts.facts ?? {} });
  const script = presence.steps.map((s) => ({ actor: s.actor, action: s.action as FantomAction }));
  const { agents, director } = castScript(fantomWorld, state, script);
  let episode: Episode<FantomState>;
  try {
    episode = await runEpisode(fantomWorld, {
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
      const step = presence.steps[err.timestep - 1];
      const u = step ? utts[step.utterance] : undefined;
      throw new DataError(opts.file ?? "conversation", { field: `${opts.field ?? "context"} line ${u?.line ?? "?"}` }, err.reason);
    }
    throw err;
  }
  return { episode, context: toSocializedContext(episode, { mentalStates: opts.mentalStates ?? true }), presence };
}

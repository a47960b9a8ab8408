/**
 * The recommendation world as the game loop plays it (a live room): one user, one recommender.
 * Each timestep the recommender sees the user's history and the recallers' candidates and answers
 * with a ranked list of MovieIDs; the user then watches their next film (the generated user's own
 * next choice, which nobody sees before it happens) and the recommender's reward is NDCG@10 (and
 * HR@10) of the list against it. The episode ends when the user's held-out films are watched.
 *
 * The state carries everything as plain data (films, the candidates of each timestep computed
 * when the episode was made: scenario.ts), so a step is pure and an episode replays from its
 * seed and its actions.
 */
import { z } from "zod";
import type { Observation, StepResult, World, WorldEvent } from "../core/world.js";
import type { Movie } from "./dataset.js";
import { hitAt, ndcgAt } from "./metrics.js";
import { HISTORY_SHOWN } from "./prompts.js";

export const RECOMMENDER = "recommender";
/** The cut-off of the room's NDCG@k and HR@k, and the most films a list may name. */
export const ROOM_K = 10;

/** What the user watched at one timestep, and how the recommender's list placed it. */
export interface RecStepScore {
  readonly timestep: number;
  /** The recommended MovieIDs, best first. */
  readonly ranked: readonly number[];
  readonly watched: number;
  readonly ndcg: number;
  readonly hr: number;
}

export interface RecRoomState {
  /** The generated user's UserID. */
  readonly user: number;
  /** Films watched so far, oldest first. */
  readonly history: readonly Movie[];
  /** The films the user will watch, one per timestep: hidden from the recommender until watched. */
  readonly upcoming: readonly Movie[];
  /** Per timestep, the recallers' merged top films not yet watched (what the recommender is shown). */
  readonly candidates: readonly (readonly Movie[])[];
  /** Timesteps done. */
  readonly t: number;
  readonly scores: readonly RecStepScore[];
}

/**
 * A ranked list of up to ROOM_K MovieIDs; the empty list is the no-op (recommends nothing). A film
 * named again is allowed and wastes its place: only its first place counts (metrics.ts). Refusing
 * it instead would be a rule the decoding grammar cannot enforce (it would have to remember every
 * number written), so constrained decoding could not keep a policy's lists valid, and a policy
 * seat would fall back on every list that repeats a film.
 */
export const RecListSchema = z.object({ items: z.array(z.number().int().min(0)).max(ROOM_K) }).strict();
export type RecList = z.infer<typeof RecListSchema>;

/** What the recommender's observation carries for programs (the scripted agent, the web client). */
export interface RecObservationData {
  readonly history: readonly Movie[];
  readonly candidates: readonly Movie[];
}

const film = (m: Movie) => `${m.title} [${m.genres.join(", ")}]`;

export class RecWorld implements World<RecRoomState, RecList> {
  readonly name = "rec";

  agents(): readonly string[] {
    return [RECOMMENDER];
  }

  actionSchema(): z.ZodType<RecList> {
    return RecListSchema;
  }

  noop(): RecList {
    return { items: [] };
  }

  isNoop(action: RecList): boolean {
    return action.items.length === 0;
  }

  observe(state: RecRoomState, agent: string): Observation {
    if (agent !== RECOMMENDER || this.isTerminal(state)) return { text: "" };
    const recent = state.history.slice(-HISTORY_SHOWN);
    const candidates = state.candidates[state.t]!;
    const data: RecObservationData = { history: recent, candidates };
    const text = [
      `User ${state.user} has watched ${state.history.length} films; the last ${recent.length}, oldest first:`,
      ...recent.map((m) => `- ${film(m)}`),
      "",
      "The recallers suggest (MovieID: film):",
      ...candidates.map((m) => `${m.id}: ${film(m)}`),
      "",
      `Recommend up to ${ROOM_K} films the user has not watched, best first: reply with JSON only, {"items": [MovieID, ...]}. The reward is NDCG@${ROOM_K} of the film the user watches next.`,
    ].join("\n");
    return { text, data };
  }

  describe(state: RecRoomState): string {
    const last = state.scores.at(-1);
    const watched = `user ${state.user} has watched ${state.history.length} films, the last ${state.history.at(-1)?.title ?? "none"}`;
    if (!last) return watched;
    const mean = state.scores.reduce((a, s) => a + s.ndcg, 0) / state.scores.length;
    return `${watched}; NDCG@${ROOM_K} ${last.ndcg.toFixed(3)} this step, ${mean.toFixed(3)} over ${state.scores.length}`;
  }

  renderAction(state: RecRoomState, _agent: string, action: RecList): string {
    if (action.items.length === 0) return "none";
    const byId = shown(state);
    return `recommends ${action.items.map((id) => byId.get(id)?.title ?? `MovieID ${id}`).join("; ")}`;
  }

  isTerminal(state: RecRoomState): boolean {
    return state.t >= state.upcoming.length;
  }

  /** Spectators' plot: each timestep's NDCG@10 and HR@10 so far, and the last list with the film watched. */
  view(state: RecRoomState): { ndcg: number[]; hr: number[]; last: RecStepScore | null } {
    return { ndcg: state.scores.map((s) => s.ndcg), hr: state.scores.map((s) => s.hr), last: state.scores.at(-1) ?? null };
  }

  step(state: RecRoomState, actions: ReadonlyMap<string, RecList>): StepResult<RecRoomState> {
    const ranked = actions.get(RECOMMENDER)?.items ?? [];
    const watched = state.upcoming[state.t]!;
    const relevant = new Set([watched.id]);
    const score: RecStepScore = { timestep: state.t + 1, ranked, watched: watched.id, ndcg: ndcgAt(ranked, relevant, ROOM_K), hr: hitAt(ranked, relevant, ROOM_K) };
    const rank = ranked.indexOf(watched.id);
    const event: WorldEvent = {
      text: `User ${state.user} watches ${film(watched)}: ${rank >= 0 ? `number ${rank + 1} of the list` : "not on the list"} (NDCG@${ROOM_K} ${score.ndcg.toFixed(3)}).`,
      observers: [RECOMMENDER],
      data: score,
    };
    const next: RecRoomState = { ...state, history: [...state.history, watched], t: state.t + 1, scores: [...state.scores, score] };
    return { state: next, events: [event], rewards: { [RECOMMENDER]: score.ndcg } };
  }
}

/**
 * MovieID -> film, of the films the recommender has been shown (the history and this timestep's
 * candidates), once per state. Only those get titles in a rendered list: a title for any other
 * MovieID would tell a seat that the user is about to watch it.
 */
const shownFilms = new WeakMap<RecRoomState, Map<number, Movie>>();

function shown(state: RecRoomState): Map<number, Movie> {
  let map = shownFilms.get(state);
  if (!map) {
    map = new Map();
    for (const m of [...state.history, ...(state.candidates[state.t] ?? [])]) map.set(m.id, m);
    shownFilms.set(state, map);
  }
  return map;
}

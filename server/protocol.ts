/**
 * The room protocol: room names, join options, the messages exchanged with a room, and the shapes
 * of the synchronized state and of the API's answers as clients see them. Types and constants
 * only, so the web client imports this file as it is (its types come from the server's own).
 * docs/protocol.md documents the same for clients in other languages.
 */
import type { ToJSON } from "@colyseus/schema";
import type { FeedItem, SocialRoomState } from "./rooms/social-state.js";
import type { PerspectiveStep, Progress, QuizScore, RoomState, Seat } from "./rooms/state.js";

export const ROOM_TYPES = ["simulation", "benchmark", "social"] as const;
export type RoomType = (typeof ROOM_TYPES)[number];

/** Options a client passes when it joins a room (`joinById(roomId, options)`). */
export interface JoinOptions {
  /** Take this agent's seat (a seat a person may take); absent: join as a spectator. */
  seat?: string;
  /** A seat token (to take a private room's seat, or to come back to one's seat), or a private room's spectator token. */
  token?: string;
  /** The person's display name, shown on the seat. */
  name?: string;
}

/** Client -> server message types. */
export const C2S = {
  /** `{ action, timestep? }`: the seated person's action for the current turn. */
  act: "act",
  /** `{ episode, id, answer }`: the seated person's answer to one of its quiz questions (the first answer counts). */
  quizAnswer: "quiz_answer",
} as const;

/** Server -> client message types. */
export const S2C = {
  /** Sent to a seated client when it gets (or comes back to) its seat. */
  seat: "seat",
  /** Sent to a seated client when its agent must act. */
  turn: "turn",
  /** Sent to a seated client when its turn is over (acted, timed out, or the episode moved on). */
  turnOver: "turn_over",
  /** The answer to every `act` message. */
  actionResult: "action_result",
  /** Sent to a seated client at an episode's end: its own quiz questions (a room with `quiz`). */
  quiz: "quiz",
  /** The answer to every `quiz_answer` message. */
  quizAnswerResult: "quiz_answer_result",
  /** Sent to a seated client when its quiz closes: its score and, now, the labels. */
  quizResult: "quiz_result",
  /** A message the room could not use (unknown type, bad payload). */
  error: "error",
} as const;

/** A social room's own client -> server messages. */
export const SOCIAL_C2S = {
  /** `{ user }`: that user's view (what they have seen and written). A spectator may ask for any user; a person, for their own. */
  perspective: "perspective",
  /** `{ content, topic? }`: the seated person's new post, published at the next timestep. */
  post: "post",
} as const;

/** A social room's own server -> client messages. */
export const SOCIAL_S2C = {
  /** The answer to `perspective`. */
  perspective: "perspective",
  /** The answer to `post`. */
  postResult: "post_result",
} as const;

export interface PerspectiveRequest {
  readonly user: string;
}

/** A user's view: the items they have seen or written, in the order they reached them (at most the newest 2,000). */
export type PerspectiveView =
  | { readonly ok: true; readonly user: string; readonly time: number; readonly items: readonly FeedItemJson[]; readonly truncated: boolean }
  | { readonly ok: false; readonly user: string; readonly error: string };

export interface PostMessage {
  readonly content: string;
  /** A topic key (default: what the user cares about most). */
  readonly topic?: string;
}

export type PostResultMessage = { readonly ok: true } | { readonly ok: false; readonly error: string };

export interface SeatMessage {
  readonly agent: string;
  /** Present this token (join option `token`) to come back to the seat after a dropped connection or a reload. */
  readonly token: string;
  readonly roomId: string;
}

export interface TurnMessage {
  readonly agent: string;
  readonly timestep: number;
  readonly observation: { readonly text: string; readonly sameAsState: boolean; readonly data?: unknown };
  readonly mentalState: string;
  /** JSON Schema (draft 2020-12) of a valid action, from the world's zod schema. */
  readonly actionSchema: unknown;
  /** Every valid action, when the world can list them. */
  readonly options?: readonly unknown[];
  /** The action that does nothing. */
  readonly noop: unknown;
  /** Epoch milliseconds after which the seat's controller acts instead (absent: no deadline). */
  readonly deadline?: number;
}

export interface TurnOverMessage {
  readonly agent: string;
  readonly timestep: number;
  /** "human" when the person's action was taken, "timeout" or "ended" otherwise. */
  readonly outcome: "human" | "timeout" | "ended";
}

export interface ActMessage {
  readonly action: unknown;
  /** The turn this action answers; an action for an earlier turn is refused. */
  readonly timestep?: number;
}

export type ActionResultMessage =
  | { readonly ok: true; readonly timestep: number }
  | { readonly ok: false; readonly error: string; readonly timestep?: number };

export interface QuizMessage {
  readonly episode: number;
  readonly agent: string;
  /** The episode's story, as the benchmark's file tells it. */
  readonly story: string;
  readonly questions: readonly { readonly id: number; readonly type: string; readonly question: string; readonly choices?: readonly string[] }[];
  /** Epoch milliseconds when the quiz closes; unanswered questions count as wrong. */
  readonly deadline: number;
}

export interface QuizAnswerMessage {
  readonly episode: number;
  readonly id: number;
  readonly answer: string;
}

export type QuizAnswerResultMessage = { readonly ok: true; readonly id: number } | { readonly ok: false; readonly error: string; readonly id?: number };

export interface QuizResultMessage {
  readonly episode: number;
  readonly agent: string;
  readonly asked: number;
  readonly correct: number;
  readonly questions: readonly { readonly id: number; readonly type: string; readonly question: string; readonly label: string; readonly answer: string; readonly correct: boolean }[];
}

export interface ErrorMessage {
  readonly error: string;
}

/**
 * A room's synchronized state as a client holds it (`room.state.toJSON()`), typed from the schema
 * the server encodes (rooms/state.ts): what the server adds to the state, clients see in their types.
 */
export type RoomStateJson = ToJSON<RoomState>;
export type SeatJson = ToJSON<Seat>;
export type PerspectiveStepJson = ToJSON<PerspectiveStep>;
export type ProgressJson = ToJSON<Progress>;
export type SocialRoomStateJson = ToJSON<SocialRoomState>;
export type FeedItemJson = ToJSON<FeedItem>;
export type QuizScoreJson = ToJSON<QuizScore>;

/** A live room as `GET /api/rooms` lists it. */
export interface RoomSummary {
  readonly roomId: string;
  readonly type: RoomType;
  readonly title: string;
  readonly world: string;
  readonly status: string;
  readonly note: string;
  readonly visibility: "public" | "private";
  readonly runId: string;
  readonly episode: number;
  readonly timestep: number;
  readonly spectators: number;
  /** `occupied`: a person holds the seat; `connected`: and is connected now (false while the seat waits for them to reconnect). */
  readonly seats: readonly { agent: string; controller: string; human: boolean; occupied: boolean; connected: boolean }[];
  readonly progress?: { done: number; total: number; correct: number };
  readonly createdAt: string;
}

/** One episode's leak audit (`GET /api/runs/ID/episodes/N/audit`) and a leak it found. */
export type { RecordAudit as EpisodeAudit } from "./run-audit.js";
export type { Leak } from "../worlds/core/leak-audit.js";

/** Training runs as `GET /api/training` and the progress stream's "trainer" events carry them (one type, the board's). */
export type { HeldOutPoint, QuizAccuracyPoint, TrainingMetrics, TrainingRun } from "./training-board.js";

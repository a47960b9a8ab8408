/**
 * The room protocol beyond the synchronized state: room names, join options and the messages
 * exchanged with a room. Types and constants only (the web client imports this file too).
 * The README's "Live server protocol" section documents the same for clients in other languages.
 */

export const ROOM_TYPES = ["simulation", "benchmark"] as const;
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
  /** A message the room could not use (unknown type, bad payload). */
  error: "error",
} as const;

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

export interface ErrorMessage {
  readonly error: string;
}

/**
 * One step's metrics of a training run, as `GET /api/training` and the socket.io `progress`
 * events of kind "trainer" carry them (trainers/grpo/metrics.ts; the server's StepMetricsSchema
 * in training-board.ts lists every field it keeps).
 */
export interface TrainingMetrics {
  step: number;
  reward: number;
  accuracy: number;
  kl: number | null;
  entropy: number;
  clipFraction: number;
  loss: number;
  responseLength: number;
  [field: string]: unknown;
}

/** A training run on the dashboard, as `GET /api/training` lists it. */
export interface TrainingRun<M extends TrainingMetrics = TrainingMetrics> {
  readonly runId: string;
  title: string;
  source: string;
  steps: number;
  status: "running" | "done" | "interrupted" | "failed";
  /** Rooms whose policy the run trains (self-play). */
  roomIds: string[];
  /** Self-play: the round, and the checkpoint the rooms now play. */
  round?: number;
  checkpoint?: string;
  readonly startedAt: string;
  updatedAt: string;
  history: M[];
}

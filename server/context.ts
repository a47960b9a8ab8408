/**
 * What the rooms and the API share in one server process: the run store, the progress hub, the
 * folders benchmark files may be read from, and the live rooms. Colyseus creates rooms itself, so
 * they find this through `serverContext()` rather than through their options (which clients send).
 */
import type { RunStore } from "../store/run-store.js";
import type { ReservationOutcome } from "./group/reservation-outcome.js";
import type { ProcessGroup } from "./group/process-group.js";
import type { RoomSummary } from "./protocol.js";
import type { PersistedRooms } from "./room-registry.js";
import type { ClientGuard } from "./security/client-guard.js";
import type { ProgressHub } from "./progress-hub.js";
import type { SelfPlayPools } from "./self-play/pools.js";
import type { TrainingBoard } from "./training-board.js";

/** A join the room accepted at reservation time (matchmake-gate.ts), as its onAuth would. */
export interface ScreenedJoin {
  readonly role: "spectator" | "seat";
  readonly index?: number;
}

export interface LiveRoom {
  readonly roomId: string;
  summary(): RoomSummary;
  /**
   * Checks join options before a seat is reserved (tokens, seat rules, the address's caps); throws
   * as onAuth does. What it returns holds the reservation's place in the caps until `reserved`.
   */
  screenReservation(options: unknown, address: string, seatsElsewhere?: number): ScreenedJoin & { readonly hold: string };
  /** The reservation held by `hold` was made for `sessionId` (undefined: it failed, the hold is dropped). */
  reserved(hold: string, sessionId: string | undefined): void;
  /** Screens then reserves (the matchmaking gate; possibly for another process of the group): a refusal as a value. */
  reserveScreened(options: Record<string, unknown>, address: string): Promise<ReservationOutcome>;
  /** The episode it plays, and the server instance that opens its quizzes. */
  quizView(): { episode: number; server: string };
  /** Seats of this room held or reserved from `address` (public rooms only). */
  seatsHeldBy(address: string): number;
  /** Stops the room: its episode or run is interrupted and logged, its clients are disconnected. */
  stop(reason: string): Promise<void>;
}

export interface ServerContext {
  readonly store: RunStore;
  readonly hub: ProgressHub;
  /** Absolute folders a benchmark room may read data files from. */
  readonly dataRoots: readonly string[];
  readonly rooms: Map<string, LiveRoom>;
  /** Training runs and their metrics (the dashboard). */
  readonly training: TrainingBoard;
  /** Self-play: the policies rooms train together, by pool. */
  readonly selfPlay: SelfPlayPools;
  /** Each client's limits: reservations, messages, seats, back-off (security/client-guard.ts). */
  readonly guard: ClientGuard;
  /** Rooms created through the API, kept in the store so that they come back after a restart. */
  readonly persisted: PersistedRooms;
  /** The group of processes this one belongs to (`serve --redis`); undefined: a process alone. */
  readonly group?: ProcessGroup;
}

/** Seats held or reserved from `address` in all rooms. */
export function seatsHeldBy(ctx: ServerContext, address: string): number {
  let n = 0;
  for (const room of ctx.rooms.values()) n += room.seatsHeldBy(address);
  return n;
}

let current: ServerContext | undefined;

export function setServerContext(ctx: ServerContext | undefined): void {
  current = ctx;
}

/** Whether a server of this process is running (Colyseus's matchmaker is one per process). */
export function hasServerContext(): boolean {
  return current !== undefined;
}

export function serverContext(): ServerContext {
  if (!current) throw new Error("the socialworld server is not running (no server context)");
  return current;
}

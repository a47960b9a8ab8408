/**
 * What the rooms and the API share in one server process: the run store, the progress hub, the
 * folders benchmark files may be read from, and the live rooms. Colyseus creates rooms itself, so
 * they find this through `serverContext()` rather than through their options (which clients send).
 */
import type { RunStore } from "../store/run-store.js";
import type { RoomSummary } from "./protocol.js";
import type { ProgressHub } from "./progress-hub.js";
import type { SelfPlayPools } from "./self-play/pools.js";
import type { TrainingBoard } from "./training-board.js";

export interface LiveRoom {
  readonly roomId: string;
  summary(): RoomSummary;
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

/**
 * The rooms of every process of the group, as the REST API and matchmaking reach them. A room
 * lives in one process; another process finds it in Colyseus's driver (the room listings in
 * Redis) and calls it there through Colyseus's presence (`matchMaker.remoteRoomCall`, which
 * invokes a method of the room in its own process). A process alone has only its own rooms,
 * and nothing here touches Redis.
 *
 * Calls between processes keep only an error's message, so a room answers a reservation with a
 * value (ReservationOutcome) that says how it was refused, and the asking process raises it as
 * the room would have.
 */
import { matchMaker, ServerError, type IRoomCache } from "@colyseus/core";
import type { LiveRoom, ServerContext } from "../context.js";
import type { RoomSummary } from "../protocol.js";
import { Refused } from "../security/client-guard.js";
import type { ReservationOutcome, SeatReservation } from "./reservation-outcome.js";

export type { ReservationOutcome, SeatReservation } from "./reservation-outcome.js";

/** A refusal as a value that crosses processes (anything but ServerError and Refused is thrown on). */
export function refusalOutcome(err: unknown): ReservationOutcome {
  if (err instanceof ServerError) return { ok: false, code: err.code, message: err.message };
  if (err instanceof Refused) return { ok: false, status: err.status, message: err.message, ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) };
  throw err;
}

/** The reservation, or the refusal thrown as the room threw it. */
export function reservationOf(outcome: ReservationOutcome): SeatReservation {
  if (outcome.ok) return outcome.reservation;
  if ("code" in outcome) throw new ServerError(outcome.code, outcome.message);
  throw new Refused(outcome.status, outcome.message, outcome.retryAfterMs);
}

/** The listing of a room of another process of the group (undefined: no such room, or no group). */
export async function remoteListing(ctx: ServerContext, roomId: string): Promise<IRoomCache | undefined> {
  if (!ctx.group || ctx.rooms.has(roomId)) return undefined;
  const listing = await matchMaker.getRoomById(roomId);
  return listing && listing.processId !== matchMaker.processId ? listing : undefined;
}

/** Calls `method` of a room of another process; undefined when that process does not answer (it is gone). */
async function callRemote<T>(listing: IRoomCache, method: string, args: unknown[] = []): Promise<T | undefined> {
  try {
    return (await matchMaker.remoteRoomCall(listing.roomId, method, args)) as T;
  } catch {
    // Colyseus checks the process, and drops its listings if it is gone.
    void matchMaker.healthCheckProcessId(listing.processId);
    return undefined;
  }
}

/** Every room of the group (this process's first), as `GET /api/rooms` lists them. */
export async function roomSummaries(ctx: ServerContext): Promise<RoomSummary[]> {
  const local = [...ctx.rooms.values()].map((room) => room.summary());
  if (!ctx.group) return local;
  const others = (await matchMaker.query({})).filter((l) => l.processId !== matchMaker.processId && !ctx.rooms.has(l.roomId));
  const remote = await Promise.all(others.map((l) => callRemote<RoomSummary>(l, "summary")));
  return [...local, ...remote.filter((s): s is RoomSummary => s !== undefined)];
}

/** One room of the group. */
export async function roomSummary(ctx: ServerContext, roomId: string): Promise<RoomSummary | undefined> {
  const room = ctx.rooms.get(roomId);
  if (room) return room.summary();
  const listing = await remoteListing(ctx, roomId);
  return listing ? callRemote<RoomSummary>(listing, "summary") : undefined;
}

/** Stops a room of the group; false when there is no such room. */
export async function stopRoom(ctx: ServerContext, roomId: string, reason: string): Promise<boolean> {
  const room = ctx.rooms.get(roomId);
  if (room) {
    await room.stop(reason);
    return true;
  }
  const listing = await remoteListing(ctx, roomId);
  if (!listing) return false;
  await callRemote(listing, "stop", [reason]);
  return true;
}

/** Reserves a seat in a room of the group, screened by the room itself (base-room.ts); undefined: no such room. */
export async function reserveSeat(ctx: ServerContext, roomId: string, options: Record<string, unknown>, address: string): Promise<SeatReservation | undefined> {
  const room: LiveRoom | undefined = ctx.rooms.get(roomId);
  if (room) return reservationOf(await room.reserveScreened(options, address));
  const listing = await remoteListing(ctx, roomId);
  if (!listing) return undefined;
  const outcome = await callRemote<ReservationOutcome>(listing, "reserveScreened", [options, address]);
  if (!outcome) throw new Refused(503, `the process hosting room "${roomId}" does not answer; try again in a few seconds`, 3000);
  return reservationOf(outcome);
}

/** Whether a room of this id is anywhere in the group. */
export async function roomExists(ctx: ServerContext, roomId: string): Promise<boolean> {
  return ctx.rooms.has(roomId) || (await remoteListing(ctx, roomId)) !== undefined;
}

/** The live room of run `runId` anywhere in the group: its episode and its server instance (security/open-quizzes.ts). */
export async function liveRoomOfRun(ctx: ServerContext, runId: string): Promise<{ episode: number; server: string } | undefined> {
  for (const room of ctx.rooms.values()) if (room.summary().runId === runId) return room.quizView();
  if (!ctx.group) return undefined;
  const listing = (await matchMaker.query({})).find((l) => l.processId !== matchMaker.processId && (l.metadata as { runId?: unknown } | undefined)?.runId === runId);
  if (!listing) return undefined;
  // A process that does not answer is gone, and its quizzes' deadlines decide (as after a restart).
  return callRemote<{ episode: number; server: string }>(listing, "quizView");
}

/**
 * A seat reservation, and how a room answers one when another process of the group asks: calls
 * between processes keep only an error's message, so a refusal travels as a value (group-rooms.ts
 * raises it again as the room would have). Types only: the server's context names them too.
 */

/** A seat reservation as Colyseus's matchmaking answers it (the SDK connects with it). */
export interface SeatReservation {
  readonly name: string;
  readonly sessionId: string;
  readonly roomId: string;
  readonly processId: string;
  readonly publicAddress?: string;
}

export type ReservationOutcome =
  | { readonly ok: true; readonly reservation: SeatReservation }
  | { readonly ok: false; readonly code: number; readonly message: string }
  | { readonly ok: false; readonly status: number; readonly message: string; readonly retryAfterMs?: number };

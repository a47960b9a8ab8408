/**
 * The limits one server puts on each client, kept by the server (not by the connection), so that
 * reconnecting resets nothing:
 *
 * - seat reservations (`POST /matchmake/...`) per address: a rate with a burst, and a cap on the
 *   reservations an address holds unused in one room (rooms count those, base-room.ts);
 * - room messages per address and per seat token: a rate with a burst. A client that keeps
 *   sending past its rate is cut off, and its address and seat token may not join or reconnect
 *   for a back-off that doubles on each repeat;
 * - seats: an address holds at most `seatsPerAddress` seats of public rooms at once (a private
 *   room's seats are taken with the tokens its creator handed out, and are not counted);
 *
 * In a group of processes the reservation rate and the seats are counted over all of them
 * (`shared`, group/shared-limits.ts); messages are counted where the client is connected, which
 * is one process per room.
 * - spectators: at most `spectatorsPerRoom` per room, reservations included. A seat is never
 *   refused for want of room: people in seats do not compete with watchers.
 */
import { z } from "zod";
import { PenaltyBox, TokenBuckets, type Verdict } from "./rate-limit.js";

export const ClientLimitsSchema = z.object({
  reservationBurst: z.number().int().min(1).default(20),
  reservationsPerSecond: z.number().positive().default(2),
  /** Reservations one address may hold unused in one room (they expire after 15 s). */
  pendingPerAddress: z.number().int().min(1).default(8),
  seatsPerAddress: z.number().int().min(1).default(4),
  spectatorsPerRoom: z.number().int().min(1).default(2000),
  /** Room messages per seat token (a person sends a few actions a minute). */
  seatMessageBurst: z.number().int().min(1).default(20),
  seatMessagesPerSecond: z.number().positive().default(5),
  /** Room messages per address, over all its connections. */
  addressMessageBurst: z.number().int().min(1).default(60),
  addressMessagesPerSecond: z.number().positive().default(30),
  /** Refused messages within 10 s after which the client is cut off and backs off. */
  refusedBeforeCutoff: z.number().int().min(1).default(20),
});
export type ClientLimits = z.infer<typeof ClientLimitsSchema>;
export type ClientLimitsInput = z.input<typeof ClientLimitsSchema>;

const REFUSAL_WINDOW_MS = 10_000;

export type MessageVerdict = { readonly kind: "ok" } | { readonly kind: "drop"; readonly retryAfterMs: number } | { readonly kind: "cut"; readonly blockedMs: number };

/**
 * The caps' counts shared by a group of processes (group/shared-limits.ts: in its Redis), so that
 * a client spreading its requests over several processes is counted once.
 */
export interface SharedCounts {
  /** A reservation from `address`, within the group-wide rate. */
  reservation(address: string): Promise<Verdict>;
  /** Seats of public rooms held or reserved from `address` in the group's other processes. */
  seatsElsewhere(address: string): Promise<number>;
  /** This process's seats of `address` changed (a reservation was made). */
  seatsChanged(address: string): Promise<void>;
}

export const addressKey = (address: string) => `address:${address}`;
export const seatKey = (token: string) => `seat:${token}`;

export class ClientGuard {
  readonly limits: ClientLimits;
  private readonly reservations: TokenBuckets;
  private readonly seatMessages: TokenBuckets;
  private readonly addressMessages: TokenBuckets;
  readonly penalties: PenaltyBox;
  private readonly refusals = new Map<string, { count: number; since: number }>();

  constructor(
    limits: ClientLimitsInput = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = ClientLimitsSchema.parse(limits);
    const l = this.limits;
    this.reservations = new TokenBuckets(l.reservationBurst, l.reservationsPerSecond, now);
    this.seatMessages = new TokenBuckets(l.seatMessageBurst, l.seatMessagesPerSecond, now);
    this.addressMessages = new TokenBuckets(l.addressMessageBurst, l.addressMessagesPerSecond, now);
    this.penalties = new PenaltyBox(1000, 5 * 60_000, 10 * 60_000, now);
  }

  /** In a group of processes: the counts they share (undefined: this process counts alone). */
  shared?: SharedCounts;

  /** A reservation (join or reconnect) from `address`: not while it backs off, and within its rate. */
  reservation(address: string): Verdict {
    const blocked = this.penalties.check(addressKey(address));
    if (!blocked.ok) return blocked;
    return this.reservations.take(address);
  }

  /** As `reservation`, within the group's rate when there is a group (this process's own when its Redis does not answer). */
  async reservationInGroup(address: string): Promise<Verdict> {
    const blocked = this.penalties.check(addressKey(address));
    if (!blocked.ok || !this.shared) return this.reservation(address);
    try {
      return await this.shared.reservation(address);
    } catch {
      return this.reservations.take(address);
    }
  }

  /** A message from a room client: within the address's rate and, when seated, its seat's. */
  message(address: string, seatToken: string | undefined): MessageVerdict {
    const a = this.addressMessages.take(address);
    const s = seatToken === undefined ? a : this.seatMessages.take(seatToken);
    if (a.ok && s.ok) return { kind: "ok" };
    const keys = [addressKey(address), ...(seatToken === undefined ? [] : [seatKey(seatToken)])];
    if (this.refused(keys[keys.length - 1]!) < this.limits.refusedBeforeCutoff) return { kind: "drop", retryAfterMs: Math.max(a.retryAfterMs, s.retryAfterMs) };
    this.refusals.delete(keys[keys.length - 1]!);
    return { kind: "cut", blockedMs: this.penalties.block(...keys) };
  }

  /** Counts a refused message of `key` in the current window; returns the count. */
  private refused(key: string): number {
    const t = this.now();
    let r = this.refusals.get(key);
    if (!r || t - r.since > REFUSAL_WINDOW_MS) {
      if (this.refusals.size > 10_000) for (const [k, v] of this.refusals) if (t - v.since > REFUSAL_WINDOW_MS) this.refusals.delete(k);
      r = { count: 0, since: t };
      this.refusals.set(key, r);
    }
    return ++r.count;
  }
}

/** A request refused for a limit (the gate answers it with `status`, 429 with Retry-After for a rate). */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "Refused";
  }
}

/** "2 s", "1 min 5 s": how long a client must wait, as a person reads it. */
export function waitText(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
}

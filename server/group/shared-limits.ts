/**
 * The per-address caps of security/client-guard.ts counted over every process of the group, in
 * its Redis, so that a client spreading its requests over N processes gets no more than from one:
 *
 * - the reservation rate: one token bucket per address (`socialworld:rate:<address>`), taken in
 *   one Lua step on Redis's clock (the processes' clocks may differ), expiring once full again;
 * - seats held at once: each process keeps, per address holding seats of its public rooms, a key
 *   with its count (`socialworld:seats:<address>:<process>`) that expires unless refreshed
 *   (every SEAT_REFRESH_MS, and at once when a reservation adds one); a room screening a seat
 *   adds the counts of the other live processes of the group to its own. A dead process's counts
 *   expire with it. Requests racing through several processes in the same few milliseconds may
 *   each see the others' counts before they land: the cap can then be passed by at most one seat
 *   per process.
 *
 * When Redis does not answer, each process falls back on its own counts (client-guard.ts).
 */
import type { Redis } from "ioredis";
import type { ClientLimits, SharedCounts } from "../security/client-guard.js";
import type { Verdict } from "../security/rate-limit.js";
import type { Fence } from "./fence.js";
import { groupProcessIds } from "./process-heartbeat.js";
import { KEY_PREFIX } from "./redis.js";

const SEAT_REFRESH_MS = 2000;
const SEAT_TTL_MS = 6000;

// Fenced (fence.ts): KEYS[2], the bucket. ARGV: burst, per second. Returns 0 (taken) or the milliseconds until a token.
const TAKE = `
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local t = redis.call("time")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call("hmget", KEYS[2], "tokens", "at")
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) / rate * 1000) end
redis.call("hset", KEYS[2], "tokens", tostring(tokens), "at", tostring(now))
redis.call("pexpire", KEYS[2], math.ceil((burst - tokens) / rate * 1000) + 1000)
return wait`;

export class SharedLimits implements SharedCounts {
  /** Addresses whose count this process has published (refreshed until it falls to 0). */
  private readonly published = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    /** This process's fence: a process declared dead takes no token and publishes no count (fence.ts). */
    private readonly fence: Fence,
    /** Colyseus's id of this process. */
    private readonly processId: string,
    private readonly limits: ClientLimits,
    /** Seats of this process's public rooms held or reserved from an address. */
    private readonly seatsHere: (address: string) => number,
  ) {
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), SEAT_REFRESH_MS);
    this.timer.unref();
  }

  async reservation(address: string): Promise<Verdict> {
    const wait = await this.fence.script(this.redis, TAKE, [`${KEY_PREFIX}rate:${address}`], [String(this.limits.reservationBurst), String(this.limits.reservationsPerSecond)]);
    // Declared dead: this process stops; the client asks again and reaches a live one.
    if (wait === undefined) throw new Error("this process was declared dead by its group");
    return { ok: Number(wait) === 0, retryAfterMs: Number(wait) };
  }

  async seatsElsewhere(address: string): Promise<number> {
    const others = (await groupProcessIds(this.redis)).filter((p) => p !== this.processId);
    if (!others.length) return 0;
    const counts = await this.redis.mget(...others.map((p) => this.seatKey(address, p)));
    return counts.reduce((n, c) => n + (Number(c) || 0), 0);
  }

  async seatsChanged(address: string): Promise<void> {
    await this.publish(address, this.seatsHere(address));
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async publish(address: string, n: number): Promise<void> {
    const key = this.seatKey(address, this.processId);
    if (n > 0) {
      this.published.add(address);
      await this.fence.write(this.redis, "set", key, String(n), "PX", String(SEAT_TTL_MS));
    } else {
      this.published.delete(address);
      await this.fence.write(this.redis, "del", key);
    }
  }

  private async refresh(): Promise<void> {
    for (const address of [...this.published]) await this.publish(address, this.seatsHere(address));
  }

  private seatKey(address: string, processId: string): string {
    return `${KEY_PREFIX}seats:${address}:${processId}`;
  }
}

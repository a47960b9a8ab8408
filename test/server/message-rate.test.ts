/**
 * Finding 5 of the hardening issue: the seat rate limit did not limit. Past 30 messages a second
 * the socket was closed (4002) but the seat kept, and its token rejoined at once: 6,420 `act`
 * messages went through in 10 s, 21 times the limit. Now messages are limited by seat token and
 * client address, which reconnecting does not reset, and a client that keeps on is cut off and
 * must back off (longer each time) before it may join again.
 */
import type { Room as SdkRoom } from "@colyseus/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

describe("messages per seat", () => {
  it("a seated client flooding `act` and rejoining with its token gets no more than its rate through", async () => {
    const created = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 3, humanSeats: "all", tickMs: 300, turnDeadlineMs: 60_000, loop: true } } });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    // The server's defaults (server/security/client-guard.ts): a seat's burst and rate.
    const limits = { seatMessageBurst: 20, seatMessagesPerSecond: 5 };

    let processed = 0;
    let refusedJoins = 0;
    let cutOff = 0;
    let token = "";
    const join = async (): Promise<SdkRoom | undefined> => {
      try {
        const room = await ts.join(roomId, token ? { token, name: "flood" } : { seat: "0", name: "flood" });
        room.onMessage("seat", (m: { token: string }) => (token = m.token));
        room.onMessage("action_result", () => processed++);
        room.onLeave(() => cutOff++);
        return room;
      } catch (err) {
        expect((err as Error).message).toMatch(/too many (messages|requests)/);
        refusedJoins++;
        return undefined;
      }
    };
    let room = await join();
    await until(() => token !== "", 5000, "the seat's token");
    const seconds = 4;
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      if (room && room.connection.isOpen) {
        for (let i = 0; i < 50; i++) room.send("act", { action: { type: "none" } });
        await new Promise((r) => setImmediate(r));
      } else {
        // Cut off: straight back in with the seat's token, as the attack did.
        room = await join();
        if (!room) await new Promise((r) => setTimeout(r, 50));
      }
    }
    await room?.leave().catch(() => undefined);
    // What a person's seat may send: its burst, then its rate (the old limit let 30 a second
    // through on every connection, and a reconnection started a new one).
    const allowed = limits.seatMessageBurst + limits.seatMessagesPerSecond * seconds;
    expect(processed).toBeGreaterThan(0);
    expect(processed).toBeLessThanOrEqual(allowed);
    expect(cutOff).toBeGreaterThanOrEqual(1);
    expect(refusedJoins).toBeGreaterThanOrEqual(1);
  });
});

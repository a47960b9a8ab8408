/**
 * Finding 2 of the hardening issue: anyone could lock any room by flooding seat reservations.
 * `POST /matchmake/joinById` reserved a seat before any token was checked; 2,000 anonymous
 * reservations made a room answer "room is locked" for 15 s, and a participant holding a valid
 * seat token was refused. One anonymous client also took every demo seat. Now tokens are checked
 * at reservation time, reservations are rate-limited and capped per client address, seats are
 * capped per address, and spectators' reservations never lock anyone out of a seat.
 */
import { matchMaker } from "@colyseus/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, until, type TestServer } from "./harness.js";
import { joinFrom, postFrom } from "./raw-client.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

async function room(options: Record<string, unknown>) {
  const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 3, humanSeats: "all", tickMs: 500, loop: true, ...options } } });
  expect(res.status, res.text).toBe(201);
  return res.json as { roomId: string; seats: { agent: string }[]; spectatorToken?: string; seatTokens?: { index: number; token: string }[] };
}

const reservedSeats = (roomId: string) => Object.keys((matchMaker.getLocalRoomById(roomId) as unknown as { _reservedSeats: object })._reservedSeats).length;

/** `count` reservations from `address`, `parallel` at a time: their statuses. */
async function flood(roomId: string, address: string, count: number, body = "{}", parallel = 50): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next++;
        statuses.push((await postFrom(`${ts.base}/matchmake/joinById/${roomId}`, body, address)).status);
      }
    }),
  );
  return statuses;
}

describe("seat reservations", () => {
  it("2,000 anonymous reservations lock nobody out: a participant with a seat token still gets in", async () => {
    const priv = await room({ private: true });
    const pub = await room({});
    const started = Date.now();
    const [onPrivate, onPublic] = await Promise.all([flood(priv.roomId, "127.0.0.3", 1000), flood(pub.roomId, "127.0.0.4", 1000)]);
    expect(Date.now() - started).toBeLessThan(20_000);
    // No anonymous reservation on the private room: its token is checked first.
    expect(onPrivate.filter((s) => s === 200)).toEqual([]);
    expect(new Set(onPrivate)).toEqual(new Set([403, 429]));
    // On the public room: a burst of spectators, then refusals; a few reservations at most stay unused.
    expect(onPublic.filter((s) => s === 200).length).toBeLessThanOrEqual(8);
    expect(onPublic.filter((s) => s === 429).length).toBeGreaterThan(900);
    expect(reservedSeats(priv.roomId)).toBe(0);
    expect(reservedSeats(pub.roomId)).toBeLessThanOrEqual(8);

    // A participant (another address) takes the private room's seat with its token, and a visitor a public seat.
    const token = priv.seatTokens!.find((t) => t.index === 0)!.token;
    const participant = await joinFrom(ts.base, priv.roomId, { token, name: "pat" }, "127.0.0.5");
    expect(participant.reservation.status, participant.reservation.text).toBe(200);
    expect(participant.client!.seen.errors).toEqual([]);
    const visitor = await joinFrom(ts.base, pub.roomId, { seat: "0", name: "vic" }, "127.0.0.6");
    expect(visitor.reservation.status, visitor.reservation.text).toBe(200);
    await until(async () => (await ts.api(`/api/rooms/${priv.roomId}`, { admin: true })).json.seats[0].connected, 5000, "the participant in the seat");
    await until(async () => (await ts.api(`/api/rooms/${pub.roomId}`)).json.seats[0].connected, 5000, "the visitor in the seat");
    participant.client!.ws.close();
    visitor.client!.ws.close();
  });

  it("checks a private room's tokens before reserving anything, with the reason", async () => {
    const priv = await room({ private: true });
    const anonymous = await postFrom(`${ts.base}/matchmake/joinById/${priv.roomId}`, "{}", "127.0.0.7");
    expect(anonymous.status).toBe(403);
    expect(anonymous.json).toMatchObject({ code: 525, error: expect.stringMatching(/private: join with its spectator token or a seat token/) });
    const wrongSeat = await postFrom(`${ts.base}/matchmake/joinById/${priv.roomId}`, JSON.stringify({ seat: "0", token: priv.spectatorToken }), "127.0.0.7");
    expect(wrongSeat.status).toBe(403);
    expect(wrongSeat.json.error).toMatch(/needs its seat token/);
    expect(reservedSeats(priv.roomId)).toBe(0);
  });

  it("lets one client address hold at most 4 seats, however many rooms offer them", async () => {
    const rooms = await Promise.all([room({}), room({}), room({})]);
    const taken: string[] = [];
    const refused: string[] = [];
    for (const r of rooms) {
      for (let seat = 0; seat < r.seats.length; seat++) {
        const res = await postFrom(`${ts.base}/matchmake/joinById/${r.roomId}`, JSON.stringify({ seat: String(seat), name: "greedy" }), "127.0.0.8");
        (res.status === 200 ? taken : refused).push(`${r.roomId}/${seat}: ${res.json.error ?? ""}`);
      }
    }
    expect(taken).toHaveLength(4);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatch(/your address holds 4 seats already \(at most 4 at once\)/);
    // Another address is not affected.
    const other = await postFrom(`${ts.base}/matchmake/joinById/${rooms[2]!.roomId}`, JSON.stringify({ seat: String(rooms[2]!.seats.length - 1) }), "127.0.0.9");
    expect(other.status, other.text).toBe(200);
  });

  it("answers a malformed reservation or reconnection as the client's error, never with the server's internals", async () => {
    const pub = await room({});
    for (const [path, body] of [
      [`joinById/${pub.roomId}`, "null"],
      [`reconnect/${pub.roomId}`, "null"],
      [`reconnect/${pub.roomId}`, '{"reconnectionToken": 5}'],
      [`joinById/${pub.roomId}`, "{not json"],
      [`joinById/${pub.roomId}`, JSON.stringify({ name: "x".repeat(5000) })],
      [`create/simulation`, "{}"],
    ] as const) {
      const res = await postFrom(`${ts.base}/matchmake/${path}`, body, "127.0.0.10");
      expect(res.status, `${path} ${body.slice(0, 20)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.text).not.toMatch(/Cannot read|TypeError|properties of/);
    }
  });
});

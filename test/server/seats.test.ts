/**
 * A person in a seat: gets the observation and the action schema, acts (an invalid action is
 * refused with its reason and changes nothing), has a deadline after which the seat's script acts,
 * and comes back to the same seat after a dropped connection. Seat rules and private rooms.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Room as SdkRoom } from "@colyseus/sdk";
import { decodeFrames } from "./wire.js";
import { collect, framesOf, startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

interface Turn {
  agent: string;
  timestep: number;
  observation: { text: string; data: { room: string | null; present: string[] } };
  actionSchema: { oneOf: { properties: Record<string, { const?: string; enum?: string[] }> }[] };
  deadline?: number;
  noop: unknown;
}

async function simulation(options: Record<string, unknown>): Promise<{ roomId: string; agents: string[]; json: any }> {
  const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", humanSeats: "all", ...options } } });
  expect(res.status, res.text).toBe(201);
  return { roomId: res.json.roomId, agents: res.json.seats.map((s: { agent: string }) => s.agent), json: res.json };
}

function variant(turn: Turn, type: string) {
  const v = turn.actionSchema.oneOf.find((o) => o.properties.type?.const === type);
  if (!v) throw new Error(`no ${type} action in the schema`);
  return v.properties;
}

/** The next `turn` message the room receives. */
async function nextTurn(room: SdkRoom, after = 0): Promise<Turn> {
  const turns = collect<Turn>(room, "turn");
  await until(() => turns.some((t) => t.timestep > after), 15_000, "a turn");
  return turns.find((t) => t.timestep > after)!;
}

function stateOf(room: SdkRoom) {
  return decodeFrames(framesOf(room)).state as any;
}

describe("a person in a seat", () => {
  it("gets the observation and action schema; invalid actions are refused and change nothing; a valid one is applied", async () => {
    const { roomId, agents } = await simulation({ seed: 3, tickMs: 400, turnDeadlineMs: 20_000 });
    const me = agents[0]!;
    const room = await ts.join(roomId, { seat: me, name: "alice" });
    const results = collect<{ ok: boolean; error?: string; timestep?: number }>(room, "action_result");
    const turn = await nextTurn(room);
    expect(turn.agent).toBe(me);
    expect(turn.deadline).toBeGreaterThan(Date.now());
    expect(turn.noop).toEqual({ type: "none" });
    const rooms = variant(turn, "enter").room!.enum!;
    expect(rooms.length).toBeGreaterThan(0);

    const before = stateOf(room);
    room.send("act", { action: { type: "fly" }, timestep: turn.timestep });
    const here = turn.observation.data.room;
    // Not possible in this state: entering the room one is in, or leaving when in none.
    room.send("act", { action: here ? { type: "enter", room: here } : { type: "exit" }, timestep: turn.timestep });
    room.send("act", { action: { type: "none" }, timestep: turn.timestep - 1 });
    await until(() => results.length === 3, 5000, "three answers");
    expect(results[0]).toMatchObject({ ok: false, timestep: turn.timestep });
    expect(results[0]!.error).toMatch(/^invalid action: .*type/);
    expect(results[1]!.ok).toBe(false);
    expect(results[1]!.error).toMatch(here ? /^action not possible: .* is already in the / : /^action not possible: .* is not in any room/);
    expect(results[2]!.error).toMatch(/current turn is timestep/);
    // Nothing moved: the world still waits for this turn.
    const waiting = stateOf(room);
    expect(waiting.timeline.length).toBe(before.timeline.length);
    expect(waiting.seats[me]).toMatchObject({ waiting: true, occupant: "alice", connected: true });

    // A valid action: leave the room one is in, or enter one.
    const action = here ? { type: "exit" } : { type: "enter", room: rooms[0]! };
    const expected = here ? `exits the ${here}` : `enters the ${rooms[0]}`;
    const caused = here ? `${me} exited the ${here}.` : `${me} entered the ${rooms[0]}.`;
    room.send("act", { action, timestep: turn.timestep });
    await until(() => results.length === 4, 5000, "the answer");
    expect(results[3]).toEqual({ ok: true, timestep: turn.timestep });
    const next = nextTurn(room, turn.timestep);
    await until(() => (stateOf(room).perspectives[me]?.steps ?? []).some((s: any) => s.timestep === turn.timestep), 5000, "the timestep");
    const acted = (stateOf(room).perspectives[me].steps as any[]).find((s) => s.timestep === turn.timestep);
    expect(acted.action).toBe(expected);
    expect(acted.source).toBe("human");
    // The next turn's observation shows what the action caused.
    expect((await next).observation.text).toContain(caused);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });

  it("misses the deadline: the seat's script acts instead", async () => {
    const { roomId, agents } = await simulation({ seed: 4, tickMs: 100, turnDeadlineMs: 300 });
    const me = agents[0]!;
    const room = await ts.join(roomId, { seat: me, name: "bob" });
    const over = collect<{ agent: string; timestep: number; outcome: string }>(room, "turn_over");
    await until(() => over.some((o) => o.outcome === "timeout"), 10_000, "a timeout");
    const t = over.find((o) => o.outcome === "timeout")!.timestep;
    await until(() => (stateOf(room).perspectives[me]?.steps ?? []).some((s: any) => s.timestep === t), 5000, "the step");
    const step = (stateOf(room).perspectives[me].steps as any[]).find((s) => s.timestep === t);
    expect(step.source).toBe("fallback");
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });

  it("comes back to the same seat and the same turn after a dropped connection, or with its seat token", async () => {
    const { roomId, agents } = await simulation({ seed: 5, tickMs: 300, turnDeadlineMs: 30_000, reconnectSeconds: 20 });
    const me = agents[1]!;
    const room = await ts.join(roomId, { seat: me, name: "carol" });
    const seatMsgs = collect<{ agent: string; token: string }>(room, "seat");
    const turns = collect<Turn>(room, "turn");
    await until(() => turns.length > 0 && seatMsgs.length > 0, 10_000, "a turn");
    const pending = turns[turns.length - 1]!;
    const token = seatMsgs[0]!.token;

    // Drop the connection: the SDK reconnects by itself; the seat and its turn were kept.
    (room as any).reconnection.minUptime = 0;
    const oldWs = (room as any).connection.transport.ws;
    oldWs.terminate();
    await until(() => (room as any).connection.transport.ws !== oldWs && turns.length > 1, 15_000, "the reconnection");
    expect(turns[turns.length - 1]!.timestep).toBe(pending.timestep);
    expect(seatMsgs[seatMsgs.length - 1]).toMatchObject({ agent: me, token });
    const results = collect<{ ok: boolean }>(room, "action_result");
    room.send("act", { action: { type: "none" }, timestep: pending.timestep });
    await until(() => results.length === 1, 5000, "the answer");
    expect(results[0]!.ok).toBe(true);

    // A new connection (a reloaded page) with the seat token takes the seat over.
    const again = await ts.join(roomId, { token });
    const seatAgain = collect<{ agent: string }>(again, "seat");
    await until(() => seatAgain.length > 0 || decodeFrames(framesOf(again)).messages.some((m) => m.type === "seat"), 5000, "the seat");
    const seatMsg = decodeFrames(framesOf(again)).messages.find((m) => m.type === "seat")!.payload as { agent: string };
    expect(seatMsg.agent).toBe(me);
    await until(() => !(room as any).connection.isOpen, 5000, "the old connection to close");
    await until(() => stateOf(again).seats[me]?.occupant === "anonymous", 5000, "the seat to show its new holder");
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });
});

describe("seat rules", () => {
  it("refuses a taken seat, a closed seat, a spectator's action, unknown messages and bad join options", async () => {
    const { roomId, agents } = await simulation({ seed: 6, tickMs: 500, humanSeats: [0] });
    await ts.join(roomId, { seat: agents[0], name: "dan" });
    await expect(ts.join(roomId, { seat: agents[0] })).rejects.toThrow(/taken by dan/);
    await expect(ts.join(roomId, { seat: agents[1] })).rejects.toThrow(/not open to people/);
    await expect(ts.join(roomId, { seat: "Nobody" })).rejects.toThrow(/no agent "Nobody"/);
    // A seat by its position is the same seat.
    await expect(ts.join(roomId, { seat: "0" })).rejects.toThrow(/taken by dan/);
    await expect(ts.join(roomId, { seat: "1" })).rejects.toThrow(`${agents[1]}'s seat is not open to people`);
    await expect(ts.join(roomId, { seat: String(agents.length) })).rejects.toThrow(`no agent "${agents.length}"`);
    await expect(ts.join(roomId, { seat: "x".repeat(65) })).rejects.toThrow(/bad join options: seat/);
    await expect(ts.join(roomId, { token: "not-a-token" })).rejects.toThrow(/unknown or expired token/);

    const spectator = await ts.join(roomId);
    const results = collect<{ ok: boolean; error: string }>(spectator, "action_result");
    const errors = collect<{ error: string }>(spectator, "error");
    spectator.send("act", { action: { type: "none" } });
    spectator.send("dance", { please: true });
    await until(() => results.length === 1 && errors.length === 1, 5000, "the answers");
    expect(results[0]!.error).toMatch(/only a seated client can act/);
    expect(errors[0]!.error).toMatch(/unknown message type "dance"/);
    // The room is still there and still playing.
    const health = await ts.api(`/api/rooms/${roomId}`);
    expect(health.json.status).toMatch(/running|finished/);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });

  it("private rooms: spectators need the spectator token, seats their seat token; they are not listed publicly", async () => {
    const { roomId, agents, json } = await simulation({ seed: 7, tickMs: 500, private: true, humanSeats: [0] });
    expect(json.visibility).toBe("private");
    expect(json.spectatorToken).toMatch(/^[\w-]{20,}$/);
    expect(json.seatTokens).toEqual([{ index: 0, agent: agents[0], token: expect.stringMatching(/^[\w-]{20,}$/) }]);
    await expect(ts.join(roomId)).rejects.toThrow(/private/);
    await expect(ts.join(roomId, { seat: agents[0] })).rejects.toThrow(/needs its seat token/);
    await expect(ts.join(roomId, { seat: agents[0], token: json.spectatorToken })).rejects.toThrow(/needs its seat token/);
    const spectator = await ts.join(roomId, { token: json.spectatorToken });
    await until(() => decodeFrames(framesOf(spectator)).perspectivesEverSeen.has("world"), 5000, "the world view");
    const seated = await ts.join(roomId, { seat: agents[0], token: json.seatTokens[0].token });
    await until(() => decodeFrames(framesOf(seated)).messages.some((m) => m.type === "seat"), 5000, "the seat");

    const publicList = await ts.api("/api/rooms");
    expect(publicList.json.rooms.some((r: { roomId: string }) => r.roomId === roomId)).toBe(false);
    const adminList = await ts.api("/api/rooms", { admin: true });
    expect(adminList.json.rooms.some((r: { roomId: string }) => r.roomId === roomId)).toBe(true);
    const runs = await ts.api("/api/runs?limit=100");
    expect(runs.json.runs.some((r: { id: string }) => r.id === json.runId)).toBe(false);
    expect((await ts.api(`/api/runs/${json.runId}`)).status).toBe(404);
    expect((await ts.api(`/api/runs/${json.runId}`, { admin: true })).status).toBe(200);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });
});

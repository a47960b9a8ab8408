/**
 * The economy as a live room: its worldOptions (the economy's parameters, checked against the
 * world's schema, the field at fault named), the month's plots in the world perspective's data
 * (what spectators receive), and a seated person who receives their own household's view only:
 * never the world's data, nor another household's finances (checked from the socket's bytes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, framesOf, startTestServer, until, type TestServer } from "../server/harness.js";
import { bytesContain, decodeFrames } from "../server/wire.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

const small = { households: 3, months: 30, skillBatches: 5 };

async function create(options: Record<string, unknown>) {
  return ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "economy", seed: 7, ...options } } });
}

describe("the economy room", () => {
  it("takes the economy's parameters as worldOptions and refuses bad ones by name", async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ worldOptions: { households: 101 } }, /worldOptions\.households: Too big/],
      [{ worldOptions: { rule: "clever" } }, /worldOptions\.rule: unknown household rule "clever"/],
      [{ worldOptions: { skillBatches: 1_000_000 } }, /worldOptions\.skillBatches: at most 1000 in a room/],
      [{ worldOptions: { bracketRates: [0.1] } }, /worldOptions\.bracketRates: 1 rates for 7 brackets/],
      [{ worldOptions: { wages: 3 } }, /worldOptions: Unrecognized key: "wages"/],
      [{ world: "tomi", worldOptions: { households: 3 } }, /worldOptions: the tomi world takes none/],
    ];
    for (const [options, message] of bad) {
      const r = await create(options);
      expect(r.status, JSON.stringify(options)).toBe(400);
      expect(r.json.error, JSON.stringify(options)).toMatch(message);
    }
    const r = await create({ worldOptions: small, tickMs: 0 });
    expect(r.status, r.text).toBe(201);
    expect(r.json.seats.map((s: { agent: string }) => s.agent)).toEqual(["household-1", "household-2", "household-3"]);
    await ts.api(`/api/rooms/${r.json.roomId}`, { method: "DELETE", admin: true });
  });

  it("shows spectators each month's statistics and a year's indicators; a seat gets its own household only", async () => {
    const created = await create({ worldOptions: small, tickMs: 20, humanSeats: [0], turnDeadlineMs: 200, private: true });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const seatToken: string = (created.json.seatTokens as { index: number; token: string }[]).find((t) => t.index === 0)!.token;
    const spectator = await ts.join(roomId, { token: created.json.spectatorToken as string });
    const all = framesOf(spectator);
    const seated = await ts.join(roomId, { token: seatToken, name: "tester" });
    const mine = framesOf(seated);
    await until(() => (decodeFrames(all).perspectives.get("world")?.steps.length ?? 0) >= 26, 60_000, "26 months in the world's view");
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });

    const world = decodeFrames(all).perspectives.get("world")!.steps as unknown as { timestep: number; data: string }[];
    const views = world.map((s) => JSON.parse(s.data) as { stats: { month: number; households: number }; year: { year: number } | null; phillips: number | null });
    expect(views.map((v) => v.stats.month)).toEqual(world.map((s) => s.timestep));
    expect(views.every((v) => v.stats.households === 3)).toBe(true);
    // A year's row and the correlations so far come with the months that end a year.
    expect(views.filter((v) => v.year !== null).map((v) => v.stats.month)).toEqual(views.map((v) => v.stats.month).filter((m) => m % 12 === 0));
    expect(views.find((v) => v.stats.month === 24)!.year!.year).toBe(2);

    const seen = decodeFrames(mine);
    expect([...seen.perspectivesEverSeen]).toEqual(["household-1"]);
    const own = seen.perspectives.get("household-1")!.steps as unknown as { data: string }[];
    expect(own.length).toBeGreaterThan(0);
    expect(JSON.parse(own[0]!.data)).toHaveProperty("finances");
    // Another household's view (its finances) and the world's plots are not in the seat's bytes.
    const spectatorViews = decodeFrames(all).perspectives.get("household-2")!.steps as unknown as { data: string; text: string }[];
    for (const s of spectatorViews.slice(0, 5)) expect(bytesContain(mine, s.text)).toBe(false);
    expect(bytesContain(mine, world[3]!.data)).toBe(false);
  });

  it("lets a person run a household: the decision's schema and grid, a bad decision refused, a good one applied", async () => {
    const created = await create({ worldOptions: small, tickMs: 50, humanSeats: ["household-2"], turnDeadlineMs: 20_000 });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const room = await ts.join(roomId, { seat: "household-2", name: "alice" });
    const turns = collect<{ agent: string; timestep: number; observation: { text: string }; actionSchema: { required: string[] }; options?: unknown[] }>(room, "turn");
    const results = collect<{ ok: boolean; error?: string; timestep?: number }>(room, "action_result");
    await until(() => turns.length > 0, 15_000, "a turn");
    const turn = turns[0]!;
    expect(turn.agent).toBe("household-2");
    expect(turn.observation.text).toContain("Answer with JSON only");
    expect([...turn.actionSchema.required].sort()).toEqual(["consumption", "work"]);
    expect(turn.options).toHaveLength(25);
    room.send("act", { action: { work: 2, consumption: 0.5 }, timestep: turn.timestep });
    room.send("act", { action: { work: 0.25, consumption: 0.75 }, timestep: turn.timestep });
    await until(() => results.length === 2, 5000, "the answers");
    expect(results[0]!.ok).toBe(false);
    expect(results[0]!.error).toMatch(/^invalid action: .*work/);
    expect(results[1]).toEqual({ ok: true, timestep: turn.timestep });
    const mine = () => (decodeFrames(framesOf(room)).perspectives.get("household-2")?.steps ?? []) as unknown as { timestep: number; action: string; source: string }[];
    await until(() => mine().some((s) => s.timestep === turn.timestep), 5000, "the month");
    const acted = mine().find((s) => s.timestep === turn.timestep)!;
    expect(acted).toMatchObject({ source: "human", action: "decides to work with propensity 0.25 and to spend 0.75 of its money" });
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });
});

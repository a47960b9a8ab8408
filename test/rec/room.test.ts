/**
 * The recommendation world in a room: the world's episode (a generated user's next films held out,
 * the recallers' candidates each timestep, NDCG@10 of the recommender's list as its reward), and
 * the live room: spectators see the user's history, the ranked list and the scores; a person takes
 * the recommender's seat, a bad list is refused, a good one scored; the seat never receives the
 * world's plot, and no observation names a film the user is about to watch unless it is a candidate.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runEpisode } from "../../worlds/core/loop.js";
import { RECOMMENDER, recScenario, RecListSchema, ROOM_CANDIDATES, type RecRoomState } from "../../worlds/rec/index.js";
import { collect, framesOf, startTestServer, until, type TestServer } from "../server/harness.js";
import { bytesContain, decodeFrames } from "../server/wire.js";

const small = { users: 60, items: 60, steps: 3 };

describe("the recommendation world's episode", () => {
  it("is seeded, holds the user's next films out of what the recommender sees, and rewards NDCG@10", async () => {
    const a = recScenario(4, small);
    const b = recScenario(4, small);
    expect(a.initialState).toEqual(b.initialState);
    expect(recScenario(5, small).initialState.user !== a.initialState.user || recScenario(5, small).initialState.history.length !== a.initialState.history.length).toBe(true);
    const s = a.initialState;
    expect(s.upcoming).toHaveLength(3);
    expect(s.candidates.every((c) => c.length === ROOM_CANDIDATES)).toBe(true);
    const world = a.world;
    let state: RecRoomState = s;
    for (let t = 0; t < 3; t++) {
      const obs = world.observe(state, RECOMMENDER);
      const watched = new Set(state.history.map((m) => m.id));
      expect(state.candidates[t]!.some((m) => watched.has(m.id))).toBe(false);
      const shown = new Set([...state.history, ...state.candidates[t]!].map((m) => m.title));
      for (const m of state.upcoming) if (!shown.has(m.title)) expect(obs.text).not.toContain(m.title);
      const next = state.upcoming[t]!;
      const list = t === 0 ? [next.id] : t === 1 ? [state.candidates[t]![0]!.id === next.id ? state.candidates[t]![1]!.id : state.candidates[t]![0]!.id, next.id] : [];
      const r = world.step(state, new Map([[RECOMMENDER, { items: list }]]), { rng: undefined as never, exogenous: [] });
      expect(r.rewards![RECOMMENDER]).toBeCloseTo([1, 1 / Math.log2(3), 0][t]!, 12);
      expect(r.events[0]!.text).toContain(next.title);
      state = r.state;
      expect(state.history.at(-1)).toEqual(next);
    }
    expect(world.isTerminal(state)).toBe(true);
    expect(world.view!(state)).toMatchObject({ ndcg: [1, 1 / Math.log2(3), 0], hr: [1, 1, 0] });
    expect(RecListSchema.safeParse({ items: Array.from({ length: 11 }, (_, i) => i + 1) }).success).toBe(false);
  });

  it("takes a list that names a film twice and counts the film at its first place only: the repeat wastes its place", () => {
    const { world, initialState: s } = recScenario(4, small);
    const next = s.upcoming[0]!.id;
    const other = s.candidates[0]!.find((m) => m.id !== next)!.id;
    const reward = (items: number[]) => {
      expect(RecListSchema.safeParse({ items }).success).toBe(true);
      return world.step(s, new Map([[RECOMMENDER, { items }]]), { rng: undefined as never, exogenous: [] }).rewards![RECOMMENDER];
    };
    expect(reward([other, next])).toBeCloseTo(1 / Math.log2(3), 12);
    expect(reward([other, other, next])).toBeCloseTo(1 / Math.log2(4), 12);
    expect(reward([next, next])).toBe(1);
    expect(reward([other, other])).toBe(0);
  });

  it("plays in the game loop with the mixture in the seat: the list is its top candidates, each reward in [0, 1]", async () => {
    const sc = recScenario(2, small);
    const ep = await runEpisode(sc.world, { seed: 2, initialState: sc.initialState, agents: sc.scripted, maxSteps: sc.maxSteps });
    expect(ep.steps.length).toBeGreaterThanOrEqual(3);
    const acted = ep.steps.filter((s) => s.actions[RECOMMENDER] !== "none");
    expect(acted).toHaveLength(3);
    for (const s of acted) expect(s.rewards?.[RECOMMENDER] ?? -1).toBeGreaterThanOrEqual(0);
    expect(acted[0]!.actions[RECOMMENDER]).toBe(`recommends ${sc.initialState.candidates[0]!.slice(0, 10).map((m) => m.title).join("; ")}`);
  });
});

describe("the recommendation room", { timeout: 240_000 }, () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(async () => {
    await ts.close();
  });
  const create = (options: Record<string, unknown>) => ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "rec", seed: 6, ...options } } });

  it("refuses world options beyond its bounds by name", async () => {
    for (const [options, message] of [
      [{ worldOptions: { users: 100_000 } }, /worldOptions\.users: Too big/],
      [{ worldOptions: { steps: 0 } }, /worldOptions\.steps: Too small/],
      [{ worldOptions: { films: 3 } }, /worldOptions: Unrecognized key: "films"/],
    ] as const) {
      const r = await create(options);
      expect(r.status, JSON.stringify(options)).toBe(400);
      expect(r.json.error).toMatch(message);
    }
  });

  it("lets a person take the recommender's seat; spectators see the history, the list and the scores", async () => {
    // Episodes in a loop: a person who joins after the first one ended gets the next one's turns.
    const options = { users: 40, items: 40, steps: 10 };
    const created = await create({ worldOptions: options, seed: 3, tickMs: 20, loop: true, humanSeats: [RECOMMENDER], turnDeadlineMs: 30_000 });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const spectator = await ts.join(roomId);
    const seat = await ts.join(roomId, { seat: RECOMMENDER, name: "alice" });
    const turns = collect<{ agent: string; timestep: number; observation: { text: string }; actionSchema: { required: string[] } }>(seat, "turn");
    const results = collect<{ ok: boolean; error?: string; timestep?: number }>(seat, "action_result");
    await until(() => turns.length > 0, 90_000, "a turn");
    const turn = turns[0]!;
    expect(turn.agent).toBe(RECOMMENDER);
    expect(turn.observation.text).toMatch(/^User \d+ has watched \d+ films; the last \d+, oldest first:/);
    expect(turn.actionSchema.required).toEqual(["items"]);
    const candidates = [...turn.observation.text.matchAll(/^(\d+): (.+) \[/gm)].map((m) => ({ id: Number(m[1]), title: m[2]! }));
    // As many as the user has films left unwatched, up to the room's number.
    const watched = Number(/has watched (\d+) films/.exec(turn.observation.text)![1]);
    expect(candidates).toHaveLength(Math.min(ROOM_CANDIDATES, options.items - watched));
    const pick = candidates[0]!;
    seat.send("act", { action: { items: [pick.id, 1.5] }, timestep: turn.timestep });
    seat.send("act", { action: { items: [pick.id] }, timestep: turn.timestep });
    await until(() => results.length === 2, 30_000, "the answers");
    expect(results[0]).toMatchObject({ ok: false, error: expect.stringMatching(/^invalid action: .*expected int.*at items\[1\]$/) });
    expect(results[1]).toEqual({ ok: true, timestep: turn.timestep });
    const recSteps = () => (decodeFrames(framesOf(spectator)).perspectives.get(RECOMMENDER)?.steps ?? []) as unknown as { timestep: number; action: string; source: string }[];
    await until(() => recSteps().some((s) => s.timestep === turn.timestep && s.source === "human"), 30_000, "the person's step");
    expect(recSteps().find((s) => s.timestep === turn.timestep && s.source === "human")).toMatchObject({ action: `recommends ${pick.title}` });
    // The world's plot: the list and the film watched, NDCG@10 1 exactly when the user watched the pick.
    const views = () =>
      ((decodeFrames(framesOf(spectator)).perspectives.get("world")?.steps ?? []) as unknown as { data: string }[])
        .filter((s) => s.data)
        .map((s) => JSON.parse(s.data) as { ndcg: number[]; last: { ranked: number[]; watched: number; ndcg: number } | null });
    await until(() => views().some((v) => v.last?.ranked.length === 1 && v.last.ranked[0] === pick.id), 30_000, "the world's view of the person's list");
    const mine = views().find((v) => v.last?.ranked.length === 1 && v.last.ranked[0] === pick.id)!.last!;
    expect(mine.ndcg).toBe(mine.watched === pick.id ? 1 : 0);
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
    const seen = decodeFrames(framesOf(seat));
    expect([...seen.perspectivesEverSeen]).toEqual([RECOMMENDER]);
    const worldData = ((decodeFrames(framesOf(spectator)).perspectives.get("world")?.steps ?? []) as unknown as { data: string }[]).find((s) => s.data)!.data;
    expect(bytesContain(framesOf(seat), worldData)).toBe(false);
  });
});

/**
 * A self-play pool outlives its server (server/self-play/pool-state.ts): after kill -9 and a
 * restart on the same store, the room's seats play the pool's last round (not the starting
 * policy), the next round is written as the next round (round-1's checkpoint untouched), and
 * the board's held-out curve goes on over the same held-out questions, with the scores from
 * before the kill. With `continueTraining`, the round after the restart goes on from the last
 * round's trainer state (its checkpoint in the round's folder).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tinyCheckpoint } from "../policy/fixtures.js";
import { ADMIN, serve, type Served } from "./child-server.js";
import { until } from "./raw-client.js";

async function api(s: Served, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(s.base + path, {
    method: init.method ?? "GET",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as any };
}

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** The pool's runs on the board, latest round last. */
async function poolRuns(s: Served, roomId: string): Promise<any[]> {
  const runs = (await api(s, "/api/training")).json.runs as any[];
  return runs.filter((r) => r.title === `Self-play ${roomId}: round ${r.round}`).sort((a, b) => a.round - b.round);
}

describe("a self-play pool after kill -9", () => {
  it("plays its last round, writes the next beside it, and scores every round on the same held-out questions", async () => {
    const { dir } = await tinyCheckpoint(26);
    const query = "?max_new_tokens=8&temperature=1&answer_temperature=0";
    const spec = `policy:${dir}${query}`;
    const first = await serve();
    const options = {
      world: "tomi",
      seed: 6,
      defaultAgent: spec,
      loop: true,
      tickMs: 0,
      pauseMs: 0,
      turnDeadlineMs: 20_000,
      title: "self-play restart",
      quiz: { questions: 2, deadlineMs: 20_000 },
      selfPlay: { everyEpisodes: 1, heldOutEpisodes: 1, turns: false, trainer: { steps: 1, prompts: 2, groupSize: 2, maxNewTokens: 8, lr: 1e-3 } },
    };
    const created = await api(first, "/api/rooms", { method: "POST", body: { type: "simulation", options } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const roomId: string = created.json.roomId;
    const poolDir = join(first.store, "selfplay", roomId);
    const round1 = join(poolDir, "round-1");

    let before: any[] = [];
    await until(async () => {
      const run = (await poolRuns(first, roomId)).find((r) => r.round === 1 && r.status === "done");
      before = run?.heldOutAccuracy ?? [];
      return before.some((p) => p.round === 1);
    }, 120_000, "round 1, scored on the held-out episode");
    // Saved once round 1 and its score are in: what a restart reads back.
    await until(() => {
      const saved = JSON.parse(readFileSync(join(poolDir, "pool.json"), "utf8"));
      return saved.rounds.length >= 1 && saved.heldOutScores.some((s: any) => s.round === 1);
    }, 10_000, "the pool's saved state");
    const saved = JSON.parse(readFileSync(join(poolDir, "pool.json"), "utf8"));
    expect(saved.rounds[0]).toBe("round-1");
    expect(saved.heldOut).toHaveLength(1);
    expect(saved.heldOut[0]).toMatch(/^runs\/[^/]+\/quiz\/episode-\d+\.txt$/);
    const model1 = sha(join(round1, "model.safetensors"));

    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const second = await serve(first.store);
    await until(() => /1 room of the last run restored/.test(second.out()), 10_000, "the room restored");

    // Its seats play the pool's latest round, never the starting policy again.
    const rounds = (JSON.parse(readFileSync(join(poolDir, "pool.json"), "utf8")).rounds as string[]).length;
    const latest = `policy:${join(poolDir, `round-${rounds}`)}${query}`;
    await until(async () => {
      const seats = (await api(second, `/api/rooms/${roomId}`)).json.seats as any[] | undefined;
      return seats !== undefined && seats.length > 0 && seats.every((s) => s.controller === latest);
    }, 20_000, "the seats on the latest round");

    // The next round is round rounds + 1, scored on the same held-out questions, the earlier scores with it.
    let after: any[] = [];
    await until(async () => {
      const run = (await poolRuns(second, roomId)).find((r) => r.round === rounds + 1 && r.status === "done");
      after = run?.heldOutAccuracy ?? [];
      return after.some((p) => p.round === rounds + 1);
    }, 120_000, `round ${rounds + 1} after the restart`);
    expect(after.map((p) => p.round)).toEqual([...Array(rounds + 2).keys()]);
    for (const p of before) expect(after.find((q) => q.round === p.round)).toEqual(p);
    expect(new Set(after.map((p) => p.questionSet)).size).toBe(1);
    expect(sha(join(round1, "model.safetensors"))).toBe(model1);
    expect(existsSync(join(poolDir, `round-${rounds + 1}`, "model.safetensors"))).toBe(true);
    second.child.kill("SIGKILL");
  }, 300_000);

  it("with continueTraining, goes on from the last round's trainer state after the restart", async () => {
    const { dir } = await tinyCheckpoint(28);
    const first = await serve();
    const options = {
      world: "tomi", seed: 8, defaultAgent: `policy:${dir}?max_new_tokens=8&temperature=1&answer_temperature=0`, loop: true, tickMs: 0, pauseMs: 0, turnDeadlineMs: 20_000,
      title: "self-play continues", quiz: { questions: 2, deadlineMs: 20_000 },
      selfPlay: { everyEpisodes: 1, turns: false, continueTraining: true, trainer: { steps: 2, prompts: 2, groupSize: 2, maxNewTokens: 8, lr: 1e-3, warmupSteps: 3 } },
    };
    const created = await api(first, "/api/rooms", { method: "POST", body: { type: "simulation", options } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const roomId: string = created.json.roomId;
    const poolDir = join(first.store, "selfplay", roomId);
    await until(() => existsSync(join(poolDir, "pool.json")) && JSON.parse(readFileSync(join(poolDir, "pool.json"), "utf8")).rounds.length >= 1, 120_000, "round 1 in the pool's state");
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const rounds = (JSON.parse(readFileSync(join(poolDir, "pool.json"), "utf8")).rounds as string[]).length;
    const state = (k: number) => JSON.parse(readFileSync(join(poolDir, `round-${k}`, `checkpoint-${2 * k}`, "trainer_state.json"), "utf8"));
    const before = state(rounds);
    expect(before).toMatchObject({ step: 2 * rounds, updates: 2 * rounds });

    const second = await serve(first.store);
    let run: any;
    await until(async () => {
      run = (await poolRuns(second, roomId)).find((r) => r.round === rounds + 1 && r.status === "done");
      return run !== undefined;
    }, 120_000, `round ${rounds + 1} after the restart`);
    // Its steps and updates (AdamW's bias correction, the warmup) go on from the last round's; its
    // data, the round's own episodes, are drawn from their start, as round 1 drew its own.
    const after = state(rounds + 1);
    expect(after).toMatchObject({ step: 2 * rounds + 2, updates: 2 * rounds + 2 });
    expect(after.cursor).toBe(state(1).cursor);
    expect(run.steps).toBe(2 * rounds + 2);
    expect(run.history.map((m: any) => m.step)).toEqual([2 * rounds + 1, 2 * rounds + 2]);
    // At the end of the warmup of 3 updates, and past it, where a round of its own would begin it again (1e-3 / 3).
    for (const m of run.history) expect(m.lr).toBeCloseTo(1e-3, 12);
    second.child.kill("SIGKILL");
  }, 300_000);

  it("refuses a pool folder that another policy's pool wrote, naming it", async () => {
    const { dir } = await tinyCheckpoint(27);
    const s = await serve();
    const base = { world: "tomi", seed: 2, loop: true, tickMs: 0, pauseMs: 0, quiz: { questions: 1, deadlineMs: 20_000 } };
    const selfPlay = { pool: "shared-name", everyEpisodes: 1000 };
    const a = await api(s, "/api/rooms", { method: "POST", body: { type: "simulation", options: { ...base, defaultAgent: `policy:${dir}`, selfPlay } } });
    expect(a.status, JSON.stringify(a.json)).toBe(201);
    // One episode's quiz makes the pool save its state.
    await until(() => existsSync(join(s.store, "selfplay", "shared-name", "pool.json")), 60_000, "the pool's state");
    expect((await api(s, `/api/rooms/${a.json.roomId}`, { method: "DELETE" })).status).toBe(200);
    const b = await api(s, "/api/rooms", { method: "POST", body: { type: "simulation", options: { ...base, defaultAgent: `policy:${dir}?temperature=0.5`, selfPlay } } });
    expect(b.status).toBe(400);
    expect(JSON.stringify(b.json)).toContain(join(s.store, "selfplay", "shared-name", "pool.json"));
    s.child.kill("SIGKILL");
  }, 120_000);
});

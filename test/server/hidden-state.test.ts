/**
 * Finding 4 of the hardening issue: hidden state could be rebuilt from public fields. The room
 * state's public `seed` let a seated client replay the story offline and predict the other
 * agents' observations and mental states; a human baseline's `turn` carried item ids like
 * `tomi-n12-seed2.txt#0` and `GET /api/runs/:id` showed the server's absolute data path, so
 * `generate tomi --n 12 --seed 2` rewrote the file with every label. Now seeds and data files stay
 * on the server while a run is live (and are published when it ends), item ids are opaque, and no
 * answer carries an absolute path of the server's.
 */
import type { Room as SdkRoom } from "@colyseus/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoRooms } from "../../server/demo.js";
import { bytesContain, decodeFrames } from "./wire.js";
import { collect, framesOf, startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

const stateOf = (room: SdkRoom) => decodeFrames(framesOf(room)).state as any;
const absolutePaths = (text: string) => [ts.store, ts.dataRoot, "/tmp/"].filter((p) => text.includes(p));

describe("hidden state", () => {
  it("a simulation room keeps its seed from every client while its run is live, and publishes it at the end", async () => {
    const created = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 424242, humanSeats: "all", tickMs: 50, turnDeadlineMs: 300 } } });
    expect(created.status, created.text).toBe(201);
    const { roomId, runId } = created.json;
    const seated = await ts.join(roomId, { seat: "0", name: "sam" });
    const spectator = await ts.join(roomId);
    await until(() => (stateOf(spectator)?.timeline?.length ?? 0) >= 2, 10_000, "the episode under way");
    // While live: not in any byte either client received, nor in the run the API shows.
    for (const room of [seated, spectator]) {
      expect(stateOf(room).seed).toBe("");
      expect(bytesContain(framesOf(room), "424242")).toBe(false);
    }
    const live = await ts.api(`/api/runs/${runId}`);
    expect(live.json.run.status).toBe("running");
    expect(live.json.run.params.seed).toBeUndefined();
    expect(live.json.run.withheld).toEqual(["seed"]);
    expect(JSON.stringify((await ts.api("/api/runs")).json)).not.toContain("424242");
    // (The admin sees it.)
    expect((await ts.api(`/api/runs/${runId}`, { admin: true })).json.run.params.seed).toBe(424242);
    // At the end: published for replay.
    await until(() => stateOf(spectator).status === "finished", 30_000, "the episode's end");
    expect(stateOf(spectator).seed).toBe("424242");
    await until(async () => (await ts.api(`/api/runs/${runId}`)).json.run.status === "done", 5000, "the run's end");
    expect((await ts.api(`/api/runs/${runId}`)).json.run.params.seed).toBe(424242);
    expect((await ts.api(`/api/runs/${runId}/episodes`)).json.episodes[0].seed).toBe(424242);
    await seated.leave();
    await spectator.leave();
  });

  it("a human baseline shows its person opaque item ids, and nobody its data file or seed while it runs", async () => {
    const created = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 6, seed: 77 }, agent: "human", turnDeadlineMs: 60_000 } } });
    expect(created.status, created.text).toBe(201);
    const { roomId, runId } = created.json;
    const person = await ts.join(roomId, { seat: "respondent", name: "pat" });
    const turns = collect<{ timestep: number; observation: { data: { itemId: string; candidates: string[] } } }>(person, "turn");
    const spectator = await ts.join(roomId);
    await until(() => turns.length >= 1, 10_000, "the first question");
    const itemId = turns[0]!.observation.data.itemId;
    expect(itemId).toMatch(/^q-[A-Za-z0-9_-]{12}$/);
    for (const room of [person, spectator]) {
      for (const leak of ["tomi-n6-seed77", "seed77", ".txt#"]) expect(bytesContain(framesOf(room), leak), leak).toBe(false);
    }
    const world = JSON.parse(decodeFrames(framesOf(spectator)).perspectives.get("world")!.steps[0]!.data) as { id: string };
    expect(world.id).toBe(itemId);

    const live = await ts.api(`/api/runs/${runId}`);
    expect(live.json.run.withheld?.sort()).toEqual(["data", "generate"]);
    expect(live.text).not.toContain("seed77");
    expect(absolutePaths(live.text)).toEqual([]);

    // Answer every question: the run ends, and what was withheld is published, as store paths.
    for (let n = 1; n <= 6; n++) {
      await until(() => turns.some((t) => t.timestep === n), 10_000, `question ${n}`);
      // One of the question's candidates: a person's answer outside them is refused (person-answer.ts).
      const turn = turns.find((t) => t.timestep === n)!;
      person.send("act", { action: { answer: turn.observation.data.candidates[0]! }, timestep: n });
    }
    await until(async () => (await ts.api(`/api/runs/${runId}`)).json.run.status === "done", 10_000, "the run's end");
    const done = await ts.api(`/api/runs/${runId}`);
    expect(done.json.run.params).toMatchObject({ data: "generated/tomi-n6-seed77.txt", generate: { n: 6, seed: 77 } });
    expect(done.json.report.data).toBe("generated/tomi-n6-seed77.txt");
    const episodes = await ts.api(`/api/runs/${runId}/episodes?limit=100`);
    expect(episodes.json.episodes[0].result.file).toBe("generated/tomi-n6-seed77.txt");
    expect(absolutePaths(done.text + episodes.text)).toEqual([]);
    await person.leave();
    await spectator.leave();
  });

  it("draws a seed nobody can read in the source when none is given (the demo rooms give none)", async () => {
    for (const { options } of await demoRooms()) {
      expect("seed" in options).toBe(false);
      if ("generate" in options) expect(options.generate).not.toHaveProperty("seed");
    }
    const seeds = new Set<unknown>();
    for (let i = 0; i < 3; i++) {
      const r = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", tickMs: 1000 } } });
      seeds.add((await ts.api(`/api/runs/${r.json.runId}`, { admin: true })).json.run.params.seed);
      await ts.api(`/api/rooms/${r.json.roomId}`, { method: "DELETE", admin: true });
    }
    expect(seeds.size).toBe(3);
    expect(seeds.has(0)).toBe(false);
  });
});

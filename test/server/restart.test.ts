/**
 * Finding 8 of the hardening issue: after kill -9 of the server, its rooms were gone and each
 * room's episode in progress was lost. Now a room created through the API comes back when the
 * server starts again on the same store: under its id, with its options and its private tokens;
 * a benchmark room goes on with its run where the log ends (no question asked twice, none
 * skipped), and a simulation room plays the episode it was in again from its start.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ADMIN, serve, type Served } from "./child-server.js";
import { connect, until } from "./raw-client.js";

async function api(s: Served, path: string, init: { method?: string; body?: unknown; admin?: boolean } = {}) {
  const res = await fetch(s.base + path, {
    method: init.method ?? "GET",
    headers: { "content-type": "application/json", ...(init.admin ? { authorization: `Bearer ${ADMIN}` } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as any };
}

const logLines = (s: Served, runId: string) =>
  readFileSync(join(s.store, "runs", runId, "episodes.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; result?: { id: string }; episode?: number; seed?: number });

describe("a server killed with kill -9", () => {
  it("brings its API rooms back on restart: the benchmark run goes on where its log ends, the simulation replays its episode", async () => {
    const first = await serve();
    const bench = await api(first, "/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 30, seed: 5 }, agent: "simulation", tickMs: 120, title: "survives" } } });
    expect(bench.status).toBe(201);
    const sim = await api(first, "/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "simulation", options: { world: "tomi", seed: 3, loop: true, tickMs: 60, pauseMs: 100, humanSeats: "all", private: true, title: "private loop" } },
    });
    expect(sim.status).toBe(201);
    expect((await api(first, "/api/rooms", { admin: true })).json.rooms).toHaveLength(2);
    expect(statSync(join(first.store, "rooms.json")).mode & 0o777).toBe(0o600);

    // Kill it mid-run: the benchmark some questions in, the simulation into its second episode.
    await until(async () => (await api(first, `/api/rooms/${bench.json.roomId}`)).json.progress.done >= 6, 20_000, "six questions");
    await until(async () => (await api(first, `/api/rooms/${sim.json.roomId}`, { admin: true })).json.episode >= 2, 20_000, "the second episode");
    const episodeAtKill = (await api(first, `/api/rooms/${sim.json.roomId}`, { admin: true })).json.episode as number;
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const doneAtKill = logLines(first, bench.json.runId).length;
    const logFile = (runId: string) => join(first.store, "runs", runId, "episodes.jsonl");
    const inodes = [bench.json.runId, sim.json.runId].map((id: string) => statSync(logFile(id)).ino);

    const second = await serve(first.store);
    await until(() => /2 rooms of the last run restored/.test(second.out()), 5000, "the server to say what it restored");
    const rooms = (await api(second, "/api/rooms", { admin: true })).json.rooms as { roomId: string; title: string; runId: string; visibility: string; type: string }[];
    expect(rooms.map((r) => [r.roomId, r.type, r.title, r.runId, r.visibility]).sort()).toEqual(
      [
        [bench.json.roomId, "benchmark", "survives", bench.json.runId, "public"],
        [sim.json.roomId, "simulation", "private loop", sim.json.runId, "private"],
      ].sort(),
    );
    // A server alone has no paused writer to fear: its logs are taken up as they are, not copied (as a group's are).
    expect([bench.json.runId, sim.json.runId].map((id: string) => statSync(logFile(id)).ino)).toEqual(inodes);
    // The private room's tokens, handed out before the kill, still open it.
    const reserved = await fetch(`${second.base}/matchmake/joinById/${sim.json.roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token: sim.json.spectatorToken }) });
    expect(reserved.status).toBe(200);
    const r = (await reserved.json()) as { sessionId: string; processId: string; roomId: string };
    const spectator = connect(`${second.base.replace(/^http/, "ws")}/${r.processId}/${r.roomId}?sessionId=${r.sessionId}`);
    await until(() => spectator.seen.token !== "", 10_000, "the spectator's join");
    spectator.ws.close();

    // The simulation plays the episode it was in again, from its start.
    const simAfter = (await api(second, `/api/rooms/${sim.json.roomId}`, { admin: true })).json;
    expect(simAfter.episode).toBe(episodeAtKill);
    await until(() => logLines(second, sim.json.runId).some((l) => l.episode === episodeAtKill), 30_000, "the replayed episode in the log");
    const episodes = logLines(second, sim.json.runId).map((l) => l.episode);
    expect(new Set(episodes).size).toBe(episodes.length);
    expect(logLines(second, sim.json.runId).find((l) => l.episode === episodeAtKill)!.seed).toBe(3 + episodeAtKill - 1);

    // The benchmark goes on from where its log ended, to the 30th question, each asked once.
    await until(async () => (await api(second, `/api/runs/${bench.json.runId}`)).json.run.status === "done", 30_000, "the resumed run's end");
    const ids = logLines(second, bench.json.runId).map((l) => l.result!.id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    expect(doneAtKill).toBeGreaterThanOrEqual(6);
    const report = (await api(second, `/api/runs/${bench.json.runId}`)).json.report;
    expect(report).toMatchObject({ total: 30, correct: 30 });
    second.child.kill("SIGTERM");
    await new Promise((r) => second.child.once("exit", r));
  }, 120_000);

  it("does not bring back a room an admin stopped", async () => {
    const first = await serve();
    const sim = await api(first, "/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 3, tickMs: 500 } } });
    expect((await api(first, `/api/rooms/${sim.json.roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const second = await serve(first.store);
    expect((await api(second, "/api/rooms", { admin: true })).json.rooms).toEqual([]);
    second.child.kill("SIGTERM");
    await new Promise((r) => second.child.once("exit", r));
  });
});

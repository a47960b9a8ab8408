/**
 * Shutting the server down (what Ctrl-C does) stops every room, logs the episode in progress as
 * aborted, marks the runs interrupted and flushes every log: nothing written is lost.
 */
import { describe, expect, it } from "vitest";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { startTestServer, until } from "./harness.js";

describe("graceful shutdown", () => {
  it("interrupts running rooms, logs their episodes and flushes the logs", async () => {
    const ts = await startTestServer();
    const sim = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", seed: 8, tickMs: 100, loop: true, pauseMs: 0 } } });
    const bench = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 30, seed: 3 }, agent: "simulation", tickMs: 100 } },
    });
    expect(sim.status).toBe(201);
    expect(bench.status).toBe(201);
    // Until the looping room has finished one episode and the benchmark has answered a few questions.
    await until(async () => (await ts.api(`/api/rooms/${sim.json.roomId}`)).json.episode >= 2, 15_000, "a second episode");
    await until(async () => (await ts.api(`/api/rooms/${bench.json.roomId}`)).json.progress.done >= 3, 15_000, "three answers");
    const spectator = await ts.join(sim.json.roomId);
    await ts.close();
    expect(spectator.connection.isOpen).toBe(false);

    const store = await RunStore.open(ts.store);
    const simRun = store.get(sim.json.runId)!;
    expect(simRun).toMatchObject({ status: "interrupted", summary: { episodes: expect.any(Number) } });
    const episodes = readEpisodeLog<{ end: string }>(store.episodesPath(simRun));
    expect(episodes.torn).toBe(false);
    expect(episodes.records.at(0)!.end).toBe("terminal");
    expect(episodes.records.at(-1)!.end).toBe("aborted");

    const benchRun = store.get(bench.json.runId)!;
    expect(benchRun.status).toBe("interrupted");
    const answered = readEpisodeLog<{ result: { id: string } }>(store.episodesPath(benchRun));
    expect(answered.torn).toBe(false);
    expect(answered.total).toBeGreaterThanOrEqual(3);
    expect(answered.total).toBeLessThan(30);
    expect(benchRun.summary).toMatchObject({ total: expect.any(Number) });
  });
});

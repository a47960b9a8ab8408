/**
 * A self-play round trains in a worker thread (server/self-play/round-thread.ts), off the server's
 * event loop: while it runs, the server answers /api/health and a spectator keeps receiving the
 * room's patches (on the event loop the round froze them all for its whole length). A round that
 * fails is on the board with why, the server and its room going on; stopping the server stops the
 * round at its next step, with a checkpoint. The server runs in this process, so a frozen loop
 * shows as a gap in what this test's own loop sees: the patches it received, the answers it got.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunStore } from "../../store/run-store.js";
import { listCheckpoints } from "../../trainers/common/checkpoint-folders.js";
import { tinyCheckpoint } from "../policy/fixtures.js";
import { startTestServer, until, type TestServer } from "./harness.js";

/**
 * The longest the loop may go without a patch to the spectator or an answer to /api/health while a
 * round trains. A frozen loop misses it by the round's length (here: it answers nothing until the
 * round ends); on a loaded machine the room's own pauses (a slow policy turn, the quiz at an
 * episode's end) reach a few seconds.
 */
const MAX_GAP_MS = 10_000;
/** How long the round is watched: well over the bound, so that a frozen loop cannot pass. */
const WINDOW_MS = 25_000;

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts?.close();
});

/** A looping ToMi room on `server` whose seats `dir`'s policy plays, quizzed after each episode, training every episode. */
function selfPlayRoom(server: TestServer, dir: string, seed: number, selfPlay: Record<string, unknown>) {
  const options = {
    world: "tomi", seed, defaultAgent: `policy:${dir}?max_new_tokens=16&temperature=1`, loop: true, tickMs: 0, pauseMs: 0, turnDeadlineMs: 20_000, title: "off the loop",
    quiz: { questions: 2 }, selfPlay: { everyEpisodes: 1, ...selfPlay },
  };
  return server.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options } });
}

const roundsOf = async (server: TestServer, roomId: string) => ((await server.api("/api/training", { admin: true })).json.runs as any[]).filter((r) => r.title.startsWith(`Self-play ${roomId}:`));

describe("a self-play round off the event loop", () => {
  it("puts a round that fails in its thread on the board with why, and the room plays on", async () => {
    const { dir } = await tinyCheckpoint(32);
    // The turns' action grammar needs more than 2 tokens: the round fails in its thread, saying so.
    const res = await selfPlayRoom(ts, dir, 12, { turns: true, trainer: { steps: 2, prompts: 2, groupSize: 2, maxNewTokens: 2 } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    let failed: any;
    await until(async () => {
      failed = (await roundsOf(ts, roomId)).find((r) => r.status === "failed");
      return failed !== undefined;
    }, 240_000, "the round to fail");
    expect(failed.round).toBe(1);
    expect(failed.error).toMatch(/more than maxNewTokens \(2\)/);
    // Anyone may see why (the room is public), and the room goes on playing episodes.
    expect(((await ts.api("/api/training")).json.runs as any[]).find((r) => r.runId === failed.runId).error).toBe(failed.error);
    const episode = (await ts.api(`/api/rooms/${roomId}`)).json.episode as number;
    await until(async () => (await ts.api(`/api/rooms/${roomId}`)).json.episode > episode, 60_000, "the next episode");
    expect((await ts.api("/api/health")).status).toBe(200);
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
  }, 400_000);

  it("leaves the server answering /api/health and patching its spectators while it trains; stopping the server stops the round with a checkpoint", async () => {
    // The last test of the file: it stops the server.
    const own = ts;
    const { dir } = await tinyCheckpoint(31);
    // A round that outlasts the test: the measurement is a window of it, then the server stops it.
    const res = await selfPlayRoom(own, dir, 11, { turns: false, trainer: { steps: 10_000, prompts: 2, groupSize: 2, maxNewTokens: 8, lr: 1e-3, seed: 5 } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const spectator = await own.join(roomId);
    let dropped = false;
    spectator.onLeave(() => (dropped = true));
    const patches: number[] = [];
    spectator.onStateChange(() => patches.push(performance.now()));
    const running = async () => (await roundsOf(own, roomId)).find((r) => r.round === 1 && r.status === "running" && r.history.length > 0);
    // Before the window (the first episode, its quiz, the thread's start from the TypeScript
    // sources): a poll that meets a reset keep-alive connection on this loaded machine asks again.
    await until(async () => (await running().catch(() => undefined)) !== undefined, 240_000, "the first round's first step");

    // For WINDOW_MS of the round: /api/health asked every 100 ms, each answer's latency kept.
    const from = performance.now();
    let slowest = 0;
    let answers = 0;
    while (performance.now() - from < WINDOW_MS) {
      const t0 = performance.now();
      const health = await fetch(`${own.base}/api/health`, { signal: AbortSignal.timeout(60_000) });
      expect(health.status).toBe(200);
      slowest = Math.max(slowest, performance.now() - t0);
      answers++;
      await new Promise((r) => setTimeout(r, 100));
    }
    const to = performance.now();
    // The round trained all through the window.
    const round = await running();
    expect(round, "the round was still running").toBeDefined();
    const gaps = [from, ...patches.filter((t) => t >= from && t <= to), to].map((t, i, all) => (i === 0 ? 0 : t - all[i - 1]!));
    expect(answers).toBeGreaterThan(3);
    expect(Math.max(...gaps), `gaps between patches: ${gaps.map((g) => Math.round(g)).join(", ")} ms`).toBeLessThan(MAX_GAP_MS);
    expect(slowest).toBeLessThan(MAX_GAP_MS);
    expect(dropped).toBe(false);

    // Stopping the server stops the round at its next step: a checkpoint there, the run interrupted.
    const t0 = performance.now();
    await own.close();
    expect(performance.now() - t0).toBeLessThan(60_000);
    const saved = listCheckpoints(join(own.store, "selfplay", roomId, "round-1"));
    expect(saved.length).toBe(1);
    expect(saved[0]!.step).toBeGreaterThanOrEqual(round.history.length);
    expect(saved[0]!.step).toBeLessThanOrEqual(round.history.length + 2);
    expect(saved[0]!.step).toBeLessThan(10_000);
    expect((await RunStore.open(own.store)).get(round.runId)?.status).toBe("interrupted");
  }, 480_000);
});

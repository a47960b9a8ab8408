/**
 * Self-play in the live server: a looping ToMi room whose seats a policy plays, with a schedule
 * (every 2 episodes) trains that policy with GRPO on the room's episodes, writes the round's
 * checkpoint, and plays it from the next episode on, while a spectator stays connected; the round's
 * metrics reach the training board (REST) and the socket.io progress stream. A `train grpo --server`
 * run elsewhere posts its metrics through the admin API.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MetricsPublisher } from "../../trainers/grpo/publisher.js";
import { framesOf, startTestServer, until, ADMIN, type TestServer, listenToProgress, type ProgressListener } from "../server/harness.js";
import { tinyCheckpoint } from "../policy/fixtures.js";

let ts: TestServer;
let progress: ProgressListener;
let events: ProgressListener["events"];
beforeAll(async () => {
  ts = await startTestServer();
  progress = await listenToProgress(ts);
  events = progress.events;
});
afterAll(async () => {
  progress.close();
  await ts.close();
});

describe("self-play", () => {
  it("trains the room's policy on its episodes and swaps it in between episodes without dropping the spectator", async () => {
    const { dir } = await tinyCheckpoint(21);
    const spec = `policy:${dir}?max_new_tokens=12&temperature=0.7`;
    const res = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: {
        type: "simulation",
        options: {
          world: "tomi", seed: 3, defaultAgent: spec, loop: true, tickMs: 0, pauseMs: 0, turnDeadlineMs: 20_000, title: "self-play",
          selfPlay: { everyEpisodes: 2, trainer: { steps: 2, prompts: 2, groupSize: 2, maxNewTokens: 16, lr: 1e-3, klCoef: 0.01 } },
        },
      },
    });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const spectator = await ts.join(roomId);
    let dropped = false;
    spectator.onLeave(() => (dropped = true));

    // The round runs and finishes; the board has its steps.
    let run: any;
    await until(async () => {
      const t = await ts.api("/api/training");
      run = t.json.runs.find((r: any) => r.round === 1 && r.status === "done");
      return run !== undefined;
    }, 60_000, "the first self-play round");
    expect(run.history.map((m: any) => m.step)).toEqual([1, 2]);
    expect(run.roomIds).toContain(roomId);
    expect(run.title).toBe(`Self-play ${roomId}: round 1`);
    const round1 = join(ts.store, "selfplay", roomId, "round-1");
    expect(run.checkpoint).toBe(round1);
    for (const f of ["model.safetensors", "config.json", "tokenizer.json", "reference/model.safetensors"]) expect(existsSync(join(round1, f)), f).toBe(true);

    // The round is a store run with its rollouts, and its metrics went out on socket.io.
    const stored = await ts.api(`/api/runs/${run.runId}`);
    expect(stored.json.run).toMatchObject({ kind: "grpo", status: "done" });
    expect(events.filter((e) => e.type === "progress" && e.event.kind === "trainer" && e.event.runId === run.runId).map((e) => e.event.metrics.step)).toEqual([1, 2]);
    expect(events.some((e) => e.type === "finished" && e.event.runId === run.runId && e.event.checkpoint === round1)).toBe(true);

    // The next episode plays round 1: the seats' controller says so, and the spectator is still there.
    const swapped = `policy:${round1}?max_new_tokens=12&temperature=0.7`;
    await until(async () => (await ts.api(`/api/rooms/${roomId}`)).json.seats.every((s: any) => s.controller === swapped), 60_000, "the swap");
    const before = framesOf(spectator).length;
    await until(() => framesOf(spectator).length > before + 3, 20_000, "patches after the swap");
    expect(dropped).toBe(false);
    await spectator.leave();
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
  });

  it("refuses a schedule without a policy to train, or without a period", async () => {
    const bad = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: { everyEpisodes: 2 } } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("selfPlay: the seats must be played by one policy:DIR agent to train (found none)");
    const noPeriod = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: {} } } });
    expect(noPeriod.status).toBe(400);
    expect(noPeriod.json.error).toContain("selfPlay.everyEpisodes: give everyEpisodes or everyMinutes");
    const badTrainer = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: { everyEpisodes: 1, trainer: { clipLow: 3 } } } } });
    expect(badTrainer.status).toBe(400);
    expect(badTrainer.json.error).toContain("selfPlay.trainer.clipLow");
  });

  it("takes the metrics of a training run elsewhere (admin only) onto the board and the stream", async () => {
    const metrics = { step: 1, reward: 0.5, accuracy: 0.25, kl: 0.01, entropy: 1.2, clipFraction: 0.1, loss: -0.2, responseLength: 3 };
    const denied = await ts.api("/api/training/events", { method: "POST", body: { type: "progress", event: { runId: "cli-run", title: "t", steps: 4, metrics } } });
    expect(denied.status).toBe(401);
    const bad = await ts.api("/api/training/events", { method: "POST", admin: true, body: { type: "progress", event: { runId: "cli-run", title: "t", steps: 4, metrics: { ...metrics, reward: "high" } } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("event.metrics.reward");

    const notes: string[] = [];
    const p = new MetricsPublisher(ts.base, ADMIN, (m) => notes.push(m));
    p.publish({ runId: "cli-run", title: "GRPO /tmp/x", source: "ToMi", steps: 4, metrics: metrics as never });
    p.publish({ runId: "cli-run", title: "GRPO /tmp/x", source: "ToMi", steps: 4, metrics: { ...metrics, step: 2, reward: 0.75 } as never });
    await p.finish("cli-run", "done");
    expect(notes).toEqual([]);
    const got = await ts.api("/api/training/cli-run");
    expect(got.json).toMatchObject({ runId: "cli-run", status: "done", steps: 4, source: "ToMi" });
    expect(got.json.history.map((m: any) => m.reward)).toEqual([0.5, 0.75]);
    await until(() => events.some((e) => e.type === "finished" && e.event.runId === "cli-run"), 5000, "the finished event");

    // A server that is not there costs a note, never the run.
    const lost = new MetricsPublisher("http://127.0.0.1:9", ADMIN, (m) => notes.push(m));
    lost.publish({ runId: "x", title: "x", source: "", steps: 1, metrics: metrics as never });
    await lost.finish("x", "done");
    expect(notes.length).toBe(1);
    expect(notes[0]).toContain("could not publish metrics");
  });
});

/**
 * Finding 3 of the hardening issue: private runs leaked over socket.io `/progress`. The REST API
 * hid private rooms and runs, but the progress stream sent their events to any anonymous client:
 * room and run ids, titles, agent names, scores and per-question outcomes. Now a private run's
 * events go only to clients holding one of its room's tokens or the admin token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, listenToProgress, startTestServer, until, type ProgressListener, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

const bench = (options: Record<string, unknown>) =>
  ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 6, seed: 4 }, agent: "simulation", tickMs: 60, ...options } } });

describe("the progress stream", () => {
  it("sends a private run's events only to holders of its token and the admin; the public run's to everyone", async () => {
    const listeners: Record<string, ProgressListener> = {
      anonymous: await listenToProgress(ts),
      wrongToken: await listenToProgress(ts, "not-a-token-of-this-server"),
      guesser: await listenToProgress(ts),
      admin: await listenToProgress(ts, ADMIN),
    };
    const priv = await bench({ private: true, title: "secret study", agent: "random:7" });
    expect(priv.status, priv.text).toBe(201);
    const { roomId, runId, spectatorToken } = priv.json as { roomId: string; runId: string; spectatorToken: string };
    // A guesser subscribes to the run's id without a token: it gets nothing of it either.
    listeners.guesser!.socket.emit("subscribe", { runs: [runId, "other"] });
    listeners.holder = await listenToProgress(ts, spectatorToken);
    const subscriber = await listenToProgress(ts);
    subscriber.socket.emit("subscribe", { runs: [runId], token: spectatorToken });
    const pub = await bench({});
    expect(pub.status, pub.text).toBe(201);
    await until(() => listeners.admin!.events.some((e) => e.type === "finished" && e.event.runId === runId), 30_000, "the private run's end");
    await until(() => listeners.anonymous!.events.some((e) => e.type === "finished" && e.event.runId === pub.json.runId), 30_000, "the public run's end");

    for (const name of ["anonymous", "wrongToken", "guesser"]) {
      const seen = JSON.stringify(listeners[name]!.events);
      for (const secret of [roomId, runId, "secret study"]) expect(seen, `${name} saw ${secret}`).not.toContain(secret);
      // (The guesser subscribed to other runs, so it follows only those.)
      if (name !== "guesser") expect(listeners[name]!.events.some((e) => e.event.runId === pub.json.runId)).toBe(true);
    }
    // The admin listened from before the run; the token holders from just after its creation.
    for (const [name, l, least] of [["holder", listeners.holder!, 1], ["subscriber with the token", subscriber, 1], ["admin", listeners.admin!, 6]] as const) {
      const mine = l.events.filter((e) => e.event.runId === runId);
      expect(mine.filter((e) => e.type === "progress").length, name).toBeGreaterThanOrEqual(least);
      expect(mine.at(-1)).toMatchObject({ type: "finished", event: { roomId, title: "secret study", agent: "random:7" } });
    }
    for (const l of [...Object.values(listeners), subscriber]) l.close();
  });
});

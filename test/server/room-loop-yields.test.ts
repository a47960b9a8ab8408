/**
 * A room never holds the event loop: a looping simulation room with no tick and no pause, played
 * by scripted agents that answer synchronously, used to run episode after episode without ever
 * giving the event loop a turn (every await resolved at once), and the server answered nothing
 * again. The room loop now yields between timesteps and between episodes whatever the options say
 * (server/rooms/pause.ts). A server process of its own (child-server.ts): a hung one cannot hang
 * the test.
 */
import { describe, expect, it } from "vitest";
import { ADMIN, serve } from "./child-server.js";

/** A request that must be answered within `ms` (generous: the machine is loaded), or fails. */
async function answered(url: string, init: RequestInit = {}, ms = 2000) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
  return { status: res.status, json: (await res.json()) as any };
}

const headers = { "content-type": "application/json", authorization: `Bearer ${ADMIN}` };

/** A server of its own and a room on it, created within `ms`. */
async function roomOnServer(body: unknown, ms: number) {
  const s = await serve();
  const created = await answered(`${s.base}/api/rooms`, { method: "POST", headers, body: JSON.stringify(body) }, ms);
  expect(created.status).toBe(201);
  return { s, roomId: created.json.roomId as string };
}

describe("a room with loop, tickMs 0 and pauseMs 0", () => {
  it("leaves the server answering health and room requests while it plays episode after episode", async () => {
    const { s, roomId } = await roomOnServer({ type: "simulation", options: { world: "tomi", seed: 1, loop: true, tickMs: 0, pauseMs: 0, defaultAgent: "scripted" } }, 10_000);
    // The room plays on meanwhile: it goes past several episodes while every request is answered.
    let episode = 0;
    for (let i = 0; i < 10; i++) {
      expect((await answered(`${s.base}/api/health`)).status).toBe(200);
      episode = (await answered(`${s.base}/api/rooms/${roomId}`)).json.episode as number;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(episode).toBeGreaterThan(1);
    expect((await answered(`${s.base}/api/rooms/${roomId}`, { method: "DELETE", headers })).status).toBe(200);
  });

  it("the same for a benchmark room with tickMs 0 and a synchronous agent", async () => {
    const { s, roomId } = await roomOnServer({ type: "benchmark", options: { benchmark: "tomi", generate: { n: 3000, seed: 2 }, agent: "simulation", tickMs: 0 } }, 30_000);
    for (let i = 0; i < 10; i++) {
      expect((await answered(`${s.base}/api/health`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await answered(`${s.base}/api/rooms/${roomId}`)).json.progress.done).toBeGreaterThan(0);
    await answered(`${s.base}/api/rooms/${roomId}`, { method: "DELETE", headers });
  });
});

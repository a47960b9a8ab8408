/**
 * A simulation room with `audit: true` marks the leaks of each timestep's actions on the world's
 * timeline as they happen, logs each episode's audit, and never sends the marks to a seated
 * client (a mark states a true fact: it is world knowledge). A Hi-ToM room whose seat is played by
 * a seeded random agent (it claims any container, the truth included, wherever it is) leaks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Leak } from "../../worlds/core/leak-audit.js";
import { decodeFrames } from "./wire.js";
import { framesOf, startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

describe("live leak audit in a simulation room", () => {
  it("marks leaks on the world's steps for spectators only, and logs each episode's audit", async () => {
    const created = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: {
        type: "simulation",
        options: { world: "hitom", seed: 2, audit: true, defaultAgent: "random:7", humanSeats: [0], tickMs: 0, turnDeadlineMs: 200, loop: true, pauseMs: 20, private: true },
      },
    });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const spectator = await ts.join(roomId, { token: created.json.spectatorToken as string });
    const seated = await ts.join(roomId, { token: (created.json.seatTokens as { token: string }[])[0]!.token, name: "tester" });
    const marks = () => [...(decodeFrames(framesOf(spectator)).perspectives.get("world")?.steps ?? [])].filter((s) => s.leaks);
    await until(() => marks().length >= 2, 60_000, "two timesteps with leaks on the world's timeline");
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });

    const live = marks().flatMap((s) => (JSON.parse(s.leaks!) as Leak[]).map((l) => ({ ...l, step: s.timestep })));
    for (const l of live) {
      expect(l.step).toBe(l.timestep);
      expect(l.perceivedBy).not.toContain(l.agent);
      expect(l.why).toContain(l.agent);
    }
    // The seated client holds no world perspective, so no mark reached it.
    const mine = decodeFrames(framesOf(seated));
    expect(mine.perspectivesEverSeen.has("world")).toBe(false);
    for (const l of live) expect(Buffer.concat(framesOf(seated)).includes(l.why)).toBe(false);

    // Each logged episode carries its audit; the live marks are among the logged leaks.
    const runId = decodeFrames(framesOf(spectator)).state!.runId as string;
    const log = await ts.api(`/api/runs/${runId}/episodes?limit=100`, { admin: true });
    const logged = (log.json.episodes as { audit?: { leaks: Leak[] } }[]).flatMap((e) => e.audit?.leaks ?? []);
    expect(logged.length).toBeGreaterThan(0);
    const key = (l: Leak) => `${l.agent}@${l.timestep}:${l.fact.id}`;
    const loggedKeys = new Set(logged.map(key));
    const finished = (log.json.episodes as unknown[]).length;
    expect(finished).toBeGreaterThan(0);
    expect(live.filter((l) => loggedKeys.has(key(l))).length).toBeGreaterThan(0);

    // The API's episode audit says the same as the log.
    const first = (log.json.episodes as { audit?: { leaks: Leak[] } }[]).findIndex((e) => (e.audit?.leaks.length ?? 0) > 0);
    const api = await ts.api(`/api/runs/${runId}/episodes/${first}/audit`, { admin: true });
    expect(api.status, api.text).toBe(200);
    expect(new Set((api.json.leaks as Leak[]).map(key))).toEqual(new Set((log.json.episodes[first].audit.leaks as Leak[]).map(key)));
    // Like the episodes, a private room's audit is the admin's to read.
    expect((await ts.api(`/api/runs/${runId}/episodes/${first}/audit`)).status).toBe(404);
  });
});

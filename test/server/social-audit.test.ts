/**
 * A social room with `audit: true`: a person who posts about items their user was never shown
 * leaks (worlds/social/leak-facts.ts), and the leak is marked on the world's timeline as it
 * happens. A mark says who did see the item: hidden state, for the spectators that hold the
 * spectator token only. Checked on the bytes each socket received (as the privacy tests do): the
 * spectator with the token has the marks; the person in the seat (a seat token is not the
 * spectator token) never receives them; a client with no token is refused before any socket
 * exists; the logged episode's audit, like the episode, is the admin's to read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Leak } from "../../worlds/core/leak-audit.js";
import { decodeFrames, feedsOf } from "./wire.js";
import { collect, framesOf, startTestServer, until, type TestServer } from "./harness.js";
import { joinFrom } from "./raw-client.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});


describe("live leak audit in a social room", () => {
  it("marks a person's post about items they never saw for spectators with the token, never for the seat nor a client without a token", async () => {
    const created = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "social", options: { seed: 7, users: 40, posts: 6, every: 4, humanSeats: [3], tickMs: 150, turnDeadlineMs: 300, audit: true, private: true } },
    });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const seatToken = (created.json.seatTokens as { index: number; agent: string; token: string }[])[0]!;
    const me = seatToken.agent;

    // No token: refused at the reservation, so no socket of that client ever gets a byte.
    const outsider = await joinFrom(ts.base, roomId, {});
    expect(outsider.reservation.status).not.toBe(200);
    expect(outsider.client).toBeUndefined();
    const guessed = await joinFrom(ts.base, roomId, { token: "not-the-spectator-token-0123456789" });
    expect(guessed.client).toBeUndefined();

    const spectator = await ts.join(roomId, { token: created.json.spectatorToken as string });
    const spectatorFrames = framesOf(spectator);
    const seated = await ts.join(roomId, { token: seatToken.token, name: "tester" });
    const seatedFrames = framesOf(seated);
    seated.onMessage("turn", (t: { timestep: number }) => seated.send("act", { action: { action: "ignore" }, timestep: t.timestep }));

    // Items in the world that the person's user has not been shown (their feed is what they saw).
    const unseen = () => {
      const feeds = feedsOf(spectatorFrames);
      const mine = new Set((feeds[me]?.items ?? []).map((i) => i.id));
      return (feeds.world?.items ?? []).filter((i) => i.kind !== "like" && !mine.has(i.id)).map((i) => i.id);
    };
    await until(() => unseen().length >= 3, 30_000, "three items the seat's user has not seen");
    const named = unseen();
    const posted = collect<{ ok: boolean; error?: string }>(seated, "post_result");
    seated.send("post", { content: `Has anyone read ${named.join(", ")}?` });
    await until(() => posted.length > 0, 5000, "the post's answer");
    expect(posted[0]).toEqual({ ok: true });

    const marks = () =>
      [...(decodeFrames(spectatorFrames).perspectives.get("world")?.steps ?? [])]
        .filter((s) => s.leaks)
        .flatMap((s) => (JSON.parse(s.leaks!) as Leak[]).map((l) => ({ ...l, step: s.timestep })));
    await until(() => marks().some((l) => l.agent === me), 20_000, "the person's leak on the world's timeline");
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });

    const live = marks().filter((l) => l.agent === me);
    for (const l of live) {
      expect(l.step).toBe(l.timestep);
      expect(named.map((id) => `item:${id}`)).toContain(l.fact.id);
      expect(l.perceivedBy).not.toContain(me);
      expect(l.why).toContain(me);
    }
    // Only what spectators hold carries the marks: the rule agents leak nothing (they act on their screens).
    expect(marks().every((l) => l.agent === me)).toBe(true);

    // The seat's socket never held the world's timeline, and no mark's words are in its bytes.
    const mine = decodeFrames(seatedFrames);
    expect(mine.perspectivesEverSeen.has("world")).toBe(false);
    expect([...mine.perspectivesEverSeen]).toEqual([me]);
    const seatBytes = Buffer.concat(seatedFrames);
    for (const l of live) expect(seatBytes.includes(l.why)).toBe(false);
    expect(seatBytes.includes("perceivedBy")).toBe(false);

    // The episode's log record carries the same leak; its audit is the admin's to read.
    const runId = decodeFrames(spectatorFrames).state!.runId as string;
    const log = await ts.api(`/api/runs/${runId}/episodes?limit=10`, { admin: true });
    expect(log.status, log.text).toBe(200);
    const episodes = log.json.episodes as { audit?: { leaks: Leak[] } }[];
    const logged = episodes.flatMap((e) => e.audit?.leaks ?? []);
    const key = (l: Leak) => `${l.agent}@${l.timestep}:${l.fact.id}`;
    expect(logged.map(key)).toEqual(expect.arrayContaining(live.map(key)));
    const index = episodes.findIndex((e) => (e.audit?.leaks.length ?? 0) > 0);
    const api = await ts.api(`/api/runs/${runId}/episodes/${index}/audit`, { admin: true });
    expect(api.status, api.text).toBe(200);
    expect((api.json.leaks as Leak[]).map(key)).toEqual(expect.arrayContaining(live.map(key)));
    expect((await ts.api(`/api/runs/${runId}/episodes/${index}/audit`)).status).toBe(404);
    expect((await ts.api(`/api/runs/${runId}/episodes?limit=10`)).status).toBe(404);
  }, 90_000);
});

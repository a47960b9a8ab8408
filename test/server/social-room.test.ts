/**
 * The social room on loopback: spectators watch the cascade (the world feed, each person's feed,
 * any user's view on request); a seated person receives only their own user's feed, perspective
 * and view, never the world feed nor the latent plan, and their post goes out at the next
 * timestep. Checked on the bytes each socket received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runEpisode } from "../../worlds/core/loop.js";
import { playableScenario, socialScenario } from "../../worlds/social/index.js";
import { decodeFrames, feedsOf, type FeedJson } from "./wire.js";
import { collect, framesOf, startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});


/** The first user who reacts to something when the rule agents play the room's network alone: their app opens (a person in that seat gets turns). */
async function firstReactor(seed: number, opts: { users: number; posts: number; every: number }): Promise<number> {
  const sc = playableScenario(socialScenario(seed, opts));
  const episode = await runEpisode(sc.world, { seed, initialState: sc.initialState, agents: sc.scripted, director: sc.director!, maxSteps: 60, mentalStates: false });
  const reactor = episode.turns.find((t) => (t.action as { action: string }).action !== "ignore")!.agent;
  return sc.world.agents(sc.initialState).indexOf(reactor);
}

describe("social room", () => {
  it("shows spectators every feed and any user's view, a person only their own, and publishes a person's post", async () => {
    const network = { users: 40, posts: 6, every: 4 };
    const seat = await firstReactor(7, network);
    const otherSeat = seat === 0 ? 1 : 0;
    const created = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "social", options: { seed: 7, ...network, humanSeats: [seat, otherSeat], tickMs: 150, turnDeadlineMs: 300, private: true } },
    });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const tokens = (created.json.seatTokens as { index: number; agent: string; token: string }[]).sort((a, b) => (a.index === seat ? -1 : b.index === seat ? 1 : 0));
    expect(tokens.map((t) => t.index)).toEqual([seat, otherSeat]);
    const me = tokens[0]!.agent;
    const other = tokens[1]!.agent;

    const spectator = await ts.join(roomId, { token: created.json.spectatorToken as string });
    const spectatorFrames = framesOf(spectator);
    const seated = await ts.join(roomId, { token: tokens[0]!.token, name: "tester" });
    const seatedFrames = framesOf(seated);
    const turns = collect<{ observation: { data?: Record<string, unknown> } }>(seated, "turn");
    // Pass on whatever is offered, so the cascade does not wait for the deadline.
    seated.onMessage("turn", (t: { timestep: number }) => seated.send("act", { action: { action: "ignore" }, timestep: t.timestep }));

    // The person is asked when their user's app opens (the headless run's first reaction), and not before.
    await until(() => turns.length > 0, 20_000, "a turn");
    await until(() => (feedsOf(spectatorFrames).world?.items.length ?? 0) >= 10, 20_000, "ten items in the world feed");

    // The person posts; it goes out at the next timestep, in the world feed and in their own feed.
    const posted = collect<{ ok: boolean; error?: string }>(seated, "post_result");
    seated.send("post", { content: "Testing the social room, one two three." });
    await until(() => posted.length > 0, 5000, "the post's answer");
    expect(posted[0]).toEqual({ ok: true });
    await until(() => (feedsOf(spectatorFrames).world?.items ?? []).some((i) => i.text === "Testing the social room, one two three."), 10_000, "the post in the world feed");
    const post = feedsOf(spectatorFrames).world!.items.find((i) => i.text === "Testing the social room, one two three.")!;
    expect(post).toMatchObject({ kind: "post", author: me, parent: "", depth: -1 });
    await until(() => (feedsOf(seatedFrames)[me]?.items ?? []).some((i) => i.id === post.id && i.via === "own"), 10_000, "the post in the person's feed");

    // Bad posts are answered, not crashing anything.
    seated.send("post", { content: "   " });
    seated.send("post", { content: "x", topic: "not-a-topic" });
    seated.send("post", { content: "x", extra: 1 });
    await until(() => posted.length >= 4, 5000, "answers to the bad posts");
    expect(posted.slice(1).map((p) => p.ok)).toEqual([false, false, false]);
    expect(posted[1]!.error).toMatch(/content.*empty/);
    expect(posted[2]!.error).toMatch(/no topic "not-a-topic"/);

    // Views: a spectator may ask for anyone's, a person for their own only.
    const spectatorViews = collect<{ ok: boolean; user: string; items?: FeedJson["items"]; error?: string }>(spectator, "perspective");
    const seatedViews = collect<{ ok: boolean; user: string; items?: FeedJson["items"]; error?: string }>(seated, "perspective");
    const author = feedsOf(spectatorFrames).world!.items.find((i) => i.kind === "post" && i.author !== me)!.author;
    spectator.send("perspective", { user: author });
    seated.send("perspective", { user: other });
    seated.send("perspective", { user: me });
    spectator.send("perspective", { user: "Nobody Here" });
    spectator.send("perspective", { user: 5 });
    await until(() => spectatorViews.length >= 3 && seatedViews.length >= 2, 5000, "the views");
    const view = spectatorViews[0]!;
    expect(view.ok).toBe(true);
    // The author saw their own post first; every item of the view is one of the world's.
    const world = new Map(feedsOf(spectatorFrames).world!.items.map((i) => [i.id, i]));
    expect(view.items!.length).toBeGreaterThan(0);
    expect(view.items![0]).toMatchObject({ author, via: "own", kind: "post" });
    for (const i of view.items!) expect(world.get(i.id)?.text).toBe(i.text);
    for (let k = 1; k < view.items!.length; k++) expect(view.items![k]!.seen).toBeGreaterThanOrEqual(view.items![k - 1]!.seen);
    expect(seatedViews[0]).toMatchObject({ ok: false, user: other, error: expect.stringMatching(/own view only/) });
    expect(seatedViews[1]).toMatchObject({ ok: true, user: me });
    expect(seatedViews[1]!.items!.some((i) => i.id === post.id)).toBe(true);
    expect(spectatorViews[1]).toMatchObject({ ok: false, error: expect.stringMatching(/no user "Nobody Here"/) });
    expect(spectatorViews[2]).toMatchObject({ ok: false, error: expect.stringMatching(/bad perspective message: user/) });

    // What each socket ever held: spectators every feed and the people's perspectives; the person
    // their own feed and perspective only.
    const s = decodeFrames(spectatorFrames);
    expect(Object.keys(s.state!.feeds as object).sort()).toEqual([me, other, "world"].sort());
    expect([...s.perspectivesEverSeen].sort()).toEqual([me, other, "world"].sort());
    const p = decodeFrames(seatedFrames);
    expect(Object.keys(p.state!.feeds as object)).toEqual([me]);
    expect([...p.perspectivesEverSeen]).toEqual([me]);
    // The person's feed is what their user saw: a subset of the world's items.
    for (const i of feedsOf(seatedFrames)[me]!.items) expect(world.has(i.id) || i.id === post.id).toBe(true);
    // A turn shows the screen and nothing else (no profile, no latent plan).
    for (const t of turns) expect(Object.keys(t.observation.data ?? {}).sort()).toEqual(["entries", "open", "time"]);

    spectator.send("nonsense", {});
    const errors = collect<{ error: string }>(spectator, "error");
    await until(() => errors.length > 0, 5000, "the unknown message's answer");
    expect(errors[0]!.error).toMatch(/this room accepts: .*perspective, post/);
    await spectator.leave();
    await seated.leave();
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBeLessThan(300);
  }, 60_000);

  it("refuses bad options with the field that is wrong", async () => {
    const bad = [
      [{ users: 1 }, /users/],
      [{ users: 20, humanSeats: ["Nobody Here"] }, /humanSeats: no seat "Nobody Here"/],
      [{ users: 20, humanSeats: [25] }, /humanSeats: no seat 25/],
      [{ users: 20, agents: { "Nobody Here": "rule" } }, /agents\.Nobody Here: no such seat/],
      [{ users: 20, defaultAgent: "not-an-agent" }, /defaultAgent/],
      [{ users: 20, wat: 1 }, /wat/],
    ] as const;
    for (const [options, error] of bad) {
      const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "social", options } });
      expect(res.status, JSON.stringify(options)).toBe(400);
      expect(res.json.error).toMatch(error);
    }
  }, 30_000);
});

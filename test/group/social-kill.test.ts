/**
 * A social room (worlds/social) of a process killed with SIGKILL in the middle of a cascade, in a
 * group of two (issue 32): the survivor recreates it once, under its id and on its run; its log
 * holds each episode once, in whole lines, what was logged before the kill first; a spectator of
 * the survivor's own room keeps receiving throughout. After the re-creation the room is as private
 * as before: its tokens still open it (and nothing else does), a seated person's socket holds only
 * its own user's feed and perspective (never the world feed, nor another user's), its feed is what
 * that user saw, and it may ask for its own view only; a spectator, the control, holds them all.
 *
 * The moment of the kill is chosen: once an episode is logged and the next one is a few
 * timesteps in.
 */
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RoomRegistry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { roomData, until } from "../server/raw-client.js";
import { decodeFrames, feedsOf } from "../server/wire.js";
import { admin, expectEachListedOnce, joinRoom, json, listed, pidOf, recreatedBy, spreadRooms, startGroup, type Logged } from "./group-checks.js";

let servers: Served[];
let store: string;

beforeAll(async () => {
  ({ servers, store } = await startGroup(2, "sw-social-kill-"));
}, 120_000);

/**
 * Short cascades with pauses between them (in which nothing moves, so two sockets can be compared);
 * seats 0 and 1 open to people (nobody in them before the kill: their rule agents play).
 */
const SOCIAL = { seed: 31, users: 24, posts: 3, every: 2, maxSteps: 16, humanSeats: [0, 1], tickMs: 80, turnDeadlineMs: 200, loop: true, pauseMs: 2500, private: true };

describe("a social room of a killed process", () => {
  it("comes back once on the survivor, its log whole and each cascade in it once, its seats as private as before", async () => {
    const created = await json(`${servers[0]!.base}/api/rooms`, { method: "POST", headers: admin, body: JSON.stringify({ type: "social", options: SOCIAL }) });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const { roomId, runId, spectatorToken } = created.json as { roomId: string; runId: string; spectatorToken: string };
    const seatTokens = created.json.seatTokens as { index: number; token: string }[];
    // A room of the other process, whose spectator watches through the kill.
    const ids = [roomId, ...(await spreadRooms(servers, store, 1, (i) => ({ world: "tomi", seed: 70 + i, loop: true, tickMs: 150, pauseMs: 150 })))];
    const pids = await Promise.all(servers.map(pidOf));
    const registry = new RoomRegistry(store);
    const ownerOf = (id: string) => registry.list().find((r) => r.roomId === id)!.owner.pid;
    const v = pids.indexOf(ownerOf(roomId));
    const [victim, survivor] = [servers[v]!, servers[1 - v]!];
    const victimRooms = ids.filter((id) => ownerOf(id) === pids[v]);
    const watched = ids.find((id) => ownerOf(id) === pids[1 - v])!;
    const watcher = await joinRoom(victim, watched);
    expect(watcher.host).toBe(survivor.base.replace(/^http:\/\//, ""));

    const logPath = join(store, "runs", runId, "episodes.jsonl");
    const episodes = () => readEpisodeLog<Logged>(logPath).records.filter((r) => r.kind === "room_episode");
    const room = async (via: Served) => (await json(`${via.base}/api/rooms/${roomId}`, { headers: admin })).json as { status: string; episode: number; timestep: number; runId: string };
    // The kill: a cascade logged, the next one a few timesteps in.
    await until(
      async () => {
        const r = await room(victim);
        const logged = episodes().length;
        return logged >= 1 && r.status === "running" && r.episode === logged + 1 && r.timestep >= 3 && r.timestep <= 8;
      },
      30_000,
      "a cascade logged and the next one under way",
    );
    victim.child.kill("SIGKILL");
    await once(victim.child, "exit");
    const before = readFileSync(logPath, "utf8");
    const loggedAtKill = episodes().length;

    // Recreated once, by the survivor, under its id and on its run; listed once.
    await until(() => recreatedBy(survivor) === victimRooms.length, 30_000, "the victim's rooms recreated");
    await until(async () => (await listed(survivor)).sort().join() === [...ids].sort().join(), 30_000, "the rooms listed again");
    await expectEachListedOnce([survivor], ids);
    expect(registry.list().map((r) => r.roomId).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(ownerOf(id)).toBe(pids[1 - v]);
    expect((await room(survivor)).runId).toBe(runId);

    // Still private: no token, a wrong one, another seat's token open nothing; the room's own do.
    const refused = async (options: Record<string, unknown>) => (await json(`${survivor.base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(options) })).status;
    expect(await refused({})).toBe(403);
    expect(await refused({ token: "wrong-token-0123456789" })).toBe(403);
    expect(await refused({ seat: "0", token: seatTokens.find((t) => t.index === 1)!.token, name: "eve" })).toBe(403);
    const spectator = await joinRoom(survivor, roomId, { token: spectatorToken });
    const seated = await joinRoom(survivor, roomId, { seat: "0", token: seatTokens.find((t) => t.index === 0)!.token, name: "tester" });
    // The agents its seat has played (a looping room's cascades have new users).
    const mine = () => new Set(seated.messages("seat").map((m) => (m as { agent: string }).agent).filter((a) => a !== ""));

    // The cascade the kill cut short is played again, logged once; the room goes on after it.
    await until(() => episodes().length >= loggedAtKill + 1, 30_000, "the interrupted cascade logged");
    await until(() => (feedsOf(seated.frames)[[...mine()].at(-1)!]?.items.length ?? 0) >= 1, 30_000, "an item in the person's feed");
    // Its own view only.
    seated.ws.send(roomData("perspective", { user: [...mine()].at(-1)! }));
    const other = decodeFrames(spectator.frames).state!.agents as string[];
    seated.ws.send(roomData("perspective", { user: other.find((a) => !mine().has(a))! }));
    await until(() => seated.messages("perspective").length >= 2, 10_000, "the answers to the view requests");
    const [own, theirs] = seated.messages("perspective") as { ok: boolean; error?: string }[];
    expect(own!.ok).toBe(true);
    expect(theirs).toMatchObject({ ok: false, error: expect.stringMatching(/own view only/) });

    // What each socket held: the spectator the world feed and both people's feeds; the person its
    // own user's feeds and perspectives, never another's nor the world's.
    const s = decodeFrames(spectator.frames);
    const p = decodeFrames(seated.frames);
    expect(s.feedsEverSeen.has("world")).toBe(true);
    expect(s.feedsEverSeen.size).toBeGreaterThanOrEqual(3);
    expect(p.feedsEverSeen.size).toBeGreaterThan(0);
    for (const name of [...p.feedsEverSeen, ...p.perspectivesEverSeen]) expect(mine(), `a feed or perspective of ${name}`).toContain(name);
    // In the pause after a cascade (nothing moves), the person's feed is the spectator's copy of
    // that user's feed, item for item, and the world feed holds more than that user saw.
    const settled = async () => {
      const [sp, pp, r] = [decodeFrames(spectator.frames).state!, decodeFrames(seated.frames).state!, await room(survivor)];
      if (r.status !== "between" || sp.episode !== r.episode || pp.episode !== r.episode) return false;
      const feeds = sp.feeds as Record<string, { items: { id: string; text: string }[] }>;
      const own = pp.feeds as Record<string, { items: { id: string; text: string }[] }>;
      const me = [...mine()].at(-1)!;
      const items = (f: { items: { id: string; text: string }[] } | undefined) => JSON.stringify((f?.items ?? []).map((i) => [i.id, i.text]));
      return Object.keys(own).join() === me && items(own[me]) === items(feeds[me]) && (feeds.world?.items.length ?? 0) > (feeds[me]?.items.length ?? 0);
    };
    await until(settled, 30_000, "the person's feed equal to the spectator's copy of it, in a pause");
    spectator.ws.close();
    seated.ws.close();

    // The log: what was logged before the kill is its start, every line whole, each cascade once
    // and in order, each on its own seed, all of this room's run.
    const text = readFileSync(logPath, "utf8");
    expect(text.startsWith(before.slice(0, before.lastIndexOf("\n") + 1))).toBe(true);
    expect(text.endsWith("\n")).toBe(true);
    const read = readEpisodeLog<Logged>(logPath);
    expect(read.torn).toBe(false);
    const logged = read.records.filter((r) => r.kind === "room_episode");
    expect(logged.map((r) => r.episode)).toEqual(logged.map((_, i) => i + 1));
    expect(logged.map((r) => r.seed)).toEqual(logged.map((_, i) => SOCIAL.seed + i));
    for (const r of read.records) expect([r.run, r.room]).toEqual([runId, roomId]);

    // The survivor's own spectator noticed nothing.
    const frames = watcher.frames.length;
    await until(() => watcher.frames.length > frames, 10_000, "patches after the kill");
    expect(watcher.seen.closed).toBeUndefined();
    watcher.ws.close();
  }, 120_000);
});

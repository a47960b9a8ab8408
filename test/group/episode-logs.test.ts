/**
 * The episode logs of a process killed with SIGKILL in a group (issue 32): its rooms are recreated
 * by the survivor and go on logging to the same runs, in the same files. Everything logged before
 * the kill is still there, byte for byte, and readable through the API; a line the kill cut short
 * is set aside (`episodes.jsonl.torn`), never glued to the next one; and each episode is in the
 * log once: a room killed in the middle of an episode plays that episode again, a room killed in
 * the pause after one goes on with the next, and a room whose one episode was over ends (both
 * used to play the logged episode again, and the log held it twice).
 *
 * The moment of the kill is chosen, not hoped for: one room pauses 4 s between short episodes,
 * another plays long ones with no pause to speak of, a third plays one episode and stays open;
 * the process is killed when the first is in its pause, the second in the middle of an episode
 * and the third over. The cut line is written while the survivor is stopped (SIGSTOP), between
 * the kill and the takeover, as the kill would have left it.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RoomRegistry, type RoomEntry } from "../../store/room-registry.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { admin, json, pidOf, recreatedBy, startGroup, type Logged } from "./group-checks.js";

let servers: Served[];
let store: string;

beforeAll(async () => {
  ({ servers, store } = await startGroup(2, "sw-episode-logs-"));
}, 240_000);

/** Short episodes and a long pause: mostly between episodes. */
const PAUSING = { world: "tomi", seed: 100, loop: true, tickMs: 60, pauseMs: 4000 };
/** Long episodes, back to back: mostly in the middle of one. */
const PLAYING = { world: "tomi", seed: 200, loop: true, tickMs: 400, pauseMs: 20 };
/** One episode, then open for viewing: over before the kill. */
const ONCE = { world: "tomi", seed: 300, loop: false, tickMs: 60, lingerSeconds: 600 };
const KINDS = [PAUSING, PLAYING, ONCE];

const logPath = (runId: string) => join(store, "runs", runId, "episodes.jsonl");
const episodesIn = (runId: string) => readEpisodeLog<Logged>(logPath(runId)).records.filter((r) => r.kind === "room_episode");
/** The start of a record, as a write(2) cut off by the kill leaves it (no newline). */
const cut = (e: RoomEntry) => `{"kind":"room_episode","run":"${e.runId}","room":"${e.roomId}","wor`;
const roomOf = async (s: Served, roomId: string) => (await json(`${s.base}/api/rooms/${roomId}`, { headers: admin })).json as { status: string; episode: number; runId: string };

describe("a process of a group killed mid-episode: its rooms' logs", () => {
  it("keep what was logged, set a cut line aside, and hold each episode once after its rooms are recreated", async () => {
    const pids = await Promise.all(servers.map(pidOf));
    // Colyseus puts each room in the process with the fewest: two of each kind in turn gives each
    // process one of each; a process just started may not be counted yet, so more follow until one has all.
    const kinds = new Map<string, (typeof KINDS)[number]>();
    const holdsAll = () => {
      const entries = new RoomRegistry(store).list();
      return pids.findIndex((pid) => KINDS.every((k) => entries.some((e) => e.owner.pid === pid && kinds.get(e.roomId) === k)));
    };
    for (let i = 0; i < 15 && (i < 6 || holdsAll() < 0); i++) {
      const options = KINDS[i < 6 ? i >> 1 : i % 3]!;
      const r = await json(`${servers[i % 2]!.base}/api/rooms`, { method: "POST", headers: admin, body: JSON.stringify({ type: "simulation", options }) });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      kinds.set(r.json.roomId, options);
    }
    const v = holdsAll();
    expect(v).toBeGreaterThanOrEqual(0);
    const [victim, survivor] = [servers[v]!, servers[1 - v]!];
    const victimRooms = new RoomRegistry(store).list().filter((e) => e.owner.pid === pids[v]);
    const [pausing, playing, single] = KINDS.map((k) => victimRooms.find((e) => kinds.get(e.roomId) === k)!);

    // The kill: the pausing room between episodes (its last one logged), the playing room in the
    // middle of one (after one logged), the one-episode room over.
    await until(
      async () => {
        const [a, b, c] = await Promise.all([pausing!, playing!, single!].map((e) => roomOf(victim, e.roomId)));
        const [loggedA, loggedB, loggedC] = [pausing!, playing!, single!].map((e) => episodesIn(e.runId!).length);
        return a!.status === "between" && loggedA! >= 1 && loggedA === a!.episode && b!.status === "running" && loggedB! >= 1 && b!.episode === loggedB! + 1 && c!.status === "finished" && loggedC === 1;
      },
      60_000,
      "the pausing room between episodes, the playing room in one, the one-episode room over",
    );
    // What the victim logged, read before the survivor may touch it.
    let before = new Map<string, string>();
    survivor.child.kill("SIGSTOP");
    try {
      victim.child.kill("SIGKILL");
      await once(victim.child, "exit");
      before = new Map(victimRooms.map((e) => [e.runId!, readFileSync(logPath(e.runId!), "utf8")]));
      // The start of a record the kill cut short: written with no newline, as a write(2) cut off leaves it.
      appendFileSync(logPath(playing!.runId!), cut(playing!));
    } finally {
      survivor.child.kill("SIGCONT");
    }
    const whole = (text: string) => text.slice(0, text.lastIndexOf("\n") + 1);
    const loggedAtKill = new Map(victimRooms.map((e) => [e.runId!, episodesIn(e.runId!).length]));

    // Recreated by the survivor, on the same runs: the looping rooms go on past the episode each
    // was in, the one-episode room ends again without playing.
    await until(() => recreatedBy(survivor) === victimRooms.length, 30_000, "the victim's rooms recreated");
    await until(() => [pausing!, playing!].every((e) => episodesIn(e.runId!).length >= loggedAtKill.get(e.runId!)! + 2), 60_000, "two more episodes logged by each looping room");
    await until(async () => (await roomOf(survivor, single!.roomId)).status === "finished", 30_000, "the one-episode room's end");
    const registry = new RoomRegistry(store).list();
    for (const e of victimRooms) {
      expect((await roomOf(survivor, e.roomId)).runId).toBe(e.runId);
      expect(registry.find((r) => r.roomId === e.roomId)!.owner.pid).toBe(pids[1 - v]);
    }
    for (const e of [pausing!, playing!]) expect((await json(`${survivor.base}/api/runs/${e.runId}`, { headers: admin })).json.run).toMatchObject({ id: e.runId, status: "running" });
    await until(async () => (await json(`${survivor.base}/api/runs/${single!.runId}`, { headers: admin })).json.run.status === "done", 10_000, "the one-episode run done again");

    for (const e of victimRooms) {
      const runId = e.runId!;
      const text = readFileSync(logPath(runId), "utf8");
      // What was logged before the kill is the log's start, byte for byte; every line is whole.
      expect(text.startsWith(whole(before.get(runId)!))).toBe(true);
      expect(text.endsWith("\n")).toBe(true);
      const read = readEpisodeLog<Logged>(logPath(runId));
      expect(read.torn).toBe(false);
      // Each episode once, in order, each with its own seed, all of this room's run.
      const episodes = read.records.filter((r) => r.kind === "room_episode");
      expect(episodes.map((r) => r.episode), `the episodes of ${e.roomId}`).toEqual(episodes.map((_, i) => i + 1));
      expect(episodes.map((r) => r.seed)).toEqual(episodes.map((_, i) => kinds.get(e.roomId)!.seed + i));
      for (const r of read.records) expect([r.run, r.room]).toEqual([runId, e.roomId]);
      // Readable through the survivor's API: every record, none torn.
      const page = (await json(`${survivor.base}/api/runs/${runId}/episodes?limit=100`, { headers: admin })).json;
      expect(page).toMatchObject({ total: read.records.length, torn: false });
      expect(page.episodes.map((r: Logged) => r.episode)).toEqual(episodes.map((r) => r.episode));
    }
    expect(episodesIn(single!.runId!)).toHaveLength(1);
    // The cut line is kept aside, whole as it was cut, and in no log.
    expect(readFileSync(`${logPath(playing!.runId!)}.torn`, "utf8")).toBe(`${cut(playing!)}\n`);
  }, 180_000);
});

/**
 * What the group tests start (processes on a Redis and a store of their own), ask of every process
 * (its REST API as an admin) and check after a fault: the rooms each lists, and the log lines of
 * the rooms it recreated.
 */
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect } from "vitest";
import { ROOMCACHES_KEY } from "../../server/group/room-listings.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RoomRegistry } from "../../store/room-registry.js";
import { ADMIN, serve, type Served } from "../server/child-server.js";
import { recording, until } from "../server/raw-client.js";
import { startRedis, type TestRedis } from "./redis-server.js";

/** `n` `serve` processes in one group: one Redis, one store (a new folder named from `prefix`); `env(i)` is added to process i's. */
export async function startGroup(n: number, prefix: string, env: (i: number) => Record<string, string> = () => ({})): Promise<{ redis: TestRedis; store: string; servers: Served[] }> {
  const redis = await startRedis();
  const store = mkdtempSync(join(tmpdir(), prefix));
  const servers = await Promise.all(Array.from({ length: n }, (_, i) => serve(store, ["--redis", redis.url], env(i))));
  return { redis, store, servers };
}

/** This file's group (startGroup, before its tests) and a connection to its Redis for the test's own reads. */
export interface FileGroup {
  readonly redis: TestRedis;
  readonly store: string;
  readonly servers: Served[];
  readonly conn: Redis;
}

/**
 * A group for the test file that calls this at its top: its fields are set once the file's tests
 * start. A process the file left stopped (SIGSTOP) is woken after it, so that it does not outlive
 * the file: it exits by itself, or is killed with the others.
 */
export function groupOfFile(n: number, prefix: string, env?: (i: number) => Record<string, string>): FileGroup {
  const of = {} as { redis: TestRedis; store: string; servers: Served[]; conn: Redis };
  beforeAll(async () => {
    Object.assign(of, await startGroup(n, prefix, env));
    of.conn = new Redis(of.redis.url);
    of.conn.on("error", () => undefined);
  }, 240_000);
  afterAll(() => {
    of.conn?.disconnect();
    for (const s of of.servers ?? []) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGCONT");
  });
  return of;
}

/**
 * Wakes the paused process `s` (SIGCONT) and calls `look` every 25 ms for `ms`, gathering what it
 * finds wrong; then waits for `s` to exit (at most 30 s: a woken process that never stops would
 * otherwise hang the test until its own timeout). Its exit code, what was wrong (each once), and
 * the process it says took its rooms over.
 */
export async function wakeAndWatch(s: Served, look: () => Promise<string[]>, ms = 5000): Promise<{ exitCode: number | null; wrong: string[]; taker: string | undefined }> {
  let exitCode: number | null | undefined;
  void once(s.child, "exit").then(([c]) => (exitCode = c as number | null));
  s.child.kill("SIGCONT");
  const wrong = new Set<string>();
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const w of await look()) wrong.add(w);
    await new Promise((r) => setTimeout(r, 25));
  }
  await until(() => exitCode !== undefined, 30_000, "the woken process to exit");
  const taker = /was declared dead; its rooms are recreated by (\S+)\. /.exec(s.out())?.[1];
  return { exitCode: exitCode!, wrong: [...wrong], taker };
}

/** A room's listing in Colyseus's driver (its hash in the group's Redis), as far as the tests read it. */
export interface Listing {
  roomId: string;
  processId: string;
  publicAddress: string;
}

/** Every listing in the group's Redis, whichever process wrote it. */
export async function listingsIn(conn: Redis): Promise<Listing[]> {
  return Object.values(await conn.hgetall(ROOMCACHES_KEY)).map((v) => JSON.parse(v) as Listing);
}

/** A request's status and JSON body. */
export async function json(url: string, init: RequestInit = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(url, init);
  return { status: res.status, json: (await res.json()) as any };
}

export const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };

export async function pidOf(s: Served): Promise<number> {
  return (await json(`${s.base}/api/health`)).json.pid as number;
}

/**
 * At least `min` rooms of `type` (room i with `options(i)`), asked of the processes in turn, and
 * more, a moment apart, until every process holds one: Colyseus puts a room where there are
 * fewest, and a process that has just started may not be counted yet. Returns their ids.
 */
export async function spreadRooms(servers: readonly Served[], store: string, min: number, options: (i: number) => Record<string, unknown>, type = "simulation"): Promise<string[]> {
  const ids: string[] = [];
  const owning = () => new Set(new RoomRegistry(store).list().map((r) => `${r.owner.host}/${r.owner.pid}`)).size;
  for (let i = 0; i < min + 9 && (i < min || owning() < servers.length); i++) {
    if (i >= min) await new Promise((done) => setTimeout(done, 500));
    const r = await json(`${servers[i % servers.length]!.base}/api/rooms`, { method: "POST", headers: admin, body: JSON.stringify({ type, options: options(i) }) });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    ids.push(r.json.roomId);
  }
  expect(owning()).toBe(servers.length);
  return ids;
}

/** The room ids `s` lists to an admin (private rooms too), for the whole group. */
export async function listed(s: Served): Promise<string[]> {
  return (((await (await fetch(`${s.base}/api/rooms`, { headers: admin })).json()) as { rooms: { roomId: string }[] }).rooms).map((r) => r.roomId);
}

/**
 * A client of `roomId`, its seat reserved through `via` (a spectator with `{}`), connected to the
 * process hosting the room, which the reservation names (`host`); it keeps every frame it receives.
 */
export async function joinRoom(via: Served, roomId: string, options: Record<string, unknown> = {}) {
  const r = await json(`${via.base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(options) });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const c = recording(`ws://${r.json.publicAddress}/${r.json.processId}/${r.json.roomId}?sessionId=${r.json.sessionId}`);
  await until(() => c.seen.token !== "" || c.seen.closed !== undefined, 15_000, "the join");
  expect(c.seen.errors).toEqual([]);
  return { ...c, host: r.json.publicAddress as string };
}

/** Every process lists each of `ids` exactly once, and nothing else. */
export async function expectEachListedOnce(servers: readonly Served[], ids: readonly string[]): Promise<void> {
  for (const s of servers) {
    const rooms = await listed(s);
    expect(rooms.length).toBe(ids.length);
    expect(new Set(rooms).size).toBe(ids.length);
    expect([...rooms].sort()).toEqual([...ids].sort());
  }
}

/** A record of a room's run's log, as far as the group tests read it (a room's episode: kind "room_episode"). */
export interface Logged {
  kind: string;
  run: string;
  room: string;
  seed: number;
  episode: number;
}

/** The numbers of the episodes run `runId`'s log holds, in the log's order. */
export function episodesLogged(store: string, runId: string): number[] {
  return readEpisodeLog<Logged>(join(store, "runs", runId, "episodes.jsonl"))
    .records.filter((r) => r.kind === "room_episode")
    .map((r) => r.episode);
}

/** How many rooms of a dead process `s` said it recreated. */
export function recreatedBy(s: Served): number {
  return [...s.out().matchAll(/\[group\] (\d+) rooms? of a process that died recreated here/g)].reduce((n, m) => n + Number(m[1]), 0);
}

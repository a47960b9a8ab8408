/**
 * The store's writes under a process's write fence (store/write-fence.ts), the lease played here
 * through a group's fence (server/group/fence.ts) whose heartbeat is this test: while it holds,
 * every write lands; once it lapses (a process paused past it, which its group may have declared
 * dead), an episode log's line, a file replaced whole and a registry's change write nothing, the
 * registry's change waiting for the lease to be renewed; a revoked lease (declared dead) refuses
 * for good. The lease is measured on the monotonic clock, the wall clock given longer. A worker
 * thread's write waits for the lease, within a bound and never past the server's stop. A log taken up by a room's new home is a new file: its old writer's lines,
 * written through the descriptor it holds, land where nobody reads.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { startModuleWorker } from "../../server/module-worker.js";
import { EpisodeLog, readEpisodeLog, takeOverLog } from "../../store/episode-log.js";
import { RoomRegistry } from "../../store/room-registry.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { until } from "../server/raw-client.js";
import { clocksNow, fenced, fenceWithLease, fenceWrites, PlaceLost, WriteLease } from "../../store/write-fence.js";

const dir = () => mkdtempSync(join(tmpdir(), "sw-fence-"));

/** A group's fence whose lease is held for `ms` from now, fencing this process's writes. */
function fenceFor(ms: number): Fence {
  const fence = new Fence("socialworld:process:test:dead");
  fence.renewed(clocksNow(), ms);
  fenceWrites(fence);
  return fence;
}

const workers: Worker[] = [];

afterEach(async () => {
  fenceWrites(undefined);
  for (const w of workers.splice(0)) await w.terminate();
});

/** The fence-worker thread, writing `path` under `lease`; what it says. */
function fencedWorker(data: { lease: SharedArrayBuffer; path: string; stop?: SharedArrayBuffer; waitMs?: number }): string[] {
  const worker = startModuleWorker("test/store/fence-worker", { workerData: data });
  workers.push(worker);
  const said: string[] = [];
  worker.on("message", (m: string) => said.push(m));
  worker.on("error", (err) => said.push(`error: ${err.message}`));
  return said;
}

describe("the store's writes under a write fence", () => {
  it("land while the lease holds; past it, a log's line and a replaced file are refused and nothing changes", () => {
    const root = dir();
    const path = join(root, "episodes.jsonl");
    const fence = fenceFor(60_000);
    expect(fenced()).toBe(true);
    const log = new EpisodeLog(path);
    log.append({ episode: 1 });
    writeFileAtomic(join(root, "pool.json"), "old\n");
    fence.renewed(clocksNow(), -1);
    expect(() => log.append({ episode: 2 })).toThrow(PlaceLost);
    expect(() => writeFileAtomic(join(root, "pool.json"), "new\n")).toThrow(PlaceLost);
    expect(readEpisodeLog(path).records).toEqual([{ episode: 1 }]);
    expect(readFileSync(join(root, "pool.json"), "utf8")).toBe("old\n");
    // Renewed (the next heartbeat was answered): writes go on.
    fence.renewed(clocksNow(), 60_000);
    log.append({ episode: 2 });
    log.close();
    expect(readEpisodeLog(path).records).toEqual([{ episode: 1 }, { episode: 2 }]);
  });

  it("the lease is measured on the monotonic clock; the wall clock, which NTP may step forward, refuses only past its longer share", () => {
    const now = clocksNow();
    const lease = new WriteLease();
    // The wall clock stepped 8.5 s forward since the heartbeat (or the VM froze that long): past the 8 s lease, within the wall clock's 9 s.
    lease.extend({ mono: now.mono, wall: now.wall - 8500 }, 8000, 9000);
    expect(lease.holds()).toBe(true);
    // Past the wall clock's share too: a freeze its group may declare dead soon, whatever the monotonic clock says.
    lease.extend({ mono: now.mono, wall: now.wall - 9500 }, 8000, 9000);
    expect(lease.holds()).toBe(false);
    // The monotonic clock past the lease: over, whatever the wall clock says.
    lease.extend({ mono: now.mono - 8_500_000_000n, wall: now.wall }, 8000, 9000);
    expect(lease.holds()).toBe(false);
    lease.extend(now, 8000, 9000);
    expect(lease.holds()).toBe(true);
    lease.revoke();
    expect(lease.holds()).toBe(false);
  });

  it("one fence at a time, and the one that lets a thread block only in a worker thread", () => {
    const a = fenceFor(60_000);
    expect(() => fenceWrites(new Fence("socialworld:process:other:dead"))).toThrow(/installed already/);
    fenceWrites(a);
    fenceWrites(undefined);
    expect(fenced()).toBe(false);
    fenceWrites(new Fence("socialworld:process:other:dead"));
    fenceWrites(undefined);
    // Blocking the main thread would block the heartbeat that renews the lease.
    expect(() => fenceWithLease(new WriteLease().buffer)).toThrow(/worker threads/);
    expect(fenced()).toBe(false);
  });

  it("in a worker thread (a self-play round's), a write that finds the lease lapsed waits for it to be renewed", async () => {
    const lease = new WriteLease();
    lease.extend(clocksNow(), -1);
    const path = join(dir(), "metrics.jsonl");
    const said = fencedWorker({ lease: lease.buffer, path });
    await until(() => said.includes("asking"), 20_000, "the worker to ask");
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(path)).toBe(false);
    expect(said).toEqual(["asking"]);
    lease.extend(clocksNow(), 60_000);
    await until(() => said.includes("written"), 10_000, "the worker's write");
    expect(readFileSync(path, "utf8")).toBe("written\n");
  });

  it("a worker's write waiting for the lease is refused when the server stops the round, and past its bound", async () => {
    const lease = new WriteLease();
    lease.extend(clocksNow(), -1);
    const stop = new SharedArrayBuffer(4);
    const stopped = join(dir(), "metrics.jsonl");
    const said = fencedWorker({ lease: lease.buffer, path: stopped, stop });
    await until(() => said.includes("asking"), 20_000, "the worker to ask");
    // The server stops (round-thread.ts sets the flag and wakes the thread).
    const flag = new Int32Array(stop);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    await until(() => said.length === 2, 10_000, "the worker's answer");
    expect(said[1]).toMatch(/^refused: PlaceLost: .*the server is stopping/);
    expect(existsSync(stopped)).toBe(false);

    const bounded = join(dir(), "metrics.jsonl");
    const late = fencedWorker({ lease: lease.buffer, path: bounded, waitMs: 200 });
    await until(() => late.length === 2, 20_000, "the worker's answer");
    expect(late[1]).toMatch(/^refused: PlaceLost: .*no heartbeat of this process was answered/);
    expect(existsSync(bounded)).toBe(false);
  });

  it("a registry's change waits for the lease to be renewed, and is refused once it is revoked", async () => {
    const registry = new RoomRegistry(dir());
    const entry = { roomId: "room-a", type: "simulation" as const, options: {}, createdAt: "2026-11-27T00:00:00.000Z" };
    const fence = fenceFor(-1);
    let done = false;
    const put = registry.put(entry).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    expect(registry.list()).toEqual([]);
    fence.renewed(clocksNow(), 60_000);
    await put;
    expect(registry.list().map((e) => e.roomId)).toEqual(["room-a"]);

    fence.trip("machine-b/2/2");
    await expect(registry.remove("room-a")).rejects.toThrow(PlaceLost);
    expect(registry.list().map((e) => e.roomId)).toEqual(["room-a"]);
  });

  it("a log taken up by a room's new home: its old writer's late lines land where nobody reads", () => {
    const path = join(dir(), "episodes.jsonl");
    const paused = new EpisodeLog(path);
    paused.append({ episode: 1 });
    const before = readFileSync(path);
    takeOverLog(path);
    expect(readFileSync(path)).toEqual(before);
    // The paused writer wakes and writes through the descriptor it holds; the new home writes by name.
    paused.append({ episode: 2, by: "the paused process" });
    paused.close();
    const home = new EpisodeLog(path);
    home.append({ episode: 2, by: "the new home" });
    home.close();
    expect(readEpisodeLog(path).records).toEqual([{ episode: 1 }, { episode: 2, by: "the new home" }]);
    // Nothing to take up: nothing made.
    const none = join(dir(), "episodes.jsonl");
    takeOverLog(none);
    expect(existsSync(none)).toBe(false);
  });
});

/**
 * The store's writes under a process's write fence (store/write-fence.ts), the lease played here:
 * while it holds, every write lands; once it lapses (a process paused past it, which its group may
 * have declared dead), an episode log's line, a file replaced whole and a registry's change write
 * nothing, the registry's change waiting for the lease to be renewed; a revoked lease (declared
 * dead) refuses for good. A log taken up by a room's new home is a new file: its old writer's
 * lines, written through the descriptor it holds, land where nobody reads.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeLog, readEpisodeLog, takeOverLog } from "../../store/episode-log.js";
import { RoomRegistry } from "../../store/room-registry.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { until } from "../server/raw-client.js";
import { clocksNow, fenceWithLease, fenceWrites, PlaceLost, WriteLease } from "../../store/write-fence.js";

const dir = () => mkdtempSync(join(tmpdir(), "sw-fence-"));

/** A lease held for `ms` from now, fencing this thread's writes (a write that finds it lapsed is refused at once). */
function leaseFor(ms: number): WriteLease {
  const lease = new WriteLease();
  lease.extend(clocksNow(), ms);
  fenceWithLease(lease.buffer, 0);
  return lease;
}

afterEach(() => fenceWrites(undefined));

describe("the store's writes under a write fence", () => {
  it("land while the lease holds; past it, a log's line and a replaced file are refused and nothing changes", async () => {
    const root = dir();
    const path = join(root, "episodes.jsonl");
    const lease = leaseFor(60_000);
    const log = new EpisodeLog(path);
    log.append({ episode: 1 });
    writeFileAtomic(join(root, "pool.json"), "old\n");
    lease.extend(clocksNow(), -1);
    expect(() => log.append({ episode: 2 })).toThrow(PlaceLost);
    expect(() => writeFileAtomic(join(root, "pool.json"), "new\n")).toThrow(PlaceLost);
    expect(readEpisodeLog(path).records).toEqual([{ episode: 1 }]);
    expect(readFileSync(join(root, "pool.json"), "utf8")).toBe("old\n");
    // Renewed (the next heartbeat was answered): writes go on.
    lease.extend(clocksNow(), 60_000);
    log.append({ episode: 2 });
    log.close();
    expect(readEpisodeLog(path).records).toEqual([{ episode: 1 }, { episode: 2 }]);
  });

  it("in a worker thread (a self-play round's), a write that finds the lease lapsed waits for it to be renewed", async () => {
    const lease = new WriteLease();
    lease.extend(clocksNow(), -1);
    const path = join(dir(), "metrics.jsonl");
    // The built module: a worker thread runs JavaScript (npm run build).
    const fence = new URL("../../dist/store/write-fence.js", import.meta.url).href;
    const worker = new Worker(
      `const { workerData, parentPort } = require("node:worker_threads");
       const { appendFileSync } = require("node:fs");
       import(workerData.fence).then(({ fenceWithLease, checkWrite }) => {
         fenceWithLease(workerData.lease);
         parentPort.postMessage("asking");
         checkWrite(workerData.path);
         appendFileSync(workerData.path, "written\\n");
         parentPort.postMessage("written");
       });`,
      { eval: true, workerData: { lease: lease.buffer, path, fence } },
    );
    const said: string[] = [];
    worker.on("message", (m: string) => said.push(m));
    await until(() => said.includes("asking"), 10_000, "the worker to ask");
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(path)).toBe(false);
    lease.extend(clocksNow(), 60_000);
    await until(() => said.includes("written"), 10_000, "the worker's write");
    expect(readFileSync(path, "utf8")).toBe("written\n");
    await worker.terminate();
  });

  it("a registry's change waits for the lease to be renewed, and is refused once it is revoked", async () => {
    const registry = new RoomRegistry(dir());
    const entry = { roomId: "room-a", type: "simulation" as const, options: {}, createdAt: "2026-11-27T00:00:00.000Z" };
    const lease = leaseFor(-1);
    let done = false;
    const put = registry.put(entry).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    expect(registry.list()).toEqual([]);
    lease.extend(clocksNow(), 60_000);
    await put;
    expect(registry.list().map((e) => e.roomId)).toEqual(["room-a"]);

    lease.revoke();
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
    writeFileSync(none, "");
  });
});

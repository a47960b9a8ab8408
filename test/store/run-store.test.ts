/**
 * The store shared by several processes: the server and benchmarks started side by side register
 * their runs in one db.json, and none may lose another's run or status.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { thisProcess } from "../../store/owner.js";
import { RunStore } from "../../store/run-store.js";
import { captureOutput } from "../capture.js";

const root = resolve(import.meta.dirname, "../..");
const compiled = join(root, "dist", "store", "run-store.js");
if (!existsSync(compiled)) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");

const io = captureOutput();
const storeDir = () => mkdtempSync(join(tmpdir(), "sw-store-"));

afterEach(() => {
  vi.useRealTimers();
});

describe("RunStore shared by several processes", () => {
  it("keeps the runs and statuses each handle registers, and each handle sees the others'", async () => {
    const dir = storeDir();
    // Two handles on one folder stand for two processes: each has its own copy of the registry.
    const a = await RunStore.open(dir);
    const b = await RunStore.open(dir);
    const ra = await a.create("bench", "A", {});
    const rb = await b.create("bench", "B", {});
    await a.update(ra.id, { status: "done" });
    await b.update(rb.id, { status: "failed", error: "x" });
    expect(a.get(rb.id)?.status).toBe("failed");
    expect(b.get(ra.id)?.status).toBe("done");
    const fresh = await RunStore.open(dir);
    expect(fresh.list().map((r) => `${r.title}:${r.status}`).sort()).toEqual(["A:done", "B:failed"]);
  });

  it("loses nothing when processes started together register and finish runs", async () => {
    const dir = storeDir();
    const processes = 6;
    const runsEach = 8;
    const script = `
      const { RunStore } = await import(${JSON.stringify(compiled)});
      const store = await RunStore.open(${JSON.stringify(dir)});
      for (let i = 0; i < ${runsEach}; i++) {
        const run = await store.create("bench", "p" + process.argv[1] + "-" + i, {});
        await store.update(run.id, { status: "done" });
      }`;
    const exits = await Promise.all(
      Array.from({ length: processes }, (_, p) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", script, String(p)], { stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        return new Promise<string>((done) => child.on("close", (code) => done(`${code} ${stderr}`)));
      }),
    );
    expect(exits).toEqual(Array(processes).fill("0 "));
    const runs = (await RunStore.open(dir)).list();
    expect(runs).toHaveLength(processes * runsEach);
    expect(new Set(runs.map((r) => r.title)).size).toBe(processes * runsEach);
    expect(runs.every((r) => r.status === "done")).toBe(true);
    expect(readdirSync(join(dir, "runs"))).toHaveLength(processes * runsEach);
    expect(readdirSync(dir).sort()).toEqual(["db.json", "runs"]);
  });

  it("loses neither write when a writer is paused holding the lock and another machine takes it over", async () => {
    const dir = storeDir();
    const store = await RunStore.open(dir);
    const earlier = await store.create("bench", "earlier", {});
    // Another machine sharing the store (its own host id), judging a lock stale after 1 ms.
    const elsewhere = `
      const { RunStore } = await import(${JSON.stringify(compiled)});
      const store = await RunStore.open(${JSON.stringify(dir)}, { lock: { staleMs: 1 } });
      await store.create("bench", "theirs", {});
      await store.update(${JSON.stringify(earlier.id)}, { status: "done" });`;
    let drawn = 0;
    const paused = await RunStore.open(dir, {
      // Drawn under the lock: this writer stops here, holding it, for as long as the other machine
      // takes to break the lock and write (a process paused mid-change, its copy of db.json old).
      suffix: () => {
        drawn++;
        const other = spawnSync(process.execPath, ["--input-type=module", "-e", elsewhere], { env: { ...process.env, SOCIALWORLD_HOST_ID: "another-machine" }, encoding: "utf8" });
        expect(other.stderr).toBe("");
        expect(other.status).toBe(0);
        return "aaaaaa";
      },
    });
    const mine = await paused.create("bench", "mine", {});
    // Its change was made again on what the other wrote: all three writes are there.
    const fresh = await RunStore.open(dir);
    expect(Object.fromEntries(fresh.list().map((r) => [r.title, r.status]))).toEqual({ earlier: "done", theirs: "running", mine: "running" });
    expect(fresh.get(mine.id)).toEqual(mine);
    expect(fresh.get(mine.id)?.owner).toEqual(thisProcess());
    // One id drawn: the folder the dropped attempt made is the run's, and no folder is nobody's.
    expect(drawn).toBe(1);
    expect(readdirSync(join(dir, "runs")).sort()).toEqual(fresh.list().map((r) => r.id).sort());
    expect(readdirSync(dir).sort()).toEqual(["db.json", "runs"]);
  });

  it("never gives a new run the id or the folder of another", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-23T08:00:00.000Z"));
    const dir = storeDir();
    const suffixes = ["aaaaaa", "aaaaaa", "bbbbbb", "cccccc", "dddddd"];
    const store = await RunStore.open(dir, { suffix: () => suffixes.shift()! });
    // A folder nobody registered (a run whose process died before it could register it).
    mkdirSync(join(dir, "runs", "20261123-080000-bench-bbbbbb"));
    const first = await store.create("bench", "first", {});
    const second = await store.create("bench", "second", {});
    expect(first.id).toBe("20261123-080000-bench-aaaaaa");
    expect(second.id).toBe("20261123-080000-bench-cccccc");
    expect(existsSync(join(dir, second.dir))).toBe(true);
  });

  it("reads a run whose process died while running it as interrupted", async () => {
    const dir = storeDir();
    // A process that registers a run and dies before it ends it.
    const script = `
      const { RunStore } = await import(${JSON.stringify(compiled)});
      await (await RunStore.open(${JSON.stringify(dir)})).create("bench", "killed", {});
      process.exit(9);`;
    const code = await new Promise<number | null>((done) =>
      spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" }).on("close", done),
    );
    expect(code).toBe(9);
    const store = await RunStore.open(dir);
    const mine = await store.create("bench", "alive", {});
    const other = await store.create("bench", "elsewhere", {});
    const earlier = await store.create("bench", "earlier", {});
    const raw = JSON.parse(readFileSync(join(dir, "db.json"), "utf8"));
    const owned = (id: string) => raw.runs.find((r: { id: string }) => r.id === id);
    // A run of another host: its process cannot be checked from here.
    owned(other.id).owner = { pid: 1, host: "another-host" };
    // A run of an earlier process that had this one's pid (a restarted container's server).
    owned(earlier.id).owner.started -= 60_000;
    writeFileSync(join(dir, "db.json"), JSON.stringify(raw));
    expect(Object.fromEntries(store.list().map((r) => [r.title, r.status]))).toEqual({
      killed: "interrupted",
      alive: "running",
      elsewhere: "running",
      earlier: "interrupted",
    });
    expect(store.get(mine.id)?.owner).toEqual(thisProcess());
    expect(thisProcess()).toMatchObject({ pid: process.pid, host: hostname() });
    // Only the reading changes: the record stays as its process left it, until a resume takes it.
    const killed = store.list().find((r) => r.title === "killed")!;
    expect(JSON.parse(readFileSync(join(dir, "db.json"), "utf8")).runs.find((r: { id: string }) => r.id === killed.id).status).toBe("running");
    expect(await store.update(killed.id, { status: "running" })).toMatchObject({ status: "running", owner: { pid: process.pid } });
    expect(store.get(killed.id)?.status).toBe("running");
  });

  it("names the file when db.json is not a store", async () => {
    const dir = storeDir();
    writeFileSync(join(dir, "db.json"), "{");
    await expect(RunStore.open(dir)).rejects.toThrow(`${join(dir, "db.json")}: not a socialworld store (not valid JSON`);
    writeFileSync(join(dir, "db.json"), JSON.stringify({ runs: [{ id: 3 }] }));
    await expect(RunStore.open(dir)).rejects.toThrow(`${join(dir, "db.json")} (runs.0.id): not a socialworld store`);
    // The command says it in one line (exit 2), as for any bad input.
    expect(await main(["runs", "list", "--store", dir])).toBe(2);
    expect(io.err.startsWith(`socialworld runs: bad input: ${join(dir, "db.json")} (runs.0.id): not a socialworld store (`)).toBe(true);
    expect(io.err.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("commands that only read a store", () => {
  it("do not create one where --store names a folder with no store (a typo would leave an empty store behind)", async () => {
    const missing = join(storeDir(), "typo");
    expect(await main(["runs", "list", "--store", missing])).toBe(0);
    expect(io.out).toBe(`no runs in ${missing}: there is no store there\n`);
    expect(await main(["runs", "show", "x", "--store", missing])).toBe(2);
    expect(io.err).toContain(`socialworld runs: no store at ${missing} `);
    expect(await main(["export", "--run", "x", "--format", "chat", "--out", join(missing, "..", "o.jsonl"), "--store", missing])).toBe(2);
    expect(io.err).toContain(`socialworld export: --store: no store at ${missing}\n`);
    expect(existsSync(missing)).toBe(false);
  });

  it("read a store that exists, however new", async () => {
    const dir = storeDir();
    await RunStore.open(dir);
    expect(await main(["runs", "list", "--store", dir])).toBe(0);
    expect(io.out).toBe(`no runs in ${dir}\n`);
  });
});

/**
 * One store under several processes (issue 32): the registries are never lost or corrupted by
 * concurrent writers, a room left by a dead process is claimed by exactly one of the processes
 * restoring at once, and the training board, the runs API and /v1's policy list read the same from
 * every process of a group.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RoomRegistry } from "../../store/room-registry.js";
import { RunStore } from "../../store/run-store.js";
import type { Served } from "../server/child-server.js";
import { until } from "../server/raw-client.js";
import { admin, startGroup } from "./group-checks.js";

const dist = resolve(import.meta.dirname, "../../dist/store");
if (!existsSync(join(dist, "room-registry.js"))) throw new Error("dist/ is not built: run `npm run build` before the tests");

/**
 * Runs `script` (an ES module body) in `n` processes started together; their stdout, each. With
 * `stayAlive`, each stays until every one has written its line (a live server keeps what it claims).
 */
async function inProcesses(n: number, script: string, stayAlive = false): Promise<string[]> {
  const wait = stayAlive ? `\nprocess.stdout.write("\\n"); process.stdin.resume(); await new Promise((r) => process.stdin.on("end", r));` : "";
  const children = Array.from({ length: n }, (_, p) => spawn(process.execPath, ["--input-type=module", "-e", script + wait, String(p)], { stdio: ["pipe", "pipe", "pipe"] }));
  const outs = children.map((child, p) => {
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<string>((done, fail) => child.on("close", (code) => (code === 0 ? done(out.trim()) : fail(new Error(`process ${p} exited with ${code}: ${err}`)))));
    return { exited, wrote: () => out.includes("\n") };
  });
  if (stayAlive) await until(() => outs.every((o) => o.wrote()), 60_000, "every process's line");
  for (const child of children) child.stdin.end();
  return Promise.all(outs.map((o) => o.exited));
}

describe("the store under several processes", () => {
  it("loses no room-registry or run-registry write of processes writing at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-shared-"));
    const processes = 6;
    const each = 10;
    const script = `
      const { RoomRegistry } = await import(${JSON.stringify(join(dist, "room-registry.js"))});
      const { RunStore } = await import(${JSON.stringify(join(dist, "run-store.js"))});
      const p = process.argv[1];
      const rooms = new RoomRegistry(${JSON.stringify(dir)});
      const store = await RunStore.open(${JSON.stringify(dir)});
      for (let i = 0; i < ${each}; i++) {
        const roomId = "p" + p + "r" + i;
        const run = await store.create("room", roomId, {});
        await rooms.put({ roomId, type: "simulation", options: { seed: i }, createdAt: new Date().toISOString(), runId: run.id });
        await rooms.update(roomId, { episode: { number: i + 1, seed: i } });
        // Every third room ends: it leaves the registry.
        if (i % 3 === 2) await rooms.remove(roomId);
        await store.update(run.id, { status: "done" });
      }`;
    await inProcesses(processes, script);
    const rooms = new RoomRegistry(dir).list();
    const expected: string[] = [];
    for (let p = 0; p < processes; p++) for (let i = 0; i < each; i++) if (i % 3 !== 2) expected.push(`p${p}r${i}`);
    expect(rooms.map((r) => r.roomId).sort()).toEqual(expected.sort());
    // Each room's last change is there (its episode, its run).
    for (const r of rooms) expect(r.episode).toEqual({ number: Number(r.roomId.split("r")[1]) + 1, seed: Number(r.roomId.split("r")[1]) });
    const runs = (await RunStore.open(dir)).list();
    expect(runs).toHaveLength(processes * each);
    expect(runs.every((r) => r.status === "done")).toBe(true);
    expect(new Set(rooms.map((r) => r.runId)).size).toBe(rooms.length);
    // No lock or temporary file left behind.
    expect(readdirSync(dir).sort()).toEqual(["db.json", "rooms.json", "runs"]);
  }, 120_000);

  it("gives each room of a dead process to exactly one of the processes restoring at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-shared-"));
    const dead = await new Promise<number>((done) => {
      const c = spawn(process.execPath, ["-e", "0"]);
      c.on("close", () => done(c.pid!));
    });
    const owner = { pid: dead, host: (await import("node:os")).hostname(), started: Date.now() - 60_000 };
    const entries = Array.from({ length: 12 }, (_, i) => ({ roomId: `orphan${i}`, type: "simulation", options: {}, createdAt: new Date().toISOString(), owner }));
    writeFileSync(join(dir, "rooms.json"), JSON.stringify({ version: 1, rooms: entries }));
    const script = `
      const { RoomRegistry } = await import(${JSON.stringify(join(dist, "room-registry.js"))});
      const claimed = await new RoomRegistry(${JSON.stringify(dir)}).claimOrphans();
      process.stdout.write(JSON.stringify({ pid: process.pid, rooms: claimed.map((r) => r.roomId) }));`;
    const answers = (await inProcesses(4, script, true)).map((o) => JSON.parse(o) as { pid: number; rooms: string[] });
    const all = answers.flatMap((a) => a.rooms);
    expect(all.sort()).toEqual(entries.map((e) => e.roomId).sort());
    // The registry names, for each, the process that claimed it.
    const byRoom = new Map(answers.flatMap((a) => a.rooms.map((r) => [r, a.pid] as const)));
    for (const r of new RoomRegistry(dir).list()) expect(r.owner.pid).toBe(byRoom.get(r.roomId));
  }, 60_000);
});

describe("a group's processes read one store alike", () => {
  let a: Served;
  let b: Served;
  let store: string;
  beforeAll(async () => {
    let servers: Served[];
    ({ servers, store } = await startGroup(2, "sw-group-store-"));
    [a, b] = servers as [Served, Served];
  }, 60_000);
  const json = async (url: string, init: RequestInit = {}) => (await (await fetch(url, init)).json()) as any;

  it("shows a training run posted to one process on the board of the other", async () => {
    const metrics = { step: 1, reward: 0.5, accuracy: 0.25, kl: null, entropy: 1.2, clipFraction: 0, loss: 0.1, responseLength: 12 };
    const posted = await fetch(`${a.base}/api/training/events`, { method: "POST", headers: admin, body: JSON.stringify({ type: "progress", event: { runId: "elsewhere-1", title: "GRPO elsewhere", steps: 4, metrics } }) });
    expect(posted.status).toBe(202);
    const onB = await json(`${b.base}/api/training`);
    expect(onB.runs.find((r: { runId: string }) => r.runId === "elsewhere-1")).toMatchObject({ title: "GRPO elsewhere", status: "running", history: [{ step: 1, reward: 0.5 }] });
    expect(await json(`${b.base}/api/training/elsewhere-1`)).toMatchObject({ runId: "elsewhere-1", steps: 4 });
    await fetch(`${b.base}/api/training/events`, { method: "POST", headers: admin, body: JSON.stringify({ type: "finished", event: { runId: "elsewhere-1", status: "done" } }) });
    // Finished through the other process: the copy updated last is the one both show.
    for (const s of [a, b]) await until(async () => (await json(`${s.base}/api/training/elsewhere-1`)).status === "done", 5000, "the finished run");
  }, 30_000);

  it("lists the same runs and the same /v1 policies from either process", async () => {
    const created = await fetch(`${a.base}/api/rooms`, { method: "POST", headers: admin, body: JSON.stringify({ type: "benchmark", options: { benchmark: "tomi", generate: { n: 3, seed: 2 }, agent: "simulation", tickMs: 50 } }) });
    expect(created.status).toBe(201);
    const { runId } = (await created.json()) as { runId: string };
    const ids = async (s: Served) => ((await json(`${s.base}/api/runs`)).runs as { id: string }[]).map((r) => r.id);
    expect(await ids(a)).toContain(runId);
    expect(await ids(b)).toEqual(await ids(a));

    const policy = join(store, "policies", "tiny");
    mkdirSync(policy, { recursive: true });
    writeFileSync(join(policy, "config.json"), "{}");
    writeFileSync(join(policy, "tokenizer.json"), "{}");
    const models = async (s: Served) => ((await json(`${s.base}/v1/models`)).data as { id: string }[]).map((m) => m.id).sort();
    expect(await models(a)).toContain("tiny");
    expect(await models(b)).toEqual(await models(a));
    expect(JSON.parse(readFileSync(join(store, "db.json"), "utf8")).runs.some((r: { id: string }) => r.id === runId)).toBe(true);
  }, 30_000);
});

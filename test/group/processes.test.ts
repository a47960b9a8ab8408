/**
 * `serve --processes 2` (issue 32): one command starts a redis-server of its own and two server
 * processes; killing one (kill -9) brings its rooms back in the other from their saved options
 * while the other's own clients go on undisturbed, the launcher starts the killed process again,
 * and Ctrl-C stops everything, the Redis last. A Ctrl-C at any moment of the start leaves nothing
 * running: the launcher's children are watched in /proc while it starts, and every one of them
 * must be gone once it exited.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RoomRegistry } from "../../store/room-registry.js";
import { ADMIN } from "../server/child-server.js";
import { connect, until } from "../server/raw-client.js";

let launcher: ChildProcess | undefined;
const launchers: ChildProcess[] = [];
afterAll(async () => {
  for (const l of [launcher, ...launchers]) {
    if (!l || l.exitCode !== null || l.signalCode !== null) continue;
    l.kill("SIGTERM");
    await once(l, "exit");
  }
});

const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");

/** The pids and names of the processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): { pid: number; name: string }[] {
  const found: { pid: number; name: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, the last ")" ends it.
    const close = stat.lastIndexOf(")");
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    if (ppid === pid) found.push({ pid: Number(entry), name: stat.slice(stat.indexOf("(") + 1, close) });
  }
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Starts `serve --processes 2`, watches its children appear, sends SIGINT once `ready(children)`
 * says so, and returns every child it had (with the launcher's exit) once it exited.
 */
async function interruptedStart(ready: (kids: { pid: number; name: string }[]) => boolean) {
  const store = mkdtempSync(join(tmpdir(), "sw-processes-int-"));
  const child = spawn(process.execPath, [bin, "serve", "--processes", "2", "--port", "0", "--no-demo", "--store", store, "--admin-token", ADMIN], { stdio: ["ignore", "pipe", "pipe"] });
  launchers.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += String(d)));
  child.stderr!.on("data", (d) => (out += String(d)));
  const seen = new Map<number, string>();
  await until(() => {
    for (const k of childrenOf(child.pid!)) seen.set(k.pid, k.name);
    return ready([...seen].map(([pid, name]) => ({ pid, name }))) || child.exitCode !== null;
  }, 60_000, "the launcher's children");
  expect(child.exitCode).toBeNull();
  child.kill("SIGINT");
  const [code] = (await once(child, "exit")) as [number];
  return { code, out, kids: [...seen].map(([pid, name]) => ({ pid, name })) };
}

const json = async (url: string, init: RequestInit = {}) => (await (await fetch(url, init)).json()) as any;
const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
const portOpen = (port: number) =>
  new Promise<boolean>((done) => {
    const s = netConnect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), done(true)));
    s.once("error", () => done(false));
  });

describe("serve --processes 2", () => {
  it("runs two processes on a Redis of its own; a killed one's rooms come back in the other; Ctrl-C stops all", async () => {
    const store = mkdtempSync(join(tmpdir(), "sw-processes-"));
    launcher = spawn(process.execPath, [bin, "serve", "--processes", "2", "--port", "0", "--no-demo", "--store", store, "--admin-token", ADMIN], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    launcher.stdout!.on("data", (d) => (out += String(d)));
    launcher.stderr!.on("data", (d) => (out += String(d)));
    await until(() => /any process serves every room: .*\)\n/.test(out) || launcher!.exitCode !== null, 150_000, "the group to start");
    expect(out).toMatch(/no --redis given: started redis-server at redis:\/\/127\.0\.0\.1:(\d+)/);
    const redisPort = Number(/redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
    const urls = /any process serves every room: (\S+) (\S+)\)/.exec(out)!.slice(1, 3).map((u) => u.replace(/\/$/, ""));
    expect(out).not.toContain(ADMIN);
    const health = await Promise.all(urls.map((u) => json(`${u}/api/health`)));
    expect(new Set(health.map((h) => h.pid)).size).toBe(2);

    // Rooms spread over both processes (Colyseus puts each where there are fewest; a process that
    // has just started may not be counted yet, so more rooms are made, a moment apart, until both hold one).
    const ids: string[] = [];
    const owning = () => new Set(new RoomRegistry(store).list().map((r) => r.owner.pid)).size;
    for (let i = 0; i < 12 && (i < 4 || owning() < 2); i++) {
      if (i >= 4) await new Promise((done) => setTimeout(done, 500));
      const r = await fetch(`${urls[0]}/api/rooms`, { method: "POST", headers: admin, body: JSON.stringify({ type: "simulation", options: { world: "tomi", seed: 10 + i, loop: true, tickMs: 200, pauseMs: 200 } }) });
      expect(r.status).toBe(201);
      ids.push(((await r.json()) as { roomId: string }).roomId);
    }
    const owners = new RoomRegistry(store).list();
    const pids = [...new Set(owners.map((r) => r.owner.pid))];
    expect(pids.sort()).toEqual(health.map((h) => h.pid).sort());
    const victim = pids[0]!;
    const survivor = health.find((h) => h.pid !== victim)!;
    const survivorUrl = urls[health.indexOf(survivor)]!;
    const victimRooms = owners.filter((r) => r.owner.pid === victim).map((r) => r.roomId);
    const survivorRoom = owners.find((r) => r.owner.pid !== victim)!.roomId;

    // A spectator of the survivor's room, watching through the kill.
    const reserved = await json(`${survivorUrl}/matchmake/joinById/${survivorRoom}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const watcher = connect(`ws://${reserved.publicAddress}/${reserved.processId}/${reserved.roomId}?sessionId=${reserved.sessionId}`);
    await until(() => watcher.seen.token !== "", 10_000, "the spectator's join");
    let frames = 0;
    watcher.ws.on("message", () => frames++);

    const killedAt = Date.now();
    process.kill(victim, "SIGKILL");
    await until(async () => {
      const listed = ((await json(`${survivorUrl}/api/rooms`)).rooms as { roomId: string }[]).map((r) => r.roomId);
      return victimRooms.every((id) => listed.includes(id));
    }, 30_000, "the killed process's rooms to come back");
    const seconds = (Date.now() - killedAt) / 1000;
    expect(seconds).toBeLessThan(30);
    // Recreated in the survivor, under their ids, and owned by it now.
    for (const r of new RoomRegistry(store).list()) expect(r.owner.pid).toBe(survivor.pid);
    // The survivor's own spectator noticed nothing: still connected, still receiving.
    const before = frames;
    await until(() => frames > before, 10_000, "patches after the kill");
    expect(watcher.seen.closed).toBeUndefined();
    expect(out).toContain("exited (SIGKILL): the other processes recreate its rooms; starting it again in 1 s");
    // The launcher starts it again.
    await until(() => (out.match(/server on http/g) ?? []).length >= 3, 60_000, "the killed process to start again");
    watcher.ws.close();

    launcher.kill("SIGINT");
    const [code] = (await once(launcher, "exit")) as [number];
    expect(code).toBe(0);
    expect(out).toContain("stopped; every log is flushed.");
    expect(await portOpen(redisPort)).toBe(false);
    // Stopped, not ended: every room stays registered, to come back with the next server.
    expect(new RoomRegistry(store).list().map((r) => r.roomId).sort()).toEqual(ids.sort());
  }, 300_000);

  it("a Ctrl-C while the Redis starts leaves nothing running", async () => {
    const { code, kids } = await interruptedStart((k) => k.some((c) => c.name === "redis-server"));
    expect(code).toBe(0);
    expect(kids.map((k) => k.name)).toContain("redis-server");
    await until(() => kids.every((k) => !alive(k.pid)), 10_000, "every child gone");
  }, 90_000);

  it("a Ctrl-C while the server processes start leaves nothing running", async () => {
    // Both servers spawned (neither has listened yet on this machine: a start takes seconds). The
    // redis-server must be seen too: a child forked for it is named "node" until it runs redis-server.
    const { code, out, kids } = await interruptedStart((k) => k.some((c) => c.name === "redis-server") && k.filter((c) => c.name !== "redis-server").length >= 1);
    expect(code).toBe(0);
    expect(out).toContain("SIGINT: stopping the 2 processes");
    expect(kids.map((k) => k.name)).toContain("redis-server");
    expect(kids.length).toBeGreaterThanOrEqual(2);
    await until(() => kids.every((k) => !alive(k.pid)), 10_000, "every child gone");
  }, 90_000);

  it("a launcher killed with SIGKILL: its server processes stop by themselves (its pipe ends), its redis-server too (its parent-death signal)", async () => {
    const store = mkdtempSync(join(tmpdir(), "sw-processes-kill-"));
    const child = spawn(process.execPath, [bin, "serve", "--processes", "2", "--port", "0", "--no-demo", "--store", store, "--admin-token", ADMIN], { stdio: ["ignore", "pipe", "pipe"] });
    launchers.push(child);
    let out = "";
    child.stdout!.on("data", (d) => (out += String(d)));
    await until(() => /any process serves every room: .*\)\n/.test(out) || child.exitCode !== null, 150_000, "the group to start");
    const servers = childrenOf(child.pid!).filter((k) => k.name !== "redis-server");
    const redis = childrenOf(child.pid!).find((k) => k.name === "redis-server")!;
    expect(servers).toHaveLength(2);
    expect(redis).toBeDefined();
    const redisPort = Number(/redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]);
    expect(await portOpen(redisPort)).toBe(true);
    child.kill("SIGKILL");
    await until(() => servers.every((k) => !alive(k.pid)), 30_000, "the server processes to stop");
    await until(() => !alive(redis.pid), 10_000, "the launcher's redis-server to stop");
    expect(await portOpen(redisPort)).toBe(false);
  }, 240_000);
});

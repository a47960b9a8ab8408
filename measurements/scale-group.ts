/**
 * Scale script (not a test): what a group of server processes on one Redis holds, as users run it
 * (`socialworld serve --processes N`, docs/scale.md), and what killing one of them costs.
 *
 *   npm run bench:scale -- [--processes 1,2,4] [--spectators-per-process 1000]
 *                          [--rooms-per-process 50] [--seconds 20] [--tick-ms 500] [--workers 2]
 *                          [--decoding-per-room 1] [--client-nice 0]
 *                          [--no-kill] [--kill-seconds 30] [--json OUT.json]
 *
 * For each process count: the group is started on a fresh store (one process: plain `serve`, no
 * Redis; more: `serve --processes N` with the Redis it starts), looping ToMi rooms are created
 * through the admin API of each process in turn (Colyseus puts each where there are fewest),
 * spectators reserve their seats through the processes in turn (matchmaking of another process's
 * room included) from worker threads (each room's clients in one thread), and for --seconds the
 * script records the patch latency (server recording a timestep to a client having it: decoded,
 * for the one client of each room that decodes with the SDK; its frame arrived, for the light
 * others, see load-spectators.ts), the matchmaking latency, and the CPU and memory of each
 * process, of the Redis and of this script (the load generator). Then, with the largest group, one process is
 * killed (SIGKILL) under load: the seconds until every one of its rooms is listed again
 * (re-created by the others), the p99 of the other processes' spectators in each second
 * throughout, how many spectators were dropped (its own, and the others': none should be), and
 * whether the room registry is intact. `--processes 4` alone gives the kill without the smaller groups.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { RoomRegistry } from "../store/room-registry.js";
import { clientsOfWorker } from "./load-clients.js";
import type { WorkerInput, WorkerMessage } from "./load-spectators.js";
import { cpuSeconds, rssMb } from "./process-stats.js";
import { scriptArgs } from "./script-args.js";
import { freePort, serveBin, startServe, stopServe } from "./server-process.js";
import { quantile } from "./spectator-latency.js";

const Args = z.object({
  processes: z
    .string()
    .regex(/^\d{1,2}(,\d{1,2})*$/, "a list of process counts, e.g. 1,2,4")
    .default("1,2,4")
    .transform((s) => s.split(",").map(Number))
    .refine((ns) => ns.every((n) => n >= 1 && n <= 16), "each process count is 1 to 16"),
  "spectators-per-process": intArg(1, 20_000).default(1000),
  "rooms-per-process": intArg(1, 1000).default(50),
  seconds: intArg(1, 600).default(20),
  "tick-ms": intArg(20, 60_000).default(500),
  workers: intArg(1, 16).default(2),
  "decoding-per-room": intArg(1, 20_000).default(1),
  "client-nice": intArg(0, 19).default(0),
  "no-kill": z.boolean().default(false),
  "kill-seconds": intArg(5, 600).default(30),
  json: z.string().optional(),
});

const USAGE = `node dist/measurements/scale-group.js [options]   (or: npm run bench:scale -- [options])

Starts 1, 2 and 4 server processes (serve --processes N, on a Redis it starts), creates looping ToMi
rooms and connects spectators through every process, and prints for each count: spectators and
rooms held, patch latency (p50, p99, max; all spectators, and the decoding ones apart), matchmaking
latency, CPU and memory per process, the Redis's and this script's CPU, the load average. Then
kills one process of the largest group under load: rooms re-created, seconds until re-created, the
other processes' spectators' p99 each second, and whether the room registry is intact.

Options:
  --processes LIST            process counts to measure (default 1,2,4); one count (--processes 4)
                              measures that group alone, then kills one of its processes
  --spectators-per-process N  spectators per process (default 1000: 4,000 for 4 processes)
  --rooms-per-process N       rooms per process (default 50: 200 for 4 processes)
  --seconds N                 how long to measure each count (default 20)
  --tick-ms N                 each room's time between timesteps (default 500)
  --workers N                 worker threads the clients are spread over (default 2)
  --decoding-per-room N       clients of each room that decode every patch with the SDK (default 1);
                              the others are light: timed when a patch's frame arrives, matched to
                              its timestep by the bytes the decoding one saw (measurements/
                              load-spectators.ts). At least the spectators per room: all decode
  --client-nice N             niceness of the clients' threads (default 0), so that the servers (at
                              this script's) come first when they want the same core
  --no-kill                   skip killing a process of the largest group
  --kill-seconds N            how long to watch after the kill (default 30)
  --json OUT.json             also write the results as JSON
  --help                      this text`;

const ADMIN = "scale-test-admin-token-0123456789";
const log = (s: string) => process.stderr.write(s + "\n");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (x: number) => Math.round(x * 10) / 10;

interface Group {
  readonly urls: string[];
  readonly pids: number[];
  /** The Redis the launcher started (none for one process). */
  readonly redisPid?: number;
  readonly store: string;
  readonly stop: () => Promise<void>;
}

/** One process: plain `serve`; more: `serve --processes N`, once it says where its processes listen. */
async function startGroup(n: number): Promise<Group> {
  const store = mkdtempSync(join(tmpdir(), `sw-scale-${n}-`));
  const health = async (url: string) => ((await (await fetch(`${url}/api/health`)).json()) as { pid: number }).pid;
  if (n === 1) {
    const port = await freePort();
    const server = await startServe(port, store, ADMIN, () => undefined);
    const url = `http://127.0.0.1:${port}`;
    return { urls: [url], pids: [server.pid!], store, stop: () => stopServe(server) };
  }
  const launcher: ChildProcess = spawn(process.execPath, [serveBin, "serve", "--processes", String(n), "--port", "0", "--no-demo", "--store", store, "--admin-token", ADMIN], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  launcher.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  launcher.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const urls = await new Promise<string[]>((found, failed) => {
    const check = () => {
      const m = /any process serves every room: ([^)]*)\)/.exec(out);
      if (m) found(m[1]!.split(" ").map((u) => u.replace(/\/$/, "")));
    };
    launcher.stdout!.on("data", check);
    launcher.once("exit", (code) => failed(new Error(`serve --processes ${n} exited (${code}) before it started:\n${out.slice(-2000)}`)));
  });
  return {
    urls,
    pids: await Promise.all(urls.map(health)),
    redisPid: childrenOf(launcher.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("redis-server")),
    store,
    async stop() {
      if (launcher.exitCode !== null) return;
      launcher.kill("SIGINT");
      const t = setTimeout(() => launcher.kill("SIGKILL"), 60_000);
      await once(launcher, "exit");
      clearTimeout(t);
    },
  };
}

/** The children of a process of this machine (Linux's /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function createRooms(group: Group, count: number, tickMs: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const url = group.urls[i % group.urls.length]!;
    const res = await fetch(`${url}/api/rooms`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ type: "simulation", options: { world: "tomi", seed: 1000 + i, loop: true, pauseMs: 0, tickMs, title: `scale ${i}` } }),
    });
    if (res.status !== 201) throw new Error(`creating room ${i} through ${url}: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { roomId: string }).roomId);
    // Rooms started at different moments tick at different moments, as rooms do in use.
    await sleep(tickMs / count);
  }
  return ids;
}

/** Spectators from worker threads, each room's clients in one (clientsOfWorker); they reserve through the processes in turn. */
async function connectSpectators(group: Group, roomIds: string[], spectators: number, workerCount: number, decodingPerRoom: number, nice: number) {
  const workers: Worker[] = [];
  const connected = await Promise.all(
    Array.from({ length: workerCount }, (_, w) => {
      const clients = clientsOfWorker(spectators, roomIds.length, workerCount, w);
      const input: WorkerInput = { bases: group.urls, roomIds, clients, connectConcurrency: 25, reconnect: false, decodingPerRoom, nice };
      const worker = new Worker(new URL("./load-spectators.js", import.meta.url), { workerData: input });
      workers.push(worker);
      return new Promise<Extract<WorkerMessage, { type: "connected" }>>((done, fail) => {
        worker.once("message", (m: WorkerMessage) => (m.type === "connected" ? done(m) : fail(new Error("unexpected message"))));
        worker.once("error", fail);
      });
    }),
  );
  for (const c of connected) for (const e of c.errors) log(`  join failed: ${e}`);
  return {
    workers,
    ok: connected.reduce((n, c) => n + c.ok, 0),
    decoding: connected.reduce((n, c) => n + c.decoding, 0),
    heldByHost: sumByHost(connected.map((c) => c.heldByHost)),
    reserveMs: connected.flatMap((c) => c.reserveMs).sort((a, b) => a - b),
  };
}

/** Starts recording in every worker. */
const record = (workers: Worker[]) => workers.forEach((w) => w.postMessage({ type: "record" }));

/** What every worker recorded since `record` (recording stops). */
async function collect(workers: Worker[]) {
  const reports = await Promise.all(
    workers.map(
      (w) =>
        new Promise<Extract<WorkerMessage, { type: "latencies" }>>((done) => {
          const on = (m: WorkerMessage) => {
            if (m.type !== "latencies") return;
            w.off("message", on);
            done(m);
          };
          w.on("message", on);
          w.postMessage({ type: "report" });
        }),
    ),
  );
  const byHost: Record<string, number[]> = {};
  for (const r of reports) for (const [h, v] of Object.entries(r.byHost)) (byHost[h] ??= []).push(...v);
  return {
    all: reports.flatMap((r) => r.values),
    decoded: reports.flatMap((r) => r.decoded),
    light: reports.flatMap((r) => r.light),
    unmatched: reports.reduce((n, r) => n + r.unmatched, 0),
    byHost,
    drops: reports.reduce((n, r) => n + r.drops, 0),
    dropsByHost: sumByHost(reports.map((r) => r.dropsByHost)),
  };
}

/** Counts by process address, added up over the workers. */
function sumByHost(counts: Record<string, number>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const c of counts) for (const [h, n] of Object.entries(c)) sum[h] = (sum[h] ?? 0) + n;
  return sum;
}

async function closeWorkers(workers: Worker[]) {
  for (const w of workers) w.postMessage({ type: "close" });
  await sleep(500);
  for (const w of workers) await w.terminate();
}

const hostOf = (url: string) => new URL(url).host;

async function main(): Promise<void> {
  const args = scriptArgs({
    name: "scale-group",
    usage: USAGE,
    schema: Args,
  });
  const tickMs = args["tick-ms"];
  const rows: Record<string, unknown>[] = [];
  let kill: Record<string, unknown> | undefined;
  const largest = Math.max(...args.processes);
  for (const n of args.processes) {
    log(`${n} process${n === 1 ? "" : "es"}: starting ...`);
    const group = await startGroup(n);
    let workers: Worker[] = [];
    try {
      const roomIds = await createRooms(group, n * args["rooms-per-process"], tickMs);
      const spectators = n * args["spectators-per-process"];
      log(`  ${roomIds.length} rooms; connecting ${spectators} spectators ...`);
      const c = await connectSpectators(group, roomIds, spectators, args.workers, args["decoding-per-room"], args["client-nice"]);
      workers = c.workers;
      log(`  ${c.ok} connected; measuring for ${args.seconds} s ...`);
      await sleep(2000);
      const cpu0 = group.pids.map(cpuSeconds);
      const redis0 = group.redisPid === undefined ? 0 : cpuSeconds(group.redisPid);
      const own0 = process.cpuUsage();
      const load = loadavg().map((x) => Math.round(x * 100) / 100);
      const t0 = performance.now();
      record(workers);
      await sleep(args.seconds * 1000);
      const got = await collect(workers);
      const elapsed = (performance.now() - t0) / 1000;
      const cores = (seconds: number) => Math.round((seconds / elapsed) * 100) / 100;
      const cpu = group.pids.map((pid, i) => cores(cpuSeconds(pid) - cpu0[i]!));
      const own = process.cpuUsage(own0);
      const lat = got.all.sort((a, b) => a - b);
      const summary = (v: number[]) => ({ n: v.length, p50: quantile(v, 0.5), p99: quantile(v, 0.99), max: v.length ? v.reduce((m, x) => (m > x ? m : x)) : NaN });
      const hostsP99 = group.urls.map((u) => quantile(got.byHost[hostOf(u)] ?? [], 0.99));
      const row = {
        processes: n,
        rooms: roomIds.length,
        spectatorsRequested: spectators,
        spectatorsConnected: c.ok,
        decodingClients: c.decoding,
        dropped: got.drops,
        timesteps: lat.length,
        patchMs: { p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat.at(-1) ?? NaN },
        patchP99ByProcessMs: hostsP99,
        decodingClientsPatchMs: summary(got.decoded),
        lightClientsPatchMs: summary(got.light),
        lightFramesUnmatched: got.unmatched,
        matchmakingMs: { p50: round1(quantile(c.reserveMs, 0.5)), p99: round1(quantile(c.reserveMs, 0.99)) },
        cpuCoresByProcess: cpu,
        redisCpuCores: group.redisPid === undefined ? null : cores(cpuSeconds(group.redisPid) - redis0),
        loadGeneratorCpuCores: cores((own.user + own.system) / 1e6),
        loadAverageAtStart: load,
        rssMbByProcess: group.pids.map(rssMb),
      };
      rows.push(row);
      log(`  p99 ${row.patchMs.p99} ms, matchmaking p99 ${row.matchmakingMs.p99} ms`);

      if (n === largest && n >= 2 && !args["no-kill"]) kill = await killOne(group, roomIds, workers, c.heldByHost, args["kill-seconds"]);
    } finally {
      await closeWorkers(workers);
      await group.stop();
    }
  }

  const out = (s: string) => process.stdout.write(s + "\n");
  out(`| processes | rooms | spectators held (decoding) | patch p50 / p99 / max (ms) | p99 < 100 ms | decoding clients' p50 / p99 (ms) | matchmaking p50 / p99 (ms) | CPU per process (cores) | Redis CPU | load generator CPU | memory per process (MB) | load average at start |`);
  out(`|---|---|---|---|---|---|---|---|---|---|---|---|`);
  for (const r of rows as any[]) {
    out(
      `| ${r.processes} | ${r.rooms} | ${r.spectatorsConnected} of ${r.spectatorsRequested} (${r.decodingClients})${r.dropped ? `, ${r.dropped} dropped` : ""}${r.lightFramesUnmatched ? `, ${r.lightFramesUnmatched} light frames unmatched (not in the latencies)` : ""} | ${r.patchMs.p50} / ${r.patchMs.p99} / ${r.patchMs.max} | ${r.patchMs.p99 < 100 ? "yes" : "no"} | ${r.decodingClientsPatchMs.p50} / ${r.decodingClientsPatchMs.p99} | ${r.matchmakingMs.p50} / ${r.matchmakingMs.p99} | ${r.cpuCoresByProcess.join(", ")} | ${r.redisCpuCores === null ? "-" : r.redisCpuCores < 0.01 ? "< 0.01" : r.redisCpuCores} | ${r.loadGeneratorCpuCores} | ${r.rssMbByProcess.join(", ")} | ${r.loadAverageAtStart.join(" ")} |`,
    );
  }
  if (kill) {
    const k = kill as any;
    out("");
    out(`| one of ${largest} processes killed under load | value |`);
    out(`|---|---|`);
    out(`| its rooms re-created | ${k.recreated} of ${k.victimRooms}; at the end ${k.listed} of the ${k.rooms} rooms listed, ${k.listedTwice} twice |`);
    out(`| seconds until every one was listed again | ${k.secondsUntilRecreated} |`);
    out(`| other processes' spectators: patch p99 each second, worst / throughout | ${k.worstSecondP99} / ${k.p99Throughout} ms (${k.seconds} s watched) |`);
    out(`| its spectators dropped (they do not reconnect) | ${k.dropped} of ${k.victimSpectators} |`);
    out(`| other processes' spectators dropped | ${k.othersDropped} of ${k.otherSpectators} |`);
    out(`| room registry intact | ${k.registryIntact ? "yes" : "NO"}: ${k.registry} |`);
    if (k.lightFramesUnmatched) out(`| light frames unmatched (not in the p99s; the killed process's rooms' included) | ${k.lightFramesUnmatched} |`);
  }
  out("");
  out(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), Node ${process.version}; tick ${tickMs} ms, ${args.seconds} s measured per count; clients' threads at nice ${args["client-nice"]}, ${args["decoding-per-room"]} decoding client(s) per room`);
  if (args.json) writeFileSync(args.json, JSON.stringify({ rows, kill, tickMs, seconds: args.seconds, machine: { cpus: cpus().length, node: process.version } }, null, 2) + "\n");
}

/** Kills the last process of `group` under load and watches: see the header. */
async function killOne(group: Group, roomIds: string[], workers: Worker[], heldByHost: Record<string, number>, seconds: number): Promise<Record<string, unknown>> {
  const victimPid = group.pids.at(-1)!;
  const victimHost = hostOf(group.urls.at(-1)!);
  const survivor = group.urls[0]!;
  const registry = new RoomRegistry(group.store);
  const victimRooms = registry.list().filter((r) => r.owner.pid === victimPid).map((r) => r.roomId);
  log(`  killing process ${group.urls.length} (pid ${victimPid}, ${victimRooms.length} rooms) ...`);
  const windows: number[] = [];
  const throughout: number[] = [];
  const dropsByHost: Record<string, number>[] = [];
  /** Light frames not matched to a timestep (load-spectators.ts), any process's: left out of the p99s. */
  let unmatched = 0;
  let recreatedAt: number | undefined;
  record(workers);
  const killedAt = performance.now();
  process.kill(victimPid, "SIGKILL");
  let lastWindow = performance.now();
  while (performance.now() - killedAt < seconds * 1000) {
    if (recreatedAt === undefined) {
      const listed = await fetch(`${survivor}/api/rooms`)
        .then(async (r) => ((await r.json()) as { rooms: { roomId: string }[] }).rooms.map((x) => x.roomId))
        .catch(() => [] as string[]);
      const owners = new Map(registry.list().map((r) => [r.roomId, r.owner.pid]));
      if (roomIds.every((id) => listed.includes(id)) && victimRooms.every((id) => owners.get(id) !== victimPid)) recreatedAt = performance.now();
    }
    await sleep(250);
    if (performance.now() - lastWindow >= 1000) {
      const got = await collect(workers);
      record(workers);
      lastWindow = performance.now();
      unmatched += got.unmatched;
      const others = Object.entries(got.byHost).filter(([h]) => h !== victimHost).flatMap(([, v]) => v);
      dropsByHost.push(got.dropsByHost);
      throughout.push(...others);
      if (others.length) windows.push(quantile(others, 0.99));
    }
  }
  const last = await collect(workers);
  dropsByHost.push(last.dropsByHost);
  unmatched += last.unmatched;
  const drops = sumByHost(dropsByHost);
  const others = (counts: Record<string, number>) => Object.entries(counts).reduce((n, [h, v]) => n + (h === victimHost ? 0 : v), 0);
  let registryText: string;
  let intact = false;
  try {
    const after = registry.list();
    const ids = after.map((r) => r.roomId);
    intact = ids.length === roomIds.length && new Set(ids).size === ids.length && roomIds.every((id) => ids.includes(id)) && after.every((r) => r.owner.pid !== victimPid);
    registryText = `${ids.length} rooms, ${new Set(ids).size} distinct, ${after.filter((r) => r.owner.pid === victimPid).length} still the dead process's`;
  } catch (err) {
    registryText = (err as Error).message;
  }
  const listed = ((await (await fetch(`${survivor}/api/rooms`)).json()) as { rooms: { roomId: string }[] }).rooms.map((x) => x.roomId);
  return {
    victimRooms: victimRooms.length,
    recreated: victimRooms.filter((id) => listed.includes(id)).length,
    listedTwice: listed.length - new Set(listed).size,
    listed: new Set(listed).size,
    rooms: roomIds.length,
    secondsUntilRecreated: recreatedAt === undefined ? `not within ${seconds}` : round1((recreatedAt - killedAt) / 1000),
    worstSecondP99: windows.length ? Math.max(...windows) : NaN,
    p99Throughout: quantile(throughout, 0.99),
    seconds,
    dropped: drops[victimHost] ?? 0,
    victimSpectators: heldByHost[victimHost] ?? 0,
    othersDropped: others(drops),
    otherSpectators: others(heldByHost),
    registryIntact: intact,
    registry: registryText,
    lightFramesUnmatched: unmatched,
  };
}

main().catch((err: unknown) => {
  process.stderr.write(`scale-group: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

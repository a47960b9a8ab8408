/**
 * Load script (not a test): how many concurrent spectators and rooms one server process holds, and
 * the patch latency they see.
 *
 *   npm run bench:load -- [--spectators 1000] [--rooms 50] [--seconds 30] [--tick-ms 500]
 *                         [--workers 2] [--decoding-per-room N] [--in-phase] [--room tomi|social]
 *                         [--users N] [--json OUT.json]
 *
 * It starts the server as a second process on loopback (`socialworld serve --no-demo` on a free
 * port, a fresh store), creates the rooms through the admin API (ToMi stories looping forever, or
 * social rooms of --users users whose posts keep spreading: `npm run bench:social-room`),
 * connects the spectators with the real SDK from worker threads of this process (with
 * --decoding-per-room, that many a room; the others light, timed at a patch's arrival:
 * load-spectators.ts), measures for the given time, and prints a table: clients connected, rooms,
 * patches, the latency from the server recording a timestep to a client having it (p50, p90, p99,
 * max), and the server's CPU and memory. Everything stops by itself at the end.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { clientsOfWorker } from "./load-clients.js";
import type { WorkerInput, WorkerMessage } from "./load-spectators.js";
import { cpuSeconds, rssMb } from "./process-stats.js";
import { scriptArgs } from "./script-args.js";
import { freePort, startServe, stopServe } from "../measurements/server-process.js";

const Args = z.object({
  spectators: intArg(1, 20_000).default(1000),
  rooms: intArg(1, 1000).default(50),
  seconds: intArg(1, 600).default(30),
  "tick-ms": intArg(20, 60_000).default(500),
  workers: intArg(1, 16).default(2),
  /** How many of each room's spectators decode every patch with the SDK; absent: all (load-spectators.ts). */
  "decoding-per-room": intArg(1, 20_000).optional(),
  /** Start the rooms all at once, so that their timesteps coincide (the worst case), instead of spread over one tick. */
  "in-phase": z.boolean().default(false),
  room: z.enum(["tomi", "social"]).default("tomi"),
  users: intArg(2, 10_000).default(1000),
  json: z.string().optional(),
});

const USAGE = `node dist/measurements/load-server.js [options]   (or: npm run bench:load -- [options])

Starts the server as a second process on loopback, creates looping ToMi rooms through the admin
API, connects spectators with the real SDK from worker threads, and prints clients connected,
patches, patch latency (p50, p90, p99, max) and the server's CPU and memory.

Options:
  --spectators N   spectator clients (default 1000, at most 20000)
  --rooms N        rooms (default 50, at most 1000)
  --seconds N      how long to measure once everyone is connected (default 30)
  --tick-ms N      each room's time between timesteps (default 500)
  --workers N      worker threads the clients are spread over (default 2)
  --decoding-per-room N
                   spectators of each room that decode every patch with the SDK (default: all);
                   the others are light, timed when a patch's frame arrives (docs/scale.md)
  --in-phase       start every room at once, so their timesteps coincide (the worst case)
  --room KIND      tomi (default: looping ToMi stories) or social (a network of --users users,
                   a post by a popular user every 5 timesteps, rule agents: the cascade grows)
  --users N        users of each social room (default 1000, at most 10000)
  --json OUT.json  also write the results as JSON
  --help           this text`;

const ADMIN = "load-test-admin-token-0123456789";

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const args = scriptArgs({
    name: "load-server",
    usage: USAGE,
    schema: Args,
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = (s: string) => process.stderr.write(s + "\n");
  log(`starting the server on ${base} ...`);
  const server = await startServe(port, mkdtempSync(join(tmpdir(), "sw-load-")), ADMIN, (text) => process.stderr.write(text));
  const workers: Worker[] = [];
  try {
    const roomIds: string[] = [];
    for (let i = 0; i < args.rooms; i++) {
      const res = await fetch(`${base}/api/rooms`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
        body: JSON.stringify(
          args.room === "social"
            ? { type: "social", options: { users: args.users, seed: 1000 + i, posts: 1000, every: 5, maxSteps: 100_000, loop: true, pauseMs: 0, tickMs: args["tick-ms"], title: `load ${i}` } }
            : { type: "simulation", options: { world: "tomi", seed: 1000 + i, loop: true, pauseMs: 0, tickMs: args["tick-ms"], title: `load ${i}` } },
        ),
      });
      if (res.status !== 201) throw new Error(`creating room ${i}: ${res.status} ${await res.text()}`);
      roomIds.push(((await res.json()) as { roomId: string }).roomId);
      // Rooms started at different moments tick at different moments, as rooms do in use.
      if (!args["in-phase"]) await new Promise((r) => setTimeout(r, args["tick-ms"] / args.rooms));
    }
    log(`${roomIds.length} rooms; connecting ${args.spectators} spectators from ${args.workers} worker threads ...`);

    const connectStart = performance.now();
    const decodingPerRoom = args["decoding-per-room"];
    const connected = await Promise.all(
      Array.from({ length: args.workers }, (_, w) => {
        const clients = clientsOfWorker(args.spectators, roomIds.length, args.workers, w);
        const input: WorkerInput = { bases: [base], roomIds, clients, connectConcurrency: 25, ...(decodingPerRoom === undefined ? {} : { decodingPerRoom }) };
        const worker = new Worker(new URL("./load-spectators.js", import.meta.url), { workerData: input });
        workers.push(worker);
        return new Promise<Extract<WorkerMessage, { type: "connected" }>>((done, fail) => {
          worker.once("message", (m: WorkerMessage) => (m.type === "connected" ? done(m) : fail(new Error("unexpected message"))));
          worker.once("error", fail);
        });
      }),
    );
    const connectS = (performance.now() - connectStart) / 1000;
    const ok = connected.reduce((n, c) => n + c.ok, 0);
    const failed = connected.reduce((n, c) => n + c.failed, 0);
    for (const c of connected) for (const e of c.errors) log(`  join failed: ${e}`);
    log(`${ok} connected (${failed} failed) in ${connectS.toFixed(1)} s; measuring for ${args.seconds} s ...`);

    await new Promise((r) => setTimeout(r, 2000));
    const cpu0 = cpuSeconds(server.pid!);
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    for (const w of workers) w.postMessage({ type: "record" });
    await new Promise((r) => setTimeout(r, args.seconds * 1000));
    const reports = await Promise.all(
      workers.map(
        (w) =>
          new Promise<Extract<WorkerMessage, { type: "latencies" }>>((done) => {
            w.once("message", (m: WorkerMessage) => m.type === "latencies" && done(m));
            w.postMessage({ type: "report" });
          }),
      ),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = (cpuSeconds(server.pid!) - cpu0) / elapsed;
    const own = process.cpuUsage(own0);
    const clientCpu = (own.user + own.system) / 1e6 / elapsed;
    const rss = rssMb(server.pid!);
    const lat = reports.flatMap((r) => r.values).sort((a, b) => a - b);
    const decoded = reports.flatMap((r) => r.decoded).sort((a, b) => a - b);
    const patches = reports.reduce((n, r) => n + r.patches, 0);
    const drops = reports.reduce((n, r) => n + r.drops, 0);
    const result = {
      spectatorsRequested: args.spectators,
      spectatorsConnected: ok,
      joinFailures: failed,
      dropped: drops,
      rooms: roomIds.length,
      room: args.room,
      ...(args.room === "social" ? { users: args.users } : {}),
      tickMs: args["tick-ms"],
      inPhase: args["in-phase"],
      seconds: Math.round(elapsed * 10) / 10,
      connectSeconds: Math.round(connectS * 10) / 10,
      timestepsReceived: lat.length,
      patchesPerSecond: Math.round(patches / elapsed),
      latencyMs: { p50: quantile(lat, 0.5), p90: quantile(lat, 0.9), p99: quantile(lat, 0.99), max: lat.at(-1) ?? NaN },
      ...(decodingPerRoom === undefined
        ? {}
        : {
            decodingPerRoom,
            decodingClientsLatencyMs: { p50: quantile(decoded, 0.5), p99: quantile(decoded, 0.99) },
            lightFramesUnmatched: reports.reduce((n, r) => n + r.unmatched, 0),
          }),
      serverCpuCores: Math.round(cpu * 100) / 100,
      clientsCpuCores: Math.round(clientCpu * 100) / 100,
      serverRssMb: rss,
      machine: { node: process.version, cpus: (await import("node:os")).cpus().length },
    };
    const rows: [string, string][] = [
      ["spectators connected", `${ok} of ${args.spectators}${failed ? ` (${failed} joins failed)` : ""}${drops ? `, ${drops} dropped` : ""}`],
      ["rooms", `${roomIds.length}${args.room === "social" ? ` social, ${args.users} users each` : " ToMi"} (a timestep every ${args["tick-ms"]} ms each, ${args["in-phase"] ? "all at the same moment" : "spread over the interval"})`],
      ["measured", `${result.seconds} s after connecting ${ok} clients in ${result.connectSeconds} s`],
      ["timesteps received", `${lat.length} (${Math.round(lat.length / elapsed)}/s), ${result.patchesPerSecond} patches/s received`],
      ["patch latency p50 / p90 / p99 / max", `${result.latencyMs.p50} / ${result.latencyMs.p90} / ${result.latencyMs.p99} / ${result.latencyMs.max} ms`],
      ...(decodingPerRoom === undefined
        ? []
        : ([["decoding clients' patch latency p50 / p99", `${quantile(decoded, 0.5)} / ${quantile(decoded, 0.99)} ms (${decodingPerRoom} a room decode; the others are light: timed at a frame's arrival${result.lightFramesUnmatched ? `; ${result.lightFramesUnmatched} light frames unmatched, not in the latencies` : ""})`]] as [string, string][])),
      ["CPU", `server ${result.serverCpuCores} cores, load generator ${result.clientsCpuCores} cores (of ${result.machine.cpus}, shared)`],
      ["server memory", `${rss} MB RSS`],
    ];
    process.stdout.write(`| measure | value |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join("\n")}\n`);
    if (args.json) writeFileSync(args.json, JSON.stringify(result, null, 2) + "\n");
  } finally {
    for (const w of workers) w.postMessage({ type: "close" });
    await new Promise((r) => setTimeout(r, 500));
    for (const w of workers) await w.terminate();
    await stopServe(server);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`load-server: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

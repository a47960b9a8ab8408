/**
 * Fenced Redis writes per second (not a test): the writes a process of a group makes through its
 * fence (server/group/fence.ts), each one Lua step that checks the process's tombstone first,
 * against a redis-server of the script's own on loopback (no persistence).
 *
 *   node dist/measurements/fence-writes.js [--writes 20000] [--in-flight 64] [--runs 3] [--json OUT.json]
 *
 * Four kinds of write, as the group makes them: a room listing (`hset` of a listing's JSON,
 * GroupRoomDriver), a publication (`publish`, socket.io's adapter and Colyseus's presence), two
 * commands in one step (`hincrby` + `expire`, GroupPresence.hincrbyex), and a Lua step of the
 * project's own (a pool's trainer lease renewed, TrainerLease). For each, `--writes` writes with
 * `--in-flight` of them waiting at once, `--runs` times: the median writes per second, and the CPU
 * per write of this process and of the redis-server. The tables with the machine, its load and the
 * command are in docs/scale.md.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { Fence } from "../server/group/fence.js";
import { freePort } from "../server/group/free-port.js";
import { tombstoneKey } from "../server/group/process-heartbeat.js";
import { checkReachable, redisConnection } from "../server/group/redis.js";
import { cpuSeconds } from "./process-stats.js";
import { scriptArgs } from "./script-args.js";

const Args = z.object({
  writes: intArg(100, 10_000_000).default(20_000),
  "in-flight": intArg(1, 10_000).default(64),
  runs: intArg(1, 50).default(3),
  json: z.string().optional(),
});

const USAGE = `node dist/measurements/fence-writes.js [options]

Starts a redis-server on a free loopback port and prints, for four kinds of fenced write (a room
listing, a publication, two commands in one step, a trainer lease renewed), the median writes per
second over the runs and the CPU per write of this process and of the redis-server.

  --writes N      writes per run and kind (default 20000)
  --in-flight N   writes waiting for Redis at once (default 64)
  --runs N        runs per kind; the median is printed (default 3)
  --json PATH     also write the figures as JSON
`;

// As in trainer-lease.ts: renewed only if still this process's (KEYS[2] is the lease, KEYS[1] the tombstone).
const RENEW = `if redis.call("get", KEYS[2]) == ARGV[1] then return redis.call("pexpire", KEYS[2], ARGV[2]) else return 0 end`;

/** A room listing as Colyseus's driver keeps it (about 300 bytes of JSON). */
const LISTING = JSON.stringify({ clients: 3, locked: false, private: false, maxClients: 1000, metadata: { world: "tomi", seed: 12, episode: 4, timestep: 7 }, name: "simulation", publicAddress: "127.0.0.1:2568", processId: "aZ3kq9Xc", roomId: "Rk2vP0aQx", createdAt: "2026-11-27T23:00:00.000Z", unlisted: false });
const EVENT = JSON.stringify({ type: "progress", runId: "grpo-2026-11-27", step: 12, metrics: { reward: 0.5, accuracy: 0.25, kl: 0.01, entropy: 1.2, loss: 0.1 } });

interface Kind {
  readonly name: string;
  readonly write: (fence: Fence, redis: Redis, i: number) => Promise<unknown>;
}

const KINDS: readonly Kind[] = [
  { name: "room listing (hset)", write: (f, r, i) => f.write(r, "hset", "bench:roomcaches", `room-${i % 200}`, LISTING) },
  { name: "publication (publish)", write: (f, r) => f.write(r, "publish", "bench:progress", EVENT) },
  { name: "two commands (hincrby, expire)", write: (f, r, i) => f.run(r, ["hincrby", "bench:concurrency", `k${i % 50}`, "1"], ["expire", "bench:concurrency", "20"]) },
  { name: "Lua step (trainer lease renewed)", write: (f, r) => f.script(r, RENEW, ["bench:selfplay:pool:trainer"], ["bench-process", "6000"]) },
];

interface Row {
  kind: string;
  writesPerSecond: number;
  clientCpuUsPerWrite: number;
  redisCpuUsPerWrite: number;
}

/** `n` writes of `kind`, `inFlight` at a time: seconds, and the CPU seconds of this process and of Redis. */
async function run(kind: Kind, fence: Fence, redis: Redis, redisPid: number, n: number, inFlight: number): Promise<{ seconds: number; cpu: number; redisCpu: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const redis0 = cpuSeconds(redisPid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(inFlight, n) }, async () => {
      while (next < n) await kind.write(fence, redis, next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  return { seconds, cpu: (used.user + used.system) / 1e6, redisCpu: cpuSeconds(redisPid) - redis0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function startRedis(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], { stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  await new Promise<void>((ready, failed) => {
    child.stdout!.on("data", (d) => {
      text += String(d);
      if (text.includes("Ready to accept connections")) ready();
    });
    child.once("error", (err) => failed(new Error(`redis-server: ${err.message} (Debian: apt-get install -y redis-server)`)));
    child.once("exit", (code) => failed(new Error(`redis-server exited with ${code}: ${text.slice(-500)}`)));
  });
  child.stdout!.resume();
  return { child, url: `redis://127.0.0.1:${port}` };
}

async function main(): Promise<void> {
  const args = scriptArgs({ name: "fence-writes", usage: USAGE, schema: Args });
  const server = await startRedis();
  const redis = redisConnection(server.url, "bench");
  try {
    await checkReachable(redis, server.url);
    // Never armed by a heartbeat: its lease holds, and every write goes to Redis (as a live member's).
    const fence = new Fence(tombstoneKey("bench/1/1"));
    const rows: Row[] = [];
    for (const kind of KINDS) {
      // A warm-up run, not counted: the connection's first use of each script, V8's compilation.
      await run(kind, fence, redis, server.child.pid!, Math.min(2000, args.writes), args["in-flight"]);
      const runs = [];
      for (let i = 0; i < args.runs; i++) runs.push(await run(kind, fence, redis, server.child.pid!, args.writes, args["in-flight"]));
      rows.push({
        kind: kind.name,
        writesPerSecond: Math.round(median(runs.map((r) => args.writes / r.seconds))),
        clientCpuUsPerWrite: Math.round((median(runs.map((r) => r.cpu)) / args.writes) * 1e7) / 10,
        redisCpuUsPerWrite: Math.round((median(runs.map((r) => r.redisCpu)) / args.writes) * 1e7) / 10,
      });
    }
    console.log(`fenced writes: ${args.writes} a run, ${args["in-flight"]} in flight, median of ${args.runs} runs; loopback redis-server`);
    console.log("| write | writes/s | this process, CPU µs/write | redis-server, CPU µs/write |");
    console.log("|---|---:|---:|---:|");
    for (const r of rows) console.log(`| ${r.kind} | ${r.writesPerSecond} | ${r.clientCpuUsPerWrite} | ${r.redisCpuUsPerWrite} |`);
    if (args.json) writeFileSync(args.json, JSON.stringify({ writes: args.writes, inFlight: args["in-flight"], runs: args.runs, rows }, null, 2) + "\n");
  } finally {
    redis.disconnect();
    server.child.kill("SIGKILL");
    await once(server.child, "exit");
  }
}

await main();

/**
 * Debian's redis-server on a free loopback port, as a child of the test (no persistence), killed
 * after the file. `.ci/run` installs it; a machine without it fails here, saying so.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { freePort } from "../../server/group/free-port.js";

export const REDIS_BIN = "/usr/bin/redis-server";

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Kills it (SIGKILL: everything it held is gone) and starts a fresh one on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Freezes it (SIGSTOP: its connections stay up, nothing is answered), and wakes it (SIGCONT). */
  pause(): void;
  resume(): void;
}

const running = new Set<ChildProcess>();

afterAll(async () => {
  for (const child of running) {
    child.kill("SIGKILL");
    if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
  }
});

async function launch(port: number): Promise<ChildProcess> {
  if (!existsSync(REDIS_BIN)) throw new Error(`${REDIS_BIN} is missing: \`apt-get install -y redis-server\` (.ci/run does)`);
  const child = spawn(REDIS_BIN, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  await new Promise<void>((ready, failed) => {
    child.stdout!.on("data", (d) => {
      out += String(d);
      if (out.includes("Ready to accept connections")) ready();
    });
    child.once("exit", (code) => failed(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return child;
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child = await launch(port);
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      await kill();
      child = await launch(port);
    },
    stop: kill,
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
  };
}

/** This file's Redis (started before its tests, stopped after them) and a connection to it for the test's own reads and writes. */
export interface FileRedis {
  readonly redis: TestRedis;
  readonly conn: Redis;
}

/** A Redis for the test file that calls this at its top: its fields are set once the file's tests start. */
export function redisOfFile(): FileRedis {
  const of = {} as { redis: TestRedis; conn: Redis };
  beforeAll(async () => {
    of.redis = await startRedis();
    of.conn = new Redis(of.redis.url);
    // Some tests restart it: the connection waits for it to come back.
    of.conn.on("error", () => undefined);
  }, 30_000);
  afterAll(async () => {
    of.conn?.disconnect();
    await of.redis?.stop();
  });
  return of;
}

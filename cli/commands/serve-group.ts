/**
 * `serve --processes N`: N server processes on this machine, joined by one Redis (docs/scale.md),
 * started and stopped as one command. Process i listens on --port + i (each on a free port with
 * --port 0); all share the store, the admin token and the Redis. Without --redis the launcher
 * starts a redis-server of its own on a free loopback port (no persistence), says so, and stops
 * it last. A process that dies is started again (its rooms are recreated meanwhile by the
 * others); Ctrl-C stops every process as `serve` stops, then the Redis.
 *
 * Nothing the launcher starts outlives it. Its signal handlers and its exit hook are installed
 * before the first child exists, so a Ctrl-C at any moment of the start stops what has started;
 * the children are in process groups of their own (Ctrl-C reaches the launcher alone, which stops
 * them with one signal each: a second would cut a process's flush short), and each reads a pipe
 * from the launcher whose end (the launcher gone, even by kill -9) stops it (serve.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PACKAGE_ROOT } from "../../server/config.js";
import { freePort } from "../../server/group/free-port.js";
import { REDIS_START, shownUrl } from "../../server/group/redis-url.js";
import { UsageError } from "../args.js";

/** The environment variable that tells a `serve` process it was started by the launcher (it then stops when the launcher's pipe ends). */
export const LAUNCHED_ENV = "SOCIALWORLD_LAUNCHED";
/** How long a process may take to stop (its rooms' logs flushed) before it is killed. */
const STOP_GRACE_MS = 30_000;

export interface GroupLaunch {
  readonly processes: number;
  readonly port: number;
  readonly host: string;
  readonly redis?: string;
  readonly adminToken?: string;
  readonly demo: boolean;
  /** The options every process gets (store, data roots, keys, origins, device). */
  readonly common: readonly string[];
}

const out = (s: string) => process.stdout.write(s + "\n");

/** A program on PATH (or in /usr/bin, Debian's place), or undefined. */
function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const p = join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  return existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined;
}

/** Each line a process prints, prefixed with its number. */
function prefixLines(stream: NodeJS.ReadableStream, to: NodeJS.WriteStream, prefix: string, seen: (line: string) => void): void {
  let rest = "";
  stream.on("data", (d) => {
    const lines = (rest + String(d)).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      seen(line);
      to.write(`${prefix}${line}\n`);
    }
  });
}

const running = (c: ChildProcess | undefined): c is ChildProcess => c !== undefined && c.exitCode === null && c.signalCode === null;

/** Thrown inside the start when a signal asked the launcher to stop. */
class Stopped extends Error {}

export async function serveGroup(launch: GroupLaunch): Promise<number> {
  // First of all, before any child exists: the signals and the exit hook that stop the children.
  const children: (ChildProcess | undefined)[] = Array(launch.processes).fill(undefined);
  let redisChild: ChildProcess | undefined;
  const everyChild = () => [...children, redisChild].filter(running);
  let stopSignal: NodeJS.Signals | undefined;
  let wake!: () => void;
  const stopAsked = new Promise<void>((r) => (wake = r));
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) {
      // A second signal: no more waiting for the logs.
      for (const c of everyChild()) c.kill("SIGKILL");
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    }
    stopSignal = signal;
    out(`\n${signal}: stopping the ${launch.processes} processes...`);
    wake();
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, onSignal);
  // Any other way out (an exception, process.exit): whatever is still running is killed.
  const onExit = () => {
    for (const c of everyChild()) c.kill("SIGKILL");
  };
  process.on("exit", onExit);
  const checkStop = () => {
    if (stopSignal) throw new Stopped();
  };
  /** `p`, or Stopped as soon as a signal comes. */
  const unlessStopped = <T>(p: Promise<T>): Promise<T> => Promise.race([p, stopAsked.then(() => Promise.reject(new Stopped()))]);

  let redis = launch.redis;
  const adminToken = launch.adminToken ?? randomBytes(18).toString("base64url");
  const bin = join(PACKAGE_ROOT, "bin", "socialworld.js");
  const urls: (string | undefined)[] = Array(launch.processes).fill(undefined);

  const startRedis = async (): Promise<string> => {
    const redisBin = findProgram("redis-server");
    if (!redisBin) throw new UsageError(`--processes needs Redis: install Debian's redis-server (\`apt-get install -y redis-server\`), or give a running one with --redis URL (\`${REDIS_START}\`)`);
    const port = await freePort();
    checkStop();
    const redisArgs = [redisBin, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"];
    // The kernel ends it when the launcher ends, however (kill -9 included): util-linux's setpriv
    // sets its parent-death signal (prctl PR_SET_PDEATHSIG, which Node cannot call) and runs it.
    // Without setpriv (not Linux), a launcher killed with kill -9 leaves it running.
    const setpriv = findProgram("setpriv");
    const [cmd, ...args] = setpriv ? [setpriv, "--pdeathsig", "TERM", ...redisArgs] : redisArgs;
    const child = spawn(cmd!, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
    redisChild = child;
    let text = "";
    await unlessStopped(
      new Promise<void>((ready, failed) => {
        child.stdout!.on("data", (d) => {
          text += String(d);
          if (text.includes("Ready to accept connections")) ready();
        });
        child.once("error", failed);
        child.once("exit", (code) => failed(new Error(`redis-server exited with ${code}: ${text.slice(-500)}`)));
      }),
    );
    child.stdout!.resume();
    child.stderr!.resume();
    return `redis://127.0.0.1:${port}`;
  };

  const start = (i: number, demo: boolean): Promise<void> => {
    const port = launch.port === 0 ? 0 : launch.port + i;
    const args = [bin, "serve", "--port", String(port), "--host", launch.host, "--redis", redis!, ...launch.common, ...(demo ? [] : ["--no-demo"])];
    // The token travels in the environment, not on command lines that `ps` shows.
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"], detached: true, env: { ...process.env, SOCIALWORLD_ADMIN_TOKEN: adminToken, [LAUNCHED_ENV]: "1" } });
    children[i] = child;
    child.stdin!.on("error", () => undefined);
    const prefix = `[p${i + 1}] `;
    return new Promise<void>((listening, failed) => {
      prefixLines(child.stdout!, process.stdout, prefix, (line) => {
        const m = /server on (http:\/\/\S+)/.exec(line);
        if (m) {
          urls[i] = m[1]!;
          listening();
        }
      });
      prefixLines(child.stderr!, process.stderr, prefix, () => undefined);
      child.once("error", failed);
      child.once("exit", (code, signal) => {
        if (children[i] === child) children[i] = undefined;
        if (stopSignal) return;
        if (urls[i] === undefined) return failed(new Error(`process ${i + 1} exited (${signal ?? `status ${code}`}) before it listened`));
        process.stderr.write(`${prefix}exited (${signal ?? `status ${code}`}): the other processes recreate its rooms; starting it again in 1 s\n`);
        urls[i] = undefined;
        void sleep(1000).then(() => (stopSignal ? undefined : start(i, false).catch((err: Error) => process.stderr.write(`${prefix}${err.message}\n`))));
      });
    });
  };

  /** Processes that exited with a failure when asked to stop (as one stopped without Redis does: status 1). */
  let stoppedUncleanly = 0;
  const stopAll = async () => {
    const stop = async (c: ChildProcess | undefined, signal: NodeJS.Signals) => {
      if (!running(c)) return;
      c.kill(signal);
      const killer = setTimeout(() => c.kill("SIGKILL"), STOP_GRACE_MS);
      if (running(c)) await once(c, "exit");
      clearTimeout(killer);
      if (c !== redisChild && c.exitCode !== null && c.exitCode !== 0) stoppedUncleanly++;
    };
    await Promise.all(children.map((c) => stop(c, "SIGTERM")));
    // The Redis last: the processes need it to stop cleanly.
    await stop(redisChild, "SIGTERM");
  };

  let code = 0;
  try {
    if (!redis) {
      redis = await startRedis();
      out(`socialworld: no --redis given: started redis-server at ${redis} for this group (no persistence; stopped with it)`);
    }
    checkStop();
    // The first process starts the demo rooms (if any); the others start after it, so that the
    // demo's rooms spread over them as they join.
    await unlessStopped(start(0, launch.demo));
    await unlessStopped(Promise.all(Array.from({ length: launch.processes - 1 }, (_, k) => start(k + 1, false))));
    out(`socialworld: ${launch.processes} server processes on ${shownUrl(redis)}, one store`);
    out(`  open ${urls[0]} (any process serves every room: ${urls.join(" ")})`);
    out(launch.adminToken ? "  admin token: from the environment or --admin-token" : `  admin token (this run only; set SOCIALWORLD_ADMIN_TOKEN to keep one): ${adminToken}`);
    out("  Ctrl-C to stop");
    await stopAsked;
  } catch (err) {
    if (!(err instanceof Stopped)) {
      if (err instanceof UsageError) throw err;
      process.stderr.write(`socialworld serve: ${(err as Error).message}\n`);
      code = 1;
    }
  } finally {
    stopSignal ??= "SIGTERM";
    await stopAll();
    process.off("exit", onExit);
    for (const s of signals) process.off(s, onSignal);
  }
  if (code === 0 && stoppedUncleanly > 0) {
    // Each said why (its lines above); their rooms come back as a killed process's do.
    process.stderr.write(`socialworld serve: ${stoppedUncleanly} of the ${launch.processes} processes exited with a failure as they stopped\n`);
    code = 1;
  }
  if (code === 0) out("stopped; every log is flushed.");
  return code;
}

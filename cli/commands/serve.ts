/**
 * `socialworld serve [--port N] [--host H] [--store DIR] [--data-root DIR]... [--no-demo] [--threads N]`:
 * the live server (rooms, REST API, web client, progress stream) on one port. Ctrl-C stops every
 * room, logs its episode or run as interrupted, flushes the logs and exits.
 */
import { resolve } from "node:path";
import { z } from "zod";
import { ConfigError, configFromEnv, type ServerConfig } from "../../server/config.js";
import { RedisUrlSchema, shownUrl } from "../../server/group/redis-url.js";
import { openV1Warning } from "../../server/security/v1-exposure.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { DEVICE_HELP, deviceArgs, useDevice } from "../device.js";
import { LAUNCHED_ENV, serveGroup } from "./serve-group.js";

export const SERVE_HELP = `socialworld serve [options]

Starts the live server: simulation and benchmark rooms (Colyseus), the REST API under /api, the
web client, and the socket.io /progress stream, all on one port. Prints the URL to open.

Options:
  --port N           port (default 2567, or $SOCIALWORLD_PORT / $PORT; 0 picks a free one)
  --host H           interface (default 127.0.0.1, or $SOCIALWORLD_HOST; 0.0.0.0 for every one)
  --store DIR        the embedded store (default: $SOCIALWORLD_DATA, else data/ of the checkout)
  --data-root DIR    a folder benchmark rooms may read data files from (repeatable; also
                     $SOCIALWORLD_DATA_ROOTS; <store>/datasets always is one)
  --admin-token T    the token admin requests must carry (default: $SOCIALWORLD_ADMIN_TOKEN, else
                     a new one, printed)
  --api-key K        the key requests to /v1 (the policies' OpenAI-compatible API) must carry
                     (default: $SOCIALWORLD_OPENAI_API_KEY, else none asked; needed when --host is
                     not a loopback address)
  --open-v1          serve /v1 without a key on a non-loopback --host (anyone who reaches the port
                     may generate text; printed as a warning at start)
  --allow-origin URL a web origin besides the server's own whose pages may call the server from a
                     browser (CORS; repeatable; also $SOCIALWORLD_ALLOWED_ORIGINS, comma-separated)
  --no-demo          start without the demo rooms
  --threads N        CPU threads of the policies' native engine, rooms and self-play rounds
                     together (default: one per core)
  --redis URL        join the group of server processes sharing this Redis (redis://HOST:PORT;
                     also $SOCIALWORLD_REDIS): any of them answers for the rooms of all, and
                     /progress reaches the clients of all; give them one --store (docs/scale.md).
                     Stopped while Redis does not answer, it waits 5 s for it, then stops without
                     it (its rooms come back in the other processes) and exits with status 1
  --processes N      N server processes on this machine, one Redis (a redis-server of its own on
                     a free loopback port unless --redis is given): process i on --port + i
  --public-address HOST:PORT
                     with --redis: where clients reach this process's rooms (default: --host and
                     --port; also $SOCIALWORLD_PUBLIC_ADDRESS)
${DEVICE_HELP}

Environment: also $SOCIALWORLD_POLICIES (policies served at /v1 besides <store>/policies/: DIR or
ID=DIR, separated like PATH).
`;

const Args = z.object({
  _: z.tuple([]),
  port: intArg(0, 65535).optional(),
  host: z.string().min(1).optional(),
  store: z.string().min(1).optional(),
  "data-root": z.array(z.string().min(1)).default([]),
  "admin-token": z.string().min(16, "must have at least 16 characters").optional(),
  "api-key": z.string().min(1).optional(),
  "open-v1": z.boolean().default(false),
  "allow-origin": z.array(z.string().min(1)).default([]),
  "no-demo": z.boolean().default(false),
  redis: z.string().min(1).optional(),
  "public-address": z.string().min(1).optional(),
  processes: intArg(1, 64).default(1),
  threads: intArg(1, 1024).optional(),
  ...deviceArgs,
});

export async function serveCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  await useDevice(args);
  // Loaded only when asked, as simulate does: imported at the top, it made every command start Node's ES module loader (test/cli/bundle.test.ts).
  if (args.threads !== undefined) (await import("../../models/native.js")).loadNative().setThreads(args.threads);
  let env: ServerConfig;
  try {
    env = configFromEnv(args.store ? { ...process.env, SOCIALWORLD_DATA: args.store } : process.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const config = {
    ...env,
    ...(args.port !== undefined ? { port: args.port } : {}),
    ...(args.host ? { host: args.host } : {}),
    ...(args["admin-token"] ? { adminToken: args["admin-token"] } : {}),
    ...(args["api-key"] ? { openaiApiKey: args["api-key"] } : {}),
    dataRoots: [...env.dataRoots, ...args["data-root"].map((d) => resolve(d))],
    demo: !args["no-demo"],
    openV1: args["open-v1"],
    allowedOrigins: [...(env.allowedOrigins ?? []), ...args["allow-origin"]],
    ...(args.redis ? { redis: args.redis } : {}),
    ...(args["public-address"] ? { publicAddress: args["public-address"] } : {}),
  };
  if (config.publicAddress && !config.redis) throw new UsageError("--public-address is for a group of processes: give --redis URL too");
  if (args.processes > 1) {
    if (config.publicAddress) throw new UsageError("--public-address names one process: with --processes each process's is its own --host and port");
    const url = config.redis === undefined ? undefined : RedisUrlSchema.safeParse(config.redis);
    if (url && !url.success) throw new UsageError(`--redis: ${url.error.issues[0]!.message}`);
    if (config.port !== 0 && config.port + args.processes - 1 > 65535) throw new UsageError(`--port ${config.port} with --processes ${args.processes}: process i listens on --port + i, past 65535`);
    const common = [
      "--store", config.store,
      ...args["data-root"].flatMap((d) => ["--data-root", resolve(d)]),
      ...(args["api-key"] ? ["--api-key", args["api-key"]] : []),
      ...(args["open-v1"] ? ["--open-v1"] : []),
      ...args["allow-origin"].flatMap((o) => ["--allow-origin", o]),
      "--device", args.device,
      ...(args.threads !== undefined ? ["--threads", String(args.threads)] : []),
      ...(args.precision ? ["--precision", args.precision] : []),
    ];
    return serveGroup({ processes: args.processes, port: config.port, host: config.host, ...(config.redis ? { redis: config.redis } : {}), ...(config.adminToken ? { adminToken: config.adminToken } : {}), demo: config.demo, common });
  }
  // Started by `serve --processes`: the launcher's pipe ending (the launcher gone, even by kill -9)
  // stops this process as SIGTERM does (before its handler is installed, SIGTERM ends it at once).
  const launched = process.env[LAUNCHED_ENV] === "1";
  if (launched) {
    process.stdin.on("error", () => undefined);
    process.stdin.once("end", () => process.kill(process.pid, "SIGTERM"));
    process.stdin.resume();
  }
  // Loaded here, not at the top: the other commands need none of the server's packages.
  const { startServer } = await import("../../server/main.js");
  let server;
  try {
    server = await startServer(config);
  } catch (err) {
    if (err instanceof ConfigError || (err as Error).name === "ZodError") throw new UsageError(err instanceof ConfigError ? err.message : describeConfigError(err));
    if ((err as Error).name === "RedisUnreachable") {
      process.stderr.write(`socialworld serve: ${(err as Error).message}\n`);
      return 1;
    }
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    process.stderr.write(`socialworld serve: port ${config.port} on ${config.host} is in use (another server?); stop it, or choose a port with --port N (0 picks a free one)\n`);
    return 1;
  }
  const out = (s: string) => process.stdout.write(s + "\n");
  out(`socialworld server on ${server.url}`);
  out(`  open ${server.url} to watch the rooms · store: ${config.store}`);
  out(
    server.generatedToken
      ? `  admin token (this run only; set SOCIALWORLD_ADMIN_TOKEN to keep one): ${server.adminToken}`
      : "  admin token: from the environment or --admin-token",
  );
  if (server.publicAddress) out(`  in the group on ${shownUrl(config.redis!)} · this process's rooms at ${server.publicAddress}`);
  if (server.restoredRoomIds.length) out(`  ${server.restoredRoomIds.length} room${server.restoredRoomIds.length === 1 ? "" : "s"} of the last run restored`);
  if (server.demoRoomIds.length) out(`  ${server.demoRoomIds.length} demo rooms running`);
  if (server.v1 === "open") process.stderr.write(`${openV1Warning(config.host)}\n`);
  out("  Ctrl-C to stop");

  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      out(`\n${signal}: stopping the rooms and flushing their logs...`);
      done();
    };
    const onInt = () => stop("SIGINT");
    const onTerm = () => stop("SIGTERM");
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
  });
  await server.close();
  if (server.stoppedWithoutRedis !== undefined) {
    // Its connections to Redis are still open, waiting for it (server/group/process-group.ts): the process ends here.
    // Set first: a reader gone (EPIPE) ends the process with this status (bin/socialworld.js).
    process.exitCode = 1;
    process.stderr.write(`socialworld serve: stopped without Redis (${server.stoppedWithoutRedis}); every log is flushed; this process's rooms come back in the other processes of its group, as a killed process's do\n`);
    // process.exit drops what a pipe has not taken yet (its output to a launcher or a log
    // collector is a pipe, written asynchronously): the shutdown's lines are handed over first.
    await outputHandedOver(OUTPUT_FLUSH_MS);
    process.exit(1);
  }
  if (launched) process.stdin.destroy();
  out("stopped; every log is flushed.");
  return 0;
}

/** How long a process stopped without Redis waits for its output to be taken before it exits (a reader that stopped reading does not hold it). */
const OUTPUT_FLUSH_MS = 2000;

/** Resolves once everything written to stdout and stderr so far was handed to the OS, or after `ms`. */
async function outputHandedOver(ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((done) => s.write("", () => done())))),
    new Promise<void>((done) => (timer = setTimeout(done, ms))),
  ]);
  clearTimeout(timer);
}

/** A setting the server's schema refused (an --allow-origin that is not an origin), as one line naming it. */
function describeConfigError(err: unknown): string {
  const issue = (err as z.ZodError).issues?.[0];
  if (!issue) return String(err);
  const field = issue.path.map(String).join(".");
  const option = field.replace(/^allowedOrigins\.\d+$/, "--allow-origin").replace(/^redis$/, "--redis").replace(/^publicAddress$/, "--public-address");
  return `${field === "" ? "" : `${option}: `}${issue.message}`;
}

/**
 * The server's settings: command-line options over environment variables over defaults.
 *
 *   SOCIALWORLD_PORT (or PORT)     port (default 2567; 0 picks a free one)
 *   SOCIALWORLD_HOST               interface to listen on (default 127.0.0.1)
 *   SOCIALWORLD_DATA               the embedded store (default: data/ of the checkout)
 *   SOCIALWORLD_ADMIN_TOKEN        the admin token (default: a new random one, printed at start)
 *   SOCIALWORLD_DATA_ROOTS         folders benchmark rooms may read files from (path-list separated)
 *   SOCIALWORLD_POLICIES           policies served at /v1 besides <store>/policies/ (`DIR` or `ID=DIR`, path-list separated)
 *   SOCIALWORLD_OPENAI_API_KEY     the key /v1 asks for (default: none asked; required off loopback)
 *   SOCIALWORLD_ALLOWED_ORIGINS    web origins other than the server's own that may call it from a browser (CORS; comma-separated)
 *   SOCIALWORLD_REDIS              the Redis that joins this process to a group of servers (docs/scale.md; default: none, one process)
 *   SOCIALWORLD_PUBLIC_ADDRESS     in a group, HOST:PORT where clients reach this process's rooms (default: its own host and port)
 *
 * Every variable is checked; a bad one is an error naming it (ConfigError), never a stack trace.
 */
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defaultStoreRoot } from "../store/run-store.js";
import { RedisUrlSchema } from "./group/redis-url.js";
import { ClientLimitsSchema } from "./security/client-guard.js";

/** The checkout (or installed package) root: the nearest folder up with a package.json (from server/ or dist/server/). */
export const PACKAGE_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** `host:port` as a client dials it (a seat reservation's publicAddress): no scheme, no path. */
export const PublicAddressSchema = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "a public address is HOST:PORT (no scheme, no path)");

export const ServerConfigSchema = z.object({
  port: z.number().int().min(0).max(65535),
  host: z.string().min(1),
  store: z.string().min(1),
  /** At least 16 characters: it is the only thing between the network and the admin operations. */
  adminToken: z.string().min(16, "the admin token must have at least 16 characters").optional(),
  dataRoots: z.array(z.string().min(1)),
  /** Start the demo rooms. */
  demo: z.boolean(),
  /** The built web client (default: dist/client of the package). */
  clientDir: z.string().min(1),
  /** Policies served at /v1 besides <store>/policies/: `DIR` or `ID=DIR`. */
  policies: z.array(z.string().min(1)).default([]),
  /** The key /v1 requires (none: /v1 is open to this machine only, unless `openV1`). */
  openaiApiKey: z.string().min(1).optional(),
  /** Serve /v1 without a key on an address other than loopback (said loudly at start). */
  openV1: z.boolean().default(false),
  /** Web origins besides the server's own whose pages may call it (CORS): "https://lab.example:8080". */
  allowedOrigins: z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, "an origin is scheme://host[:port], without a path")).default([]),
  /** Per-client limits (security/client-guard.ts); the defaults suit people and tools on one machine or a lab network. */
  clientLimits: ClientLimitsSchema.optional(),
  /** /v1 chat requests one client address may have in progress. */
  v1PerClient: z.number().int().min(1).optional(),
  /** The Redis of a group of server processes (docs/scale.md): rooms, matchmaking and /progress shared through it. */
  redis: RedisUrlSchema.optional(),
  /** In a group: where clients reach this process's rooms (HOST:PORT), given in its seat reservations. */
  publicAddress: PublicAddressSchema.optional(),
});
export type ServerConfig = z.input<typeof ServerConfigSchema>;

/** A bad environment variable: the message names it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const portVar = () =>
  z.coerce
    .number({ error: "expected a port number" })
    .int("expected a whole port number")
    .min(0, "a port is 0 to 65535")
    .max(65535, "a port is 0 to 65535");

const EnvSchema = z.object({
  SOCIALWORLD_PORT: portVar().optional(),
  PORT: portVar().optional(),
  SOCIALWORLD_HOST: z.string().min(1).optional(),
  SOCIALWORLD_DATA: z.string().min(1).optional(),
  SOCIALWORLD_ADMIN_TOKEN: z.string().min(16, "the admin token must have at least 16 characters").optional(),
  SOCIALWORLD_DATA_ROOTS: z.string().optional(),
  SOCIALWORLD_POLICIES: z.string().optional(),
  SOCIALWORLD_OPENAI_API_KEY: z.string().min(1).optional(),
  SOCIALWORLD_ALLOWED_ORIGINS: z.string().optional(),
  SOCIALWORLD_REDIS: RedisUrlSchema.optional(),
  SOCIALWORLD_PUBLIC_ADDRESS: PublicAddressSchema.optional(),
});

/** The port in environment variable `name` (empty or unset: undefined); a bad one is a ConfigError naming it. */
export function portFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = env[name];
  if (value === undefined || value === "") return undefined;
  const r = portVar().safeParse(value);
  if (!r.success) throw new ConfigError(`$${name}: ${r.error.issues[0]!.message} (got "${value}")`);
  return r.data;
}

/** Empty variables count as unset (`FOO= cmd`). */
function present(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== "") out[key] = v;
  }
  return out;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const r = EnvSchema.safeParse(present(env));
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new ConfigError(`$${name}: ${issue.message} (got "${env[name]}")`);
  }
  const e = r.data;
  const store = resolve(e.SOCIALWORLD_DATA ?? defaultStoreRoot());
  const list = (v: string | undefined) => (v ?? "").split(delimiter).filter(Boolean);
  return {
    port: e.SOCIALWORLD_PORT ?? e.PORT ?? 2567,
    host: e.SOCIALWORLD_HOST ?? "127.0.0.1",
    store,
    ...(e.SOCIALWORLD_ADMIN_TOKEN ? { adminToken: e.SOCIALWORLD_ADMIN_TOKEN } : {}),
    dataRoots: [resolve(store, "datasets"), ...list(e.SOCIALWORLD_DATA_ROOTS).map((r) => resolve(r))],
    demo: true,
    clientDir: resolve(PACKAGE_ROOT, "dist", "client"),
    policies: list(e.SOCIALWORLD_POLICIES),
    ...(e.SOCIALWORLD_OPENAI_API_KEY ? { openaiApiKey: e.SOCIALWORLD_OPENAI_API_KEY } : {}),
    allowedOrigins: (e.SOCIALWORLD_ALLOWED_ORIGINS ?? "").split(",").map((o) => o.trim()).filter(Boolean),
    ...(e.SOCIALWORLD_REDIS ? { redis: e.SOCIALWORLD_REDIS } : {}),
    ...(e.SOCIALWORLD_PUBLIC_ADDRESS ? { publicAddress: e.SOCIALWORLD_PUBLIC_ADDRESS } : {}),
  };
}

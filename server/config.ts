/**
 * The server's settings: command-line options over environment variables over defaults.
 *
 *   SOCIALWORLD_PORT (or PORT)     port (default 2567; 0 picks a free one)
 *   SOCIALWORLD_HOST               interface to listen on (default 127.0.0.1)
 *   SOCIALWORLD_DATA               the embedded store (default data/)
 *   SOCIALWORLD_ADMIN_TOKEN        the admin token (default: a new random one, printed at start)
 *   SOCIALWORLD_DATA_ROOTS         folders benchmark rooms may read files from (path-list separated)
 */
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { defaultStoreRoot } from "../store/run-store.js";

/** The checkout (or installed package) root: the nearest folder up with a package.json (from server/ or dist/server/). */
export const PACKAGE_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

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
});
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const store = resolve(env.SOCIALWORLD_DATA ?? defaultStoreRoot());
  const roots = (env.SOCIALWORLD_DATA_ROOTS ?? "").split(delimiter).filter(Boolean);
  const port = env.SOCIALWORLD_PORT ?? env.PORT;
  return {
    port: port === undefined ? 2567 : Number(port),
    host: env.SOCIALWORLD_HOST ?? "127.0.0.1",
    store,
    ...(env.SOCIALWORLD_ADMIN_TOKEN ? { adminToken: env.SOCIALWORLD_ADMIN_TOKEN } : {}),
    dataRoots: [resolve(store, "datasets"), ...roots.map((r) => resolve(r))],
    demo: true,
    clientDir: resolve(PACKAGE_ROOT, "dist", "client"),
  };
}

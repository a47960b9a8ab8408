/**
 * A worker thread running one module of this project, so that work proportional to what a client
 * sends (tokenizing a prompt, generating a benchmark set) never runs on the server's event loop.
 *
 * The module is named by its path from the package root without an extension
 * ("server/openai/worker"). Compiled (dist/, and the command line's bundle, which has no worker
 * modules of its own) the worker runs dist/<path>.js. From the TypeScript sources (the tests run
 * them) it runs <path>.ts through oxc's TypeScript transform (rolldown's, a development
 * dependency), registered as a module hook inside the worker only: Node 20 does not read
 * TypeScript, and the server process itself is left as it is.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import { PACKAGE_ROOT } from "./config.js";

const FROM_SOURCES = import.meta.url.endsWith(".ts");

/**
 * Module hooks for TypeScript sources: `./x.js` imports of a module that exists only as `./x.ts`
 * resolve to it, and `.ts` files are transformed one at a time (the project's modules are isolated
 * modules: `isolatedModules` in tsconfig.json), class fields defined as the language defines them,
 * as tsc emits them for tsconfig's target. Loaded from a data: URL, so it imports nothing
 * but builtins and the transformer it is handed.
 */
const TS_HOOKS = `
let transformSync;
export async function initialize(data) { ({ transformSync } = await import(data.transformer)); }
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    if (specifier.endsWith(".js") && (specifier.startsWith(".") || specifier.startsWith("file:")) && context.parentURL?.endsWith(".ts")) {
      return next(specifier.slice(0, -3) + ".ts", context);
    }
    throw err;
  }
}
export async function load(url, context, next) {
  if (!url.endsWith(".ts")) return next(url, context);
  const { readFile } = await import("node:fs/promises");
  const source = await readFile(new URL(url), "utf8");
  const out = transformSync(url, source, { target: "es2022" });
  if (out.errors.length) throw new Error(url + ": " + out.errors.map((e) => e.message).join("; "));
  return { format: "module", source: out.code, shortCircuit: true };
}
`;

/** The worker's first script: registers the hooks when needed, then imports the module. */
const BOOT = `
const { workerData } = require("node:worker_threads");
const boot = workerData.__moduleWorker;
if (boot.transformer) require("node:module").register("data:text/javascript," + encodeURIComponent(boot.hooks), { data: { transformer: boot.transformer } });
import(boot.url).catch((err) => { setImmediate(() => { throw err; }); });
`;

/** Starts `module` (a path from the package root, without extension) in a worker thread. */
export function startModuleWorker(module: string, opts: Omit<WorkerOptions, "eval"> = {}): Worker {
  let url: string;
  let transformer: string | undefined;
  if (FROM_SOURCES) {
    url = pathToFileURL(join(PACKAGE_ROOT, `${module}.ts`)).href;
    transformer = pathToFileURL(createRequire(join(PACKAGE_ROOT, "package.json")).resolve("rolldown/experimental")).href;
  } else {
    const file = join(PACKAGE_ROOT, "dist", `${module}.js`);
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` in ${PACKAGE_ROOT}`);
    url = pathToFileURL(file).href;
  }
  const workerData = { ...((opts.workerData as object | undefined) ?? {}), __moduleWorker: { url, transformer, hooks: TS_HOOKS } };
  return new Worker(BOOT, { ...opts, eval: true, workerData });
}

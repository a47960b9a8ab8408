/**
 * `socialworld serve` as a second process on loopback, for the scripts that measure or attack a
 * server as its users and its attackers would reach it (load-server, attack-server): a free port,
 * the server started there once it says where it listens, and stopped as Ctrl-C stops it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout (from measurements/ or dist/measurements/). */
const root = ((): string => {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, "..", ...(here.includes(`${join("dist", "measurements")}`) ? [".."] : []));
})();

/** This checkout's `socialworld` command. */
export const serveBin = join(root, "bin", "socialworld.js");

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
    s.on("error", fail);
  });
}

/**
 * `socialworld serve --no-demo` on `port` with `store`, from this checkout or another (built) one;
 * resolves once it listens. Its stderr goes to `stderr`; `args` are more of serve's options.
 */
export async function startServe(
  port: number,
  store: string,
  adminToken: string,
  stderr: (text: string) => void,
  checkout = root,
  args: readonly string[] = [],
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(checkout, "bin", "socialworld.js"), "serve", "--port", String(port), "--no-demo", "--store", store, "--admin-token", adminToken, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stderr!.on("data", (d: Buffer) => stderr(d.toString()));
  await new Promise<void>((done, fail) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("socialworld server on")) done();
    });
    child.on("exit", (code) => fail(new Error(`the server exited (${code}) before listening:\n${out}`)));
  });
  return child;
}

/** Stops the server as Ctrl-C does (its logs flushed); kills it if it has not exited within 15 s. */
export function stopServe(child: ChildProcess): Promise<void> {
  child.kill("SIGINT");
  return new Promise<void>((done) => {
    const t = setTimeout(() => {
      child.kill("SIGKILL");
      done();
    }, 15_000);
    child.once("exit", () => {
      clearTimeout(t);
      done();
    });
  });
}

/**
 * The attack script (measurements/attack-server.ts) takes its arguments as the other scripts do:
 * `--help` prints the usage, a bad option is one line naming it with exit status 2. (The attacks
 * themselves are the server's tests, test/server/; the script replays them for a table.)
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const script = join(resolve(import.meta.dirname, "../.."), "dist", "measurements", "attack-server.js");
if (!existsSync(script)) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");
const run = (args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8", timeout: 30_000 });

describe("attack-server", () => {
  it("--help prints the usage; a bad option is exit status 2 naming it, before any server starts", () => {
    const help = run(["--help"]);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout.startsWith("node dist/measurements/attack-server.js")).toBe(true);
    const bad = run(["--flood", "3"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe("attack-server: --flood: Too small: expected number to be >=10");
    expect(bad.stderr).not.toContain("starting the server");
  });
});

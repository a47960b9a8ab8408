/**
 * bin/socialworld.js run as a program (as `npx socialworld` and npm's bin links run it): its first
 * two lines are a shell script that starts Node on the same file with the flags in
 * SOCIALWORLD_NODE_FLAGS (default --max-semi-space-size=4). What Node was started with is read
 * from inside it, through a module that NODE_OPTIONS loads.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "bin", "socialworld.js");
const probeDir = mkdtempSync(join(tmpdir(), "sw-launcher-"));
const probe = join(probeDir, "probe.mjs");
writeFileSync(probe, 'process.on("exit", () => process.stderr.write("\\nEXECARGV " + JSON.stringify(process.execArgv) + "\\n"));\n');

/** Runs the command as a program; returns its exit status, output and Node's flags (probe excluded). */
function launch(args: string[], env: Record<string, string | undefined> = {}) {
  const r = spawnSync(bin, args, { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: `--import=${probe}`, ...env } });
  const m = /EXECARGV (\[.*\])/.exec(r.stderr);
  const flags = m ? (JSON.parse(m[1]!) as string[]) : undefined;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, flags };
}

describe("the command's launcher line", () => {
  it("starts Node on the command with --max-semi-space-size=4", () => {
    const r = launch(["--help"], { SOCIALWORLD_NODE_FLAGS: undefined });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("usage: socialworld");
    expect(r.flags).toEqual(["--max-semi-space-size=4"]);
  });

  it("takes Node's flags from SOCIALWORLD_NODE_FLAGS when it is set, none when it is empty", () => {
    expect(launch(["--help"], { SOCIALWORLD_NODE_FLAGS: "--max-semi-space-size=8 --stack-trace-limit=20" }).flags).toEqual([
      "--max-semi-space-size=8",
      "--stack-trace-limit=20",
    ]);
    expect(launch(["--help"], { SOCIALWORLD_NODE_FLAGS: "" }).flags).toEqual([]);
  });

  it("passes every argument through as it was given (spaces, quotes, globs) and returns the command's exit status", () => {
    const missing = join(probeDir, "a folder", "it's *.txt");
    const r = launch(["bench", "tomi", "--data", missing, "--agent", "simulation", "--store", join(probeDir, "store")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(missing);
  });

  it("is still a JavaScript module to Node: `node bin/socialworld.js` runs the command without the launcher's flags", () => {
    const r = spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: `--import=${probe}` } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("usage: socialworld");
    expect(/EXECARGV (\[.*\])/.exec(r.stderr)?.[1]).toBe("[]");
  });
});

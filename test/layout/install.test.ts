/**
 * A quiet, clean install: npm reads no configuration it does not know (it warned about the
 * onnxruntime-node-install key in .npmrc on every npm and npx call), the committed lockfile is the
 * one `npm install` writes for package.json (a stale one is rewritten, leaving a fresh clone
 * dirty), and example output is not left for git to show.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));

interface Locked {
  version?: string;
  optional?: boolean;
  optionalDependencies?: Record<string, string>;
  os?: string[];
}

describe("the install", () => {
  it("gives npm no configuration it does not know, and skips onnxruntime-node's download the supported way", () => {
    const r = spawnSync("npm", ["config", "get", "fund"], { cwd: root, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Unknown (env|project|user|global|builtin) config/);
    if (existsSync(join(root, ".npmrc"))) expect(readFileSync(join(root, ".npmrc"), "utf8")).not.toContain("onnxruntime-node-install");
    // npm 11.16 and later read allowScripts; false skips the package's install script.
    expect(pkg.allowScripts["onnxruntime-node"]).toBe(false);
  });

  it("commits the lockfile npm install writes: the root entry as package.json says, every optional platform package locked", () => {
    const top = lock.packages[""];
    for (const field of ["name", "version", "license", "engines", "bin", "dependencies", "devDependencies"]) expect(top[field], field).toEqual(pkg[field]);
    const packages = lock.packages as Record<string, Locked>;
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(packages)) {
      for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
        // Resolved from the package's own node_modules or, hoisted, from the top.
        const found = [`${path}/node_modules/${name}`, `node_modules/${name}`].map((p) => packages[p]).find((e) => e !== undefined);
        if (!found) missing.push(`${name}@${version} (wanted by ${path || "the project"})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("states the Node versions it runs on: what the command line needs, and the README says what the dependencies declare", () => {
    expect(pkg.engines.node).toBe(">=20.19");
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme).toContain("tested on 20.20");
    expect(readme).toMatch(/`@colyseus\/\*` packages\s+declare Node 22 or later/);
  });

  it("ignores the example output folder gen/ and the data folder", () => {
    const ignore = readFileSync(join(root, ".gitignore"), "utf8").split("\n");
    expect(ignore).toContain("/gen/");
    expect(ignore).toContain("/data/");
  });
});

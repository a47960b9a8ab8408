/**
 * The command a new user types first answers at once: the examples of the README and of docs/ run
 * `./bin/socialworld.js` (executable, from any folder), never `npx socialworld`, which first copies
 * the checkout into npx's cache (14-21 s with no output) and adds about 0.5 s to every command.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
/** The README and every page under docs/, as one text. */
const docs = [join(root, "README.md"), ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" }).filter((p) => p.endsWith(".md")).map((p) => join(root, "docs", p))]
  .map((f) => readFileSync(f, "utf8"))
  .join("\n");

describe("the first command", () => {
  it("is ./bin/socialworld.js in every example of the README and docs/, and npx socialworld only where docs/install.md says why not", () => {
    const npx = docs.split("\n").filter((line) => line.includes("npx socialworld"));
    expect(npx).toHaveLength(1);
    expect(npx[0]).toMatch(/^`npx socialworld`: npx first copies/);
    const blocks = [...docs.matchAll(/```sh\n([^]*?)```/g)].map((m) => m[1]!);
    const lines = blocks.flatMap((b) => b.split("\n")).map((line) => line.replace(/(^|\s)#.*$/, ""));
    expect(lines.filter((line) => line.includes("./bin/socialworld.js ")).length).toBeGreaterThan(20);
    // A command run any other way: `socialworld bench`, `npx socialworld`, `node dist/cli/main.js`.
    const other = lines.filter((line) => /(?<!\.\/bin\/)\bsocialworld(?!\.js)\s+[a-z]|dist\/cli\/main\.js/.test(line));
    expect(other).toEqual([]);
  });

  it("is executable and answers from any folder", () => {
    expect(statSync(join(root, "bin", "socialworld.js")).mode & 0o111).toBe(0o111);
    const elsewhere = mkdtempSync(join(tmpdir(), "sw-first-"));
    const r = spawnSync(join(root, "bin", "socialworld.js"), ["--help"], { cwd: elsewhere, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("usage: socialworld <command>");
  });
});

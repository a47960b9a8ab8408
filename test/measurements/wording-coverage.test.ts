/**
 * wording-coverage (measurements/wording-coverage.ts), run as users run it: how much of an
 * evaluation file's wording a training file holds, by sentence kind.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { generateTomi } from "../../worlds/tomi/generator.js";

const root = resolve(import.meta.dirname, "../..");
const script = join(root, "dist", "measurements", "wording-coverage.js");
if (!existsSync(script)) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");
const run = (args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8", timeout: 30_000 });

/** The table's row for a sentence kind: [distinct sentences, wording share, words share]. */
function row(stdout: string, kind: string): [number, string, string] {
  const m = new RegExp(`^\\| ${kind} \\| (\\d+) \\| ([^|]+) \\| ([^|]+) \\|$`, "m").exec(stdout);
  if (!m) throw new Error(`no row ${kind} in:\n${stdout}`);
  return [Number(m[1]), m[2]!.trim(), m[3]!.trim()];
}

describe("wording-coverage", () => {
  it("a file holds all of its own wording; ToMi's wording holds part of a reworded file's, and the reworded file all of ToMi's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wording-coverage-"));
    const plain = join(dir, "plain.txt");
    const reworded = join(dir, "reworded.txt");
    writeFileSync(plain, (await generateTomi(600, 3)).txt);
    writeFileSync(reworded, (await generateTomi(600, 4, undefined, { reworded: 0.7 })).txt);

    const self = run(["--train", plain, "--eval", plain]);
    expect(self.status, self.stderr).toBe(0);
    for (const kind of ["enter", "exit", "move", "located", "remark"]) expect(row(self.stdout, kind).slice(1)).toEqual(["100.0%", "100.0%"]);

    const other = run(["--train", plain, "--eval", reworded]);
    expect(other.status, other.stderr).toBe(0);
    for (const kind of ["enter", "exit", "move", "located", "remark"]) {
      const [n, wording] = row(other.stdout, kind);
      expect(n).toBeGreaterThan(0);
      expect(Number.parseFloat(wording), kind).toBeLessThan(60);
    }
    expect(other.stdout).toMatch(/every sentence of the story in a wording the training file has: \d+ \(\d/);

    const back = run(["--train", reworded, "--eval", plain]);
    expect(back.status, back.stderr).toBe(0);
    for (const kind of ["enter", "exit", "move", "located"]) expect(row(back.stdout, kind)[1], kind).toBe("100.0%");
  });

  it("a missing file or a line not in ToMi's format is one line naming it, exit status 2", () => {
    const r = run(["--train", "/nonexistent/train.txt", "--eval", "/nonexistent/val.txt"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("wording-coverage: /nonexistent/train.txt not found\n");
    const dir = mkdtempSync(join(tmpdir(), "wording-coverage-bad-"));
    const bad = join(dir, "bad.txt");
    writeFileSync(bad, "1 Ella entered the den.\nElla left.\n");
    const b = run(["--train", bad, "--eval", bad]);
    expect(b.status).toBe(2);
    expect(b.stderr).toBe(`wording-coverage: ${bad}:2: not a numbered line\n`);
    // A folder, and a file with no question (nothing to measure), are named too.
    const folder = run(["--train", dir, "--eval", bad]);
    expect({ status: folder.status, stderr: folder.stderr }).toEqual({ status: 2, stderr: `wording-coverage: ${dir}: not a regular file (a folder): give a file\n` });
    const empty = join(dir, "empty.txt");
    writeFileSync(empty, "1 Ella entered the den.\n");
    const none = run(["--train", empty, "--eval", empty]);
    expect({ status: none.status, stderr: none.stderr }).toEqual({ status: 2, stderr: `wording-coverage: ${empty}: no questions (ToMi's format: a story's numbered lines, then a question line "N question<TAB>answer<TAB>1")\n` });
  });
});

/**
 * written-lengths (measurements/written-lengths.ts), run as users run it: the token lengths of the
 * examples a policy that writes its own context is taught, and one line with exit status 2 on a
 * file it cannot read.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const script = join(root, "dist", "measurements", "written-lengths.js");
if (!existsSync(script)) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");
const run = (args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8", timeout: 60_000 });

describe("written-lengths", () => {
  it("measures generated Hi-ToM questions against the preset's window", () => {
    const r = run(["--world", "hitom", "--generate", "10", "--seed", "2"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^10 hitom questions from the generator \(10, seed 2\), context=self, word tokenizer of \d+ tokens \(preset 1m, window 1024\):/);
    expect(r.stdout).toMatch(/over the window: 0\n/);
  });

  it("a missing, empty or foreign file is one line naming it, exit status 2", () => {
    const dir = mkdtempSync(join(tmpdir(), "written-lengths-"));
    const empty = join(dir, "empty.txt");
    writeFileSync(empty, "");
    const hitom = join(dir, "hitom.json");
    writeFileSync(hitom, '{"data": []}\n');
    const cases: [string[], string][] = [
      [["--world", "hitom", "--data", join(dir, "none.json")], `written-lengths: ${join(dir, "none.json")}: file not found\n`],
      [["--world", "tomi", "--data", empty], `written-lengths: ${empty}: no questions found\n`],
      [["--world", "hitom", "--data", hitom], `written-lengths: ${hitom} (data): no entries\n`],
      [["--world", "tomi", "--data", hitom], `written-lengths: ${hitom}:1: expected "<number> <sentence>", got "{"data": []}"\n`],
    ];
    for (const [args, stderr] of cases) {
      const r = run(args);
      expect({ status: r.status, stderr: r.stderr }, args.join(" ")).toEqual({ status: 2, stderr });
    }
  });
});

/**
 * measurements/gpu/learn.sh's arguments, refused before it touches anything: a deadline that
 * leaves a run no time (`timeout 0` would not stop it at all), a run name that is no plain folder
 * name (the script removes the folder first), the same name twice (two runs in one folder).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const learn = (...args: string[]) =>
  spawnSync("bash", ["measurements/gpu/learn.sh", "--self-test", ...args], { encoding: "utf8", env: { ...process.env, OUT: mkdtempSync(join(tmpdir(), "gpu-learn-")) } });

describe("measurements/gpu/learn.sh's arguments", () => {
  it("refuses a deadline that is not whole seconds above the 45 s packing takes, or is missing", () => {
    for (const deadline of ["45", "30", "9m"]) {
      const r = learn("--deadline", deadline, "a=--preset tiny");
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(`learn.sh: --deadline: whole seconds above 45 (each run stops 45 s before it), not '${deadline}'`);
    }
    const missing = learn("a=--preset tiny", "--deadline");
    expect(missing.status, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("learn.sh: --deadline: whole seconds above 45 (each run stops 45 s before it), not ''");
  });

  it("refuses a run name that is not a plain folder name, and a name given twice", () => {
    const path = learn("a/../../x=--preset tiny");
    expect(path.status, path.stderr).toBe(2);
    expect(path.stderr).toContain("learn.sh: run name 'a/../../x': letters, digits, _ and - only");
    const twice = learn("a=--preset tiny", "b=--preset tiny", "a=--preset 1m");
    expect(twice.status, twice.stderr).toBe(2);
    expect(twice.stderr).toContain("learn.sh: run name 'a' given twice");
  });

  it("run.sh refuses a deadline that is missing or not whole seconds, and a missing stage list, before it starts", () => {
    const run = (...args: string[]) => spawnSync("bash", ["measurements/gpu/run.sh", "--self-test", ...args], { encoding: "utf8", env: { ...process.env, OUT: mkdtempSync(join(tmpdir(), "gpu-run-")) } });
    for (const [args, value] of [[["--deadline"], ""], [["--deadline", "5m"], "5m"], [["--deadline", "10"], "10"]] as const) {
      const r = run(...args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(`run.sh: --deadline: whole seconds, at least 20 (a stage needs 20 s left to start), not '${value}'`);
    }
    const stages = run("--stages");
    expect(stages.status, stages.stderr).toBe(2);
    expect(stages.stderr).toContain("run.sh: --stages: a list of stages");
  });
});

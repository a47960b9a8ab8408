/**
 * The command's compiler policy (cli/optimizer-policy.ts): V8's optimizing compiler stays off until
 * the process has used the threshold's CPU, then comes on. Switching it while running is something
 * V8 allows but does not promise, so both halves are checked in a process of their own, with V8's
 * own report of whether a hot function has been optimized (%GetOptimizationStatus).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { deferOptimizingCompiler, OPTIMIZE_AFTER_ENV, optimizeAfterMs, optimizerDeferred } from "../../cli/optimizer-policy.js";

const root = resolve(import.meta.dirname, "../..");
const policy = join(root, "dist", "cli", "optimizer-policy.js");
if (!existsSync(policy)) throw new Error("dist/ is not built: run `npm run build` (npm install does it) before the tests");

// V8's OptimizationStatus bit for "optimized" (TurboFan code installed), stable since V8 8.
const OPTIMIZED = 16;

/**
 * Runs `body` as an ES module in a Node of its own (with %-natives), after a prelude that imports
 * the policy and defines a hot function `hot` and `optimized()` (whether V8 has optimized it);
 * returns what the body printed last, as JSON.
 */
function runUnderPolicy<T>(body: string, nodeFlags: string[] = [], env: NodeJS.ProcessEnv = process.env): T {
  const dir = mkdtempSync(join(tmpdir(), "sw-opt-"));
  const script = join(dir, "probe.mjs");
  writeFileSync(
    script,
    `import { deferOptimizingCompiler, optimizerCheckpoint, optimizerDeferred } from ${JSON.stringify(pathToFileURL(policy).href)};
function hot(a) { let s = 0; for (let i = 0; i < 40; i++) s += (a * i) % 7; return s; }
const optimized = () => (%GetOptimizationStatus(hot) & ${OPTIMIZED}) !== 0;
${body}`,
  );
  const r = spawnSync(process.execPath, ["--allow-natives-syntax", ...nodeFlags, script], { encoding: "utf8", env });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as T;
}

/** Runs a hot function under the policy; reports whether it was optimized before and after the switch. */
function probe(
  afterMs: number,
  nodeFlags: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): { before: boolean; after: boolean; deferred: boolean; cpuAtSwitchMs: number } {
  return runUnderPolicy(
    `deferOptimizingCompiler(${afterMs});
const deferred = optimizerDeferred();
let before = false;
let n = 0;
const started = Date.now();
while (optimizerDeferred() && Date.now() - started < 20000) {
  hot(n++);
  optimizerCheckpoint();
  if ((n & 255) === 0 && optimized()) before = true;
}
const u = process.cpuUsage();
const cpuAtSwitchMs = (u.user + u.system) / 1000;
let after = false;
const switched = Date.now();
for (let k = 0; !after && Date.now() - switched < 1500; k++) {
  hot(k);
  if ((k & 1023) === 0) after = optimized();
}
console.log(JSON.stringify({ before, after, deferred, cpuAtSwitchMs }));
`,
    nodeFlags,
    env,
  );
}

/**
 * Runs work that reports its progress under the policy (threshold 300 ms): the process first
 * idles in hot code to 250 ms of CPU, then does `units` units of 2 ms of CPU each, reporting
 * `optimizerCheckpoint(done, units)` after each; then, after `quietMs` without reports, checks
 * once more. Says where the switch came, if it came.
 */
function probeWork(units: number, quietMs: number): { switchedAtUnit: number | null; cpuAtSwitchMs: number; optimizedDuringWork: boolean; switchedAfterQuiet: boolean } {
  return runUnderPolicy(`import { setTimeout as sleep } from "node:timers/promises";
deferOptimizingCompiler(300);
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const spinTo = (ms) => { let k = 0; while (cpuMs() < ms) for (let j = 0; j < 256; j++) hot(k++); };
spinTo(250);
if (!optimizerDeferred()) throw new Error("switched before the threshold");
let switchedAtUnit = null, cpuAtSwitchMs = 0, optimizedDuringWork = false;
for (let done = 1; done <= ${units}; done++) {
  spinTo(cpuMs() + 2);
  optimizerCheckpoint(done, ${units});
  if (switchedAtUnit === null && !optimizerDeferred()) { switchedAtUnit = done; cpuAtSwitchMs = cpuMs(); }
  if (optimizerDeferred() && optimized()) optimizedDuringWork = true;
}
let switchedAfterQuiet = false;
if (switchedAtUnit === null) {
  await sleep(${quietMs});
  optimizerCheckpoint();
  switchedAfterQuiet = !optimizerDeferred();
}
console.log(JSON.stringify({ switchedAtUnit, cpuAtSwitchMs, optimizedDuringWork, switchedAfterQuiet }));
`);
}

describe("the command's compiler policy", () => {
  it("keeps the optimizing compiler off until the threshold's CPU is used, then optimizes hot code", () => {
    const r = probe(300);
    expect(r.deferred).toBe(true);
    expect(r.before).toBe(false);
    expect(r.cpuAtSwitchMs).toBeGreaterThanOrEqual(300);
    expect(r.after).toBe(true);
  });

  it("holds the switch back while reported work will be done within another threshold's CPU", () => {
    // 100 units of 2 ms from 250 ms: at the threshold a quarter is done and 150 ms is left, less
    // than the 300 ms threshold, so the work ends unoptimized; two seconds without reports later,
    // the threshold alone decides.
    const near = probeWork(100, 2100);
    expect(near.switchedAtUnit).toBeNull();
    expect(near.optimizedDuringWork).toBe(false);
    expect(near.switchedAfterQuiet).toBe(true);
    // Reports stopped for less than that still hold it back (the work may be between items).
    expect(probeWork(100, 200).switchedAfterQuiet).toBe(false);
  });

  it("switches at the threshold when the reported work has more than another threshold's CPU left", () => {
    // 1,000 units of 2 ms: at the threshold about 1.9 s of work is left.
    const long = probeWork(1000, 0);
    expect(long.switchedAtUnit).not.toBeNull();
    expect(long.cpuAtSwitchMs).toBeGreaterThanOrEqual(300);
    // At the first checkpoint past the threshold (they come every 50 ms of wall time).
    expect(long.cpuAtSwitchMs).toBeLessThan(300 + 150);
  });

  it("with a threshold of 0 leaves V8 as it is: hot code is optimized at once", () => {
    const r = probe(0);
    expect(r.deferred).toBe(false);
    expect(r.after).toBe(true);
  });

  it("leaves V8 alone when Node was started with a flag about its compilers", () => {
    const r = probe(300, ["--max-opt=1"]);
    expect(r.deferred).toBe(false);
    expect(r.after).toBe(false);
    // NODE_OPTIONS may carry one too (Node accepts --jitless there).
    const viaEnv = probe(300, [], { ...process.env, NODE_OPTIONS: "--jitless" });
    expect(viaEnv.deferred).toBe(false);
    expect(viaEnv.after).toBe(false);
    // In this process too: the test runner's own flags are not the policy's to change.
    deferOptimizingCompiler(300, ["--no-turbofan"]);
    expect(optimizerDeferred()).toBe(false);
  });

  it(`reads ${OPTIMIZE_AFTER_ENV} (default 1000 ms) and refuses what is not a number of milliseconds`, () => {
    expect(optimizeAfterMs({})).toBe(1000);
    expect(optimizeAfterMs({ [OPTIMIZE_AFTER_ENV]: "0" })).toBe(0);
    expect(optimizeAfterMs({ [OPTIMIZE_AFTER_ENV]: "2500" })).toBe(2500);
    expect(() => optimizeAfterMs({ [OPTIMIZE_AFTER_ENV]: "soon" })).toThrow(/SOCIALWORLD_OPTIMIZE_AFTER_MS="soon": expected a number of milliseconds/);
    expect(() => optimizeAfterMs({ [OPTIMIZE_AFTER_ENV]: "-1" })).toThrow(/expected a number/);
  });

  it("the command says so, and does nothing else, when the variable is wrong", () => {
    const bin = join(root, "bin", "socialworld.js");
    const r = spawnSync(process.execPath, [bin, "bench", "--help"], { encoding: "utf8", env: { ...process.env, [OPTIMIZE_AFTER_ENV]: "soon" } });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`socialworld: ${OPTIMIZE_AFTER_ENV}="soon": expected a number of milliseconds (0 or more)\n`);
  });
});

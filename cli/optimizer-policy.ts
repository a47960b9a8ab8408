/**
 * When the `socialworld` command turns on V8's optimizing compiler (TurboFan).
 *
 * Most commands are short: a benchmark file of a few thousand questions runs in about a second.
 * In a run that short TurboFan costs more CPU than it saves. It compiles the hot functions on a
 * background thread (on one core, its time is the command's time), and the work left after the
 * compiles is too little to win that back. Measured on the ToMi val file (5,994 questions, simulation
 * agent, pinned to one core, `node dist/benchmarks/speed-tomi.js --against`): the whole process
 * took 16-21% less CPU without TurboFan. On a file four times as long, TurboFan from the start
 * took 2.05 s and none at all 2.40 s (this policy: 2.16 s).
 *
 * So the command starts with V8's baseline tiers only (the interpreter and Sparkplug), and turns
 * TurboFan on once the process has used `SOCIALWORLD_OPTIMIZE_AFTER_MS` of CPU (default 1000; 0
 * keeps V8's default, TurboFan from the start). A long run pays a second of slower code, then runs
 * optimized. Switching the flag while running is something V8 allows but does not promise, so a
 * test holds it to both halves: nothing is optimized before the threshold, and hot code is after.
 *
 * Except near the end of the work: when the work in progress reports how far it is (the progress
 * bar does) and, at its rate so far, will be done within another threshold's CPU, the switch waits.
 * Compiles started then would cost more than the little work left could win back: with the
 * threshold lowered to 600 ms, which puts the switch at four fifths of the ToMi val run as on a
 * host a third slower than ours, the run took 33% more CPU switching than waiting (1,124 ms against
 * 848 ms). Once nothing has reported for two seconds (a server between runs), the threshold alone
 * decides.
 *
 * The switch is checked from two places, because a long run may never yield to timers: an unref'd
 * interval (servers and other event-loop work), and `optimizerCheckpoint()`, which long loops call
 * (the progress bar does, at every update, with how far it is).
 */
import { setFlagsFromString } from "node:v8";

export const OPTIMIZE_AFTER_ENV = "SOCIALWORLD_OPTIMIZE_AFTER_MS";
const DEFAULT_AFTER_MS = 1000;
/** How often the checkpoint reads the CPU clock (a system call), in ms of wall time. */
const CHECK_EVERY_MS = 50;
/** Progress older than this (wall ms) no longer holds the switch back: that work has stopped reporting. */
const PROGRESS_FRESH_MS = 2000;

let thresholdUs = 0;
let deferred = false;
let lastCheck = 0;
let timer: NodeJS.Timeout | undefined;

// The work in progress, as checkpoints last reported it: its size, where this process took it up
// (a resumed run starts part done) and at what CPU, how far it is, and when that was said.
// Plain numbers, not an object per report: a progress bar reports thousands of times a second.
let workTotal = 0;
let workFirstDone = 0;
let workFirstCpuUs = 0;
let workDone = 0;
let workReportedAt = -Infinity;

/** The threshold from the environment, in ms (0: TurboFan from the start). */
export function optimizeAfterMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[OPTIMIZE_AFTER_ENV];
  if (raw === undefined || raw.trim() === "") return DEFAULT_AFTER_MS;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new Error(`${OPTIMIZE_AFTER_ENV}=${JSON.stringify(raw)}: expected a number of milliseconds (0 or more)`);
  }
  return ms;
}

/** V8 flags on Node's command line that say how to compile: the person running it decided. */
const COMPILER_FLAG = /^--(no-)?(turbofan|opt|jitless|max-opt|always-turbofan|always-opt|sparkplug|maglev)(=|$)/;

/**
 * Starts the command without TurboFan, to turn it on after the threshold. Call before the work
 * starts. Leaves V8 as it is when Node was started with a flag about its compilers (on its
 * command line or in NODE_OPTIONS).
 */
export function deferOptimizingCompiler(afterMs = optimizeAfterMs(), execArgv: readonly string[] = nodeFlags()): void {
  if (afterMs <= 0 || deferred || execArgv.some((a) => COMPILER_FLAG.test(a.replace(/_/g, "-")))) return;
  thresholdUs = afterMs * 1000;
  deferred = true;
  lastCheck = performance.now();
  setFlagsFromString("--no-turbofan");
  timer = setInterval(check, 100);
  timer.unref();
}

/** Node's flags: its command line's and NODE_OPTIONS' (which may hold `--jitless`, say). */
function nodeFlags(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/).filter((a) => a.startsWith("--"))];
}

/**
 * Long loops call this now and then; it turns TurboFan on once the process has used the threshold's
 * CPU. A loop that knows how far it is says so (`done` of `total` units): then the switch waits
 * while that work will be done within another threshold's CPU.
 */
export function optimizerCheckpoint(done?: number, total?: number): void {
  if (!deferred) return;
  const now = performance.now();
  if (done !== undefined && total !== undefined) noteProgress(done, total, now);
  // By the clock, not by calls: a progress bar may tick 10,000 times a second or once a minute.
  if (now - lastCheck < CHECK_EVERY_MS) return;
  lastCheck = now;
  check();
}

function noteProgress(done: number, total: number, now: number): void {
  // Another total, or a count that went back: other work (the next bar of a command).
  if (total !== workTotal || done < workDone || now - workReportedAt > PROGRESS_FRESH_MS) {
    workTotal = total;
    workFirstDone = done;
    workFirstCpuUs = cpuUs();
  }
  workDone = done;
  workReportedAt = now;
}

/** True while the optimizing compiler is held back. */
export function optimizerDeferred(): boolean {
  return deferred;
}

function check(): void {
  if (!deferred) return;
  const used = cpuUs();
  if (used >= thresholdUs && !finishingSoon(used)) enableNow();
}

/** True while reported work will be done within another threshold's CPU, at its rate so far. */
function finishingSoon(usedUs: number): boolean {
  if (performance.now() - workReportedAt > PROGRESS_FRESH_MS) return false;
  if (workDone >= workTotal) return true;
  const doneHere = workDone - workFirstDone;
  if (doneHere <= 0) return false;
  const leftUs = ((usedUs - workFirstCpuUs) / doneHere) * (workTotal - workDone);
  return leftUs < thresholdUs;
}

function cpuUs(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}

function enableNow(): void {
  deferred = false;
  if (timer) clearInterval(timer);
  timer = undefined;
  setFlagsFromString("--turbofan");
}

/**
 * Runs the `socialworld` command line in a child process, as a user types it, for the scripts
 * that measure whole runs (learn-demo, lora-sft; social-demo its timing line): its progress goes to this terminal, its wall time
 * to `timings`, and its standard error is also kept (what a stage printed about itself).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../worlds/question/prompts.js";

export interface StageTiming {
  readonly stage: string;
  readonly seconds: number;
}

/** `3m07s`: seconds as minutes and seconds (rounded first, so never `8m60s`). */
export function clock(seconds: number): string {
  const t = Math.round(seconds);
  return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, "0")}s`;
}

/** The results table's closing line: the whole run's wall time, then each stage's. */
export function wallTimeLine(totalSeconds: number, timings: readonly StageTiming[]): string {
  return `Wall time ${clock(totalSeconds)}: ${timings.map((t) => `${t.stage} ${clock(t.seconds)}`).join(", ")}.`;
}

/** A results table's cell for a share: "75.8%", or "–" where there is none. */
export const percentCell = (x: number | undefined): string => (x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);

/**
 * `socialworld ARGS` for `stage`; resolves with what it wrote to standard error (with `stdout`:
 * to standard output, which then also goes to this terminal), rejects when it fails.
 */
export function socialworld(stage: string, args: readonly string[], timings: StageTiming[], o: { stdout?: boolean } = {}): Promise<string> {
  return nodeScript(stage, join(packageRoot(), "bin", "socialworld.js"), args, timings, "socialworld", o.stdout ?? false);
}

/** Another of the package's scripts (`dist/measurements/NAME.js`), run as `socialworld` is. */
export function measurementScript(stage: string, name: string, args: readonly string[], timings: StageTiming[]): Promise<string> {
  return nodeScript(stage, join(packageRoot(), "dist", "measurements", `${name}.js`), args, timings, `node dist/measurements/${name}.js`);
}

function nodeScript(stage: string, script: string, args: readonly string[], timings: StageTiming[], shown: string, stdout = false): Promise<string> {
  process.stderr.write(`\n[${stage}] ${shown} ${args.join(" ")}\n`);
  const t0 = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", stdout ? "pipe" : "inherit", "pipe"] });
    let err = "";
    let said = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      process.stdout.write(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on("error", fail);
    child.on("exit", (code) => {
      timings.push({ stage, seconds: (performance.now() - t0) / 1000 });
      if (code === 0) done(stdout ? said : err);
      else fail(new Error(`${stage}: ${shown} exited with ${code}`));
    });
  });
}

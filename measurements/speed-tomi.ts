/**
 * Speed of a whole benchmark run: `socialworld bench tomi` on a ToMi file (or another benchmark's
 * file, `--benchmark hitom`) with the simulation agent, as a user runs it (the command itself,
 * bin/socialworld.js, whose launcher line starts Node with its flags; a fresh process: start-up,
 * reading, the world model for every story, the agent, scoring, the episode log and the report),
 * pinned to one core. Prints a table of wall and CPU time (user + system, from the kernel) over
 * several runs.
 *
 *   node dist/measurements/speed-tomi.js [--data FILE] [--benchmark NAME] [--runs N] [--agent NAME] [--against DIR] [--instructions]
 *
 * --against DIR measures another built checkout (say, a `git worktree` of an older commit) in the
 * same run, alternating with this one, and prints the ratio: the fair comparison on a machine
 * whose speed drifts with its neighbours' load.
 *
 * --instructions also counts the instructions of one run under valgrind's cachegrind (all
 * threads, the optimizing compiler's included), beside those of `node -e 0`: on a shared machine
 * CPU times move by 10-20% with the neighbours' load, instruction counts much less, so they are
 * what to compare two versions by. Valgrind runs one thread at a time, and when the compiler's
 * thread gets to run decides how long the main thread runs unoptimized code: that moves a count by
 * up to 5%. So it also counts a run with the compiler on the main thread
 * (`--no-concurrent-recompilation`), which repeats to within 2%, and compares --against versions
 * by that count too. It splits the run's instructions by part of Node and V8 (optimizing
 * compiler, interpreter and builtins, runtime, JSON, GC, JIT code: see instruction-profile.ts).
 * Needs valgrind (apt-get install valgrind); about 1 minute, 2 with --against.
 *
 * Instructions are not CPU time where the optimizing compiler is concerned: its compiles run few
 * instructions per cycle (a run that compiles less can execute more instructions in less time).
 * So compare changes to when and what V8 compiles by CPU time, in alternating runs (--against),
 * and use the counts for changes to the work itself.
 *
 * Between the runs it starts Node alone (`node -e 0`) and prints the run less that: the part that is
 * socialworld's. Where NODE_EXTRA_CA_CERTS is set, it also starts Node without it: Node then reads
 * and parses the certificates it names at every start (about 40 ms of CPU and most of `node -e 0`'s
 * instructions on the project's machine), and the note says what the run would take without them.
 * When those starts vary (the median more than a fifth above the fastest), it says the host was
 * busy: the guest counts the time its CPU is taken away as the process's own, so the same work
 * then shows more CPU, in Node's start and in the runs alike.
 *
 * Not a test: the target (the 5,994-question ToMi val file in under one second of CPU on one
 * core) is checked by reading the table.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { AgentSpecError } from "../agents/agent-spec-error.js";
import { checkAgentSpec } from "../agents/registry.js";
import { WORLD_NAMES } from "../worlds/registry.js";
import { intArg } from "../cli/args.js";
import { instructionSharesOf, type InstructionShare } from "./instruction-profile.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { scriptArgs } from "./script-args.js";
import { againstTable, certificatesNote, contentionNote, median, speedTable, type Sample } from "./speed-table.js";
import { tomDataPath } from "./tom-data.js";

const USAGE = `node dist/measurements/speed-tomi.js [options]

Times \`socialworld bench tomi\` on a ToMi file (or another benchmark's) as fresh processes pinned to
one core and prints a table of wall and CPU time (median, min, max), Node's own start, and the run
less that.

Options:
  --data FILE       the benchmark file (default: the shared ToMi val file, fb_all_val.txt)
  --benchmark NAME  the benchmark the file is of (default tomi; hitom, fantom)
  --runs N          runs to time (default 5)
  --agent NAME      the agent (default simulation)
  --against DIR     also time the built checkout at DIR, alternating, and print the ratio
  --instructions    also count a run's instructions under valgrind's cachegrind (as it runs, and with
                    the compiler on the main thread, which repeats to 2%), and where they go
  --help            this text`;

const values = scriptArgs({
  name: "speed-tomi",
  usage: USAGE,
  schema: z.object({
    data: z.string().default(tomDataPath("tomi", "original", "fb_all_val.txt")),
    runs: intArg(1, 1000).default(5),
    agent: z.string().default("simulation"),
    instructions: z.boolean().default(false),
    against: z.string().optional(),
    benchmark: z.enum(WORLD_NAMES as [string, ...string[]]).default("tomi"),
  }),
});
const data = values.data;
if (!existsSync(data)) {
  process.stderr.write(`speed-tomi: ${data} not found (pass --data FILE)\n`);
  process.exit(2);
}
// A bad agent is a usage error now, not a failed timed run later.
try {
  checkAgentSpec(values.agent);
} catch (err) {
  if (!(err instanceof AgentSpecError)) throw err;
  process.stderr.write(`speed-tomi: --agent: ${err.message}\n`);
  process.exit(2);
}
const runs = values.runs;
const cli = join(packageRoot(), "bin", "socialworld.js");
const peer = values.against === undefined ? undefined : join(values.against, "bin", "socialworld.js");
if (peer !== undefined && !existsSync(peer)) {
  process.stderr.write(`speed-tomi: --against: ${peer} not found (pass the root of a built checkout)\n`);
  process.exit(2);
}
const pin = spawnSync("taskset", ["-c", "0", "true"]).status === 0;

// Measure the child from inside: /proc gives its CPU time only after exit, so let it report. The
// probe rides in NODE_OPTIONS, so that it reaches the Node that a command's launcher starts, as a
// CommonJS file (--require): an ES module there (--import) would start Node's ES module loader in
// every timed process, about 20 ms of CPU that a user's run of the command does not pay.
const PROBE = `const t0=process.hrtime.bigint();process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("\\nSPEED "+JSON.stringify({wall:Number(process.hrtime.bigint()-t0)/1e6,user:u.userCPUTime/1000,sys:u.systemCPUTime/1000})+"\\n")});`;

const probeDir = mkdtempSync(join(tmpdir(), "speed-tomi-probe-"));
process.on("exit", () => rmSync(probeDir, { recursive: true, force: true }));
const probeFiles = new Map<string, string>();

/** `env` with a CommonJS file of `code` preloaded (`--require`) by way of its NODE_OPTIONS. */
function withPreload(env: NodeJS.ProcessEnv, code: string): NodeJS.ProcessEnv {
  let file = probeFiles.get(code);
  if (file === undefined) {
    file = join(probeDir, `probe-${probeFiles.size}.cjs`);
    writeFileSync(file, code);
    probeFiles.set(code, file);
  }
  return { ...env, NODE_OPTIONS: `--require ${JSON.stringify(file)} ${env.NODE_OPTIONS ?? ""}`.trim() };
}

/** Runs `COMMAND ARGS` (pinned when it can be) and returns its timings and its output. */
function time(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Sample & { stdout: string } {
  const opts = { encoding: "utf8" as const, env: withPreload(env, PROBE), maxBuffer: 1 << 26 };
  const r = pin ? spawnSync("taskset", ["-c", "0", command, ...args], opts) : spawnSync(command, args, opts);
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const m = /SPEED (\{.*\})/.exec(r.stderr);
  if (!m) throw new Error("no timing from the child");
  return { ...(JSON.parse(m[1]!) as Sample), stdout: r.stdout };
}

/**
 * The Node flags a checkout's command starts Node with (bin/socialworld.js's launcher line; none
 * for a checkout whose command is a plain `#!/usr/bin/env node` script), read from the Node it
 * starts: what `process.execArgv` says there.
 */
function launcherFlags(cli: string): string[] {
  let flags = flagsOf.get(cli);
  if (flags === undefined) flagsOf.set(cli, (flags = askLauncher(cli)));
  return flags;
}

const flagsOf = new Map<string, string[]>();

function askLauncher(cli: string): string[] {
  const show = `process.stdout.write("EXECARGV "+JSON.stringify(process.execArgv)+"\\n");process.exit(0);`;
  const r = spawnSync(cli, ["--help"], { encoding: "utf8", env: withPreload(process.env, show) });
  const m = /EXECARGV (\[.*\])/.exec(r.stdout);
  if (!m) throw new Error(`${cli} did not start Node (${r.status}): ${r.stderr}`);
  return JSON.parse(m[1]!) as string[];
}

/** The arguments of a `bench` run into `store` (after the command). */
function benchArgs(store: string): string[] {
  return ["bench", values.benchmark, "--data", data, "--agent", values.agent, "--store", store, "--quiet"];
}

/** `f` given a fresh store folder, removed afterwards (so that no run sees another's). */
function inStore<T>(f: (store: string) => T): T {
  const store = mkdtempSync(join(tmpdir(), "speed-tomi-"));
  try {
    return f(store);
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

/** One timed `bench` run of the checkout whose CLI is `cli` (writing its JSON report, as a user would). */
function once(cli: string): Sample & { questions: number } {
  return inStore((store) => {
    // As users run it: the command itself (its launcher line starts Node), not `node` on it.
    const t = time(cli, [...benchArgs(store), "--json", join(store, "report.json")]);
    return { ...t, questions: Number(/· (\d+) questions ·/.exec(t.stdout)?.[1] ?? NaN) };
  });
}

// Node's own start, taken between the runs: what no change to socialworld can save.
const certificates = process.env.NODE_EXTRA_CA_CERTS;
const withoutCertificates = { ...process.env };
delete withoutCertificates.NODE_EXTRA_CA_CERTS;
const samples: (Sample & { questions: number })[] = [];
const peerSamples: Sample[] = [];
const bare: Sample[] = [];
const bareWithout: Sample[] = [];
for (let i = 0; i < runs; i++) {
  samples.push(once(cli));
  if (peer !== undefined) peerSamples.push(once(peer));
  bare.push(time(process.execPath, ["-e", "0"]));
  if (certificates) bareWithout.push(time(process.execPath, ["-e", "0"], withoutCertificates));
}
const q = samples[0]!.questions;
process.stdout.write(`socialworld bench ${values.benchmark} --agent ${values.agent} · ${data} · ${q} questions · ${runs} runs${pin ? " · pinned to core 0" : ""}\n\n`);
if (peer === undefined) process.stdout.write(speedTable(samples, bare));
else process.stdout.write(`this checkout against ${values.against}, runs alternating\n\n${againstTable(samples, peerSamples, bare)}`);
const cpu = median(samples.map((s) => s.user + s.sys));
process.stdout.write(`\nquestions per CPU second: ${((1000 * q) / cpu).toFixed(0)}; target: the whole val file in under 1000 ms of CPU (now ${(cpu / 1000).toFixed(2)} s)\n`);
const note = certificatesNote(certificates, bare, bareWithout, samples);
if (note) process.stdout.write(`\n${note}`);
const busy = contentionNote(bare);
if (busy) process.stdout.write(`\n${busy}`);

if (values.instructions) {
  if (spawnSync("valgrind", ["--version"]).status !== 0) {
    process.stderr.write("speed-tomi: --instructions needs valgrind (apt-get install valgrind)\n");
    process.exit(2);
  }
  /** Instructions of `node ARGS` (all threads), and where they went when `shares` is asked for. */
  const count = (args: string[], shares = false, env: NodeJS.ProcessEnv = process.env): { total: number; shares?: InstructionShare[] } => {
    // Cachegrind's per-function file is written only when the breakdown is asked for.
    const dir = shares ? mkdtempSync(join(tmpdir(), "speed-tomi-cg-")) : undefined;
    const out = dir === undefined ? "/dev/null" : join(dir, "cachegrind.out");
    try {
      const r = spawnSync("valgrind", ["--tool=cachegrind", "--cache-sim=no", `--cachegrind-out-file=${out}`, "--smc-check=all", process.execPath, ...args], {
        encoding: "utf8",
        maxBuffer: 1 << 26,
        env,
      });
      const m = /I\s+refs:\s+([\d,]+)/.exec(r.stderr);
      if (r.status !== 0 || !m) throw new Error(`valgrind failed (${r.status}): ${r.stderr.slice(-500)}`);
      const total = Number(m[1]!.replace(/,/g, ""));
      return dir === undefined ? { total } : { total, shares: instructionSharesOf(out).shares };
    } finally {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  };
  // Valgrind runs Node itself, with the flags the command's launcher gives it (the shell's few
  // hundred thousand instructions before it are left out).
  const countRun = (cli: string, shares = false, flags: readonly string[] = []) =>
    inStore((store) => count([...launcherFlags(cli), ...flags, cli, ...benchArgs(store)], shares));
  const G = (n: number) => `${(n / 1e9).toFixed(2)} G`;
  // Like any V8 flag off its default (the launcher's too), it makes V8 reject the code cache Node
  // ships for its own modules, which are then compiled from source: compare these counts with
  // each other, not with the plain ones.
  const SERIAL = ["--no-concurrent-recompilation"];
  const serialRow = "compiler on the main thread (`--no-concurrent-recompilation`)";
  const run = countRun(cli, true);
  const serial = countRun(cli, false, SERIAL).total;
  const start = count(["-e", "0"]).total;
  process.stdout.write("\n| instructions (cachegrind, one run) | count |\n|---|---:|\n");
  process.stdout.write(`| the run | ${G(run.total)} |\n| the run, ${serialRow} | ${G(serial)} |\n`);
  process.stdout.write(`| \`node -e 0\` | ${G(start)} |\n| the run less node's own start | ${G(run.total - start)} |\n`);
  if (certificates) process.stdout.write(`| \`node -e 0\` without NODE_EXTRA_CA_CERTS | ${G(count(["-e", "0"], false, withoutCertificates).total)} |\n`);
  if (peer !== undefined) {
    const theirs = countRun(peer).total;
    const theirsSerial = countRun(peer, false, SERIAL).total;
    process.stdout.write(`| the run of ${values.against} | ${G(theirs)} (ratio ${(run.total / theirs).toFixed(2)}) |\n`);
    process.stdout.write(`| the run of ${values.against}, ${serialRow} | ${G(theirsSerial)} (ratio ${(serial / theirsSerial).toFixed(2)}) |\n`);
  }
  process.stdout.write("\n| where the run's instructions go | instructions | share |\n|---|---:|---:|\n");
  for (const s of run.shares!) {
    process.stdout.write(`| ${s.part} | ${(s.instructions / 1e6).toFixed(0)} M | ${((100 * s.instructions) / run.total).toFixed(1)}% |\n`);
  }
}

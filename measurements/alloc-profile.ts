/**
 * Where a command allocates: runs any `socialworld` command as users run it (bin/socialworld.js,
 * a process of its own) under V8's sampling heap profiler, counting objects the garbage collector
 * has already freed (what costs GC time is allocation, not what stays alive), and prints the top
 * allocation sites. Allocation counts, unlike times, barely change with the machine's load, so
 * they compare two versions reliably.
 *
 *   node dist/measurements/alloc-profile.js [--top N] -- bench tomi --data FILE --quiet
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { scriptArgs } from "./script-args.js";

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const split = process.argv.indexOf("--");
const own = split < 0 ? process.argv.slice(2) : process.argv.slice(2, split);
const command = split < 0 ? [] : process.argv.slice(split + 1);
const USAGE = `node dist/measurements/alloc-profile.js [--top N] -- <socialworld command and options>

Runs the socialworld command (bin/socialworld.js) under V8's sampling heap profiler (freed objects
included) and prints the allocation sites that allocate most. Example:
  node dist/measurements/alloc-profile.js -- bench tomi --data FILE --quiet

Options (before the --):
  --top N    how many allocation sites to print (default 30)
  --help     this text`;
const values = scriptArgs({ name: "alloc-profile", usage: USAGE, schema: z.object({ top: intArg(1).default(30) }) }, own);
if (command.length === 0) {
  process.stderr.write(`alloc-profile: no command to profile (put it after --)\n\n${USAGE}\n`);
  process.exit(2);
}
// The profiler rides in NODE_OPTIONS as a CommonJS file, so that it reaches the Node that the
// command's launcher line starts; the main thread's inspector session answers synchronously, so
// the profile is taken and written as the process exits.
const dir = mkdtempSync(join(tmpdir(), "alloc-profile-"));
const out = join(dir, "profile.json");
const probe = join(dir, "probe.cjs");
writeFileSync(
  probe,
  `const { Session } = require("node:inspector");
const session = new Session();
session.connect();
session.post("HeapProfiler.enable");
session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
process.on("exit", () => session.post("HeapProfiler.stopSampling", (err, r) => { if (!err) require("node:fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(r.profile)); }));
`,
);
let code: number | null;
let profile: { head: ProfileNode };
try {
  const env = { ...process.env, NODE_OPTIONS: `--require ${JSON.stringify(probe)} ${process.env.NODE_OPTIONS ?? ""}`.trim() };
  const r = spawnSync(join(packageRoot(), "bin", "socialworld.js"), command, { stdio: ["inherit", "ignore", "inherit"], env });
  if (r.error) throw r.error;
  code = r.status;
  profile = JSON.parse(readFileSync(out, "utf8")) as { head: ProfileNode };
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const bySite = new Map<string, number>();
let total = 0;
const place = (n: ProfileNode): string => `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber + 1}`;
// A builtin (Map, push, an iterator's next) has no script of its own: it is named with the
// function that called it, which is the line to change.
const walk = (n: ProfileNode, caller: string): void => {
  const here = place(n);
  const site = n.callFrame.url === "" && caller !== "" ? `${n.callFrame.functionName || "(builtin)"} ← ${caller}` : here;
  total += n.selfSize;
  bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
  for (const child of n.children) walk(child, n.callFrame.url === "" ? caller : here);
};
walk(profile.head, "");
const rows = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, values.top);
process.stderr.write(`\nallocated (sampled, freed objects included): ${(total / 1e6).toFixed(1)} MB; command exit code ${code}\n\n`);
process.stderr.write("| MB | share | allocation site |\n|---:|---:|---|\n");
for (const [site, bytes] of rows) process.stderr.write(`| ${(bytes / 1e6).toFixed(1)} | ${((100 * bytes) / total).toFixed(1)}% | ${site} |\n`);

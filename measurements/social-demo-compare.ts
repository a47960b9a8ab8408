/**
 * Two social demos question by question: the same policies (SFT, SFT+GRPO) of two runs of
 * social-demo.ts that differ in one setting (a fact in the prompt: `--agreement` against
 * none), paired on their shared test split. Each pair of folders must hold the same test split,
 * byte for byte (the same --seed and --test-trees); with several pairs (other seeds), the
 * questions are also pooled. With `--against AGENT`, each policy is paired with that one of the
 * before folder (the same folders twice: SFT+GRPO against SFT within each demo, pooled).
 * Each change has two standard errors: the question-level one, and the cascade-level one, the
 * questions' differences summed by tree (the questions of one cascade share its post, users and
 * feed, so they are not independent).
 *
 *   node dist/measurements/social-demo-compare.js --before DIR[,DIR...] --after DIR[,DIR...]
 *       [--agents SFT,SFT+GRPO] [--against AGENT]      (or: npm run compare:social -- ...)
 *
 * Reads each folder's eval-*.json (the bench runs' ids) and store/ (their logs); trains nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { z } from "zod";
import { pairedChange, type PairedChange } from "../benchmarks/paired-change.js";
import { RunStore } from "../store/run-store.js";
import { percentCell as pct } from "./cli-process.js";
import { scriptArgs } from "./script-args.js";
import { cascadeOf, evalReport, pairedTable, rightByQuestion } from "./social-paired.js";

const USAGE = `node dist/measurements/social-demo-compare.js --before DIR[,DIR...] --after DIR[,DIR...] [options]
                                                   (or: npm run compare:social -- [options])

Pairs the policies of two social demos (npm run demo:social -- --out DIR) question by question on
their shared test split: each policy's type accuracy in both, and the paired change with its
standard errors (question-level, and cascade-level: the differences summed by tree) and
McNemar's exact p; with several pairs of folders, pooled over them too.

Options:
  --before DIRS   the demo folders compared against, comma-separated
  --after DIRS    the demo folders compared, as many, in the same order (the same test splits)
  --agents NAMES  the policies to pair, comma-separated (default SFT,SFT+GRPO)
  --against NAME  pair each policy with this one of the before folder instead of itself (with the
                  same folders as --before and --after: SFT+GRPO against SFT within each demo)
  --help          this text`;

const split = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
const folders = z.string({ error: "is required" }).min(1).transform(split);
const values = scriptArgs({
  name: "social-demo-compare",
  usage: USAGE,
  schema: z
    .object({
      before: folders,
      after: folders,
      agents: z.string().min(1).default("SFT,SFT+GRPO").transform(split),
      against: z.string().min(1).optional(),
    })
    .superRefine((v, ctx) => {
      if (v.after.length !== v.before.length) ctx.addIssue({ code: "custom", path: ["after"], message: `${v.after.length} folders for the ${v.before.length} of --before` });
    }),
});

interface Demo {
  readonly dir: string;
  readonly store: RunStore;
  readonly first: string;
}

async function openDemo(dir: string): Promise<Demo> {
  const d = resolve(dir);
  for (const f of ["test.jsonl", "store", "results.md"]) if (!existsSync(join(d, f))) fail(`${dir}: no ${f} (not a finished social demo's folder)`);
  return { dir: d, store: await RunStore.open(join(d, "store")), first: readFileSync(join(d, "results.md"), "utf8").split("\n")[0]! };
}

function fail(message: string): never {
  process.stderr.write(`social-demo-compare: ${message}\n`);
  process.exit(2);
}

/** The agent's right-or-wrong by question in a demo, and its type accuracy. */
function agentIn(demo: Demo, agent: string): { right: Map<string, boolean>; accuracy: number } {
  const file = evalReport(demo.dir, agent);
  if (!existsSync(file)) fail(`${demo.dir}: no ${basename(file)} (no agent "${agent}" in that demo)`);
  const report = JSON.parse(readFileSync(file, "utf8")) as { runId?: string; accuracy: number };
  if (!report.runId) fail(`${file}: no runId`);
  return { right: rightByQuestion(demo.store, report.runId), accuracy: report.accuracy };
}

const out: string[] = [];
const pooled = new Map(values.agents.map((a) => [a, { before: new Map<string, boolean>(), after: new Map<string, boolean>() }]));
const rows: [string, string, PairedChange][] = [];
const accuracies = ["| agent | before | after | questions | type accuracy before | type accuracy after |", "|:--|:--|:--|--:|--:|--:|"];
for (let i = 0; i < values.before.length; i++) {
  const before = await openDemo(values.before[i]!);
  const after = await openDemo(values.after[i]!);
  if (!readFileSync(join(before.dir, "test.jsonl")).equals(readFileSync(join(after.dir, "test.jsonl"))))
    fail(`${values.before[i]} and ${values.after[i]} have different test splits (run both demos with the same --seed and --test-trees)`);
  out.push(`before ${before.dir}: ${before.first}`, `after  ${after.dir}: ${after.first}`, "");
  for (const agent of values.agents) {
    const was = values.against ?? agent;
    const b = agentIn(before, was);
    const a = agentIn(after, agent);
    accuracies.push(`| ${agent}${was === agent ? "" : ` against ${was}`} | ${basename(before.dir)} | ${basename(after.dir)} | ${a.right.size} | ${pct(b.accuracy)} | ${pct(a.accuracy)} |`);
    rows.push([`${agent} (${basename(after.dir)})`, `${was} (${basename(before.dir)})`, pairedChange(b.right, a.right, cascadeOf)]);
    // Pooled over the pairs: a question is one of pair i's.
    for (const [id, right] of b.right) pooled.get(agent)!.before.set(`${i}:${id}`, right);
    for (const [id, right] of a.right) pooled.get(agent)!.after.set(`${i}:${id}`, right);
  }
}
if (values.before.length > 1)
  for (const [agent, p] of pooled) rows.push([`${agent} (after, ${values.before.length} pairs pooled)`, `${values.against ?? agent} (before)`, pairedChange(p.before, p.after, cascadeOf)]);
out.push(...accuracies, "", "Question by question (the same test questions):", "", ...pairedTable(rows), "");
process.stdout.write(out.join("\n"));

/**
 * The GRPO demonstration: a small policy trained from scratch (the project's own tokenizer, built
 * from the training prompts) on ToMi train in simulation mode (each prompt holds the story's
 * socialized context, written by the world model from the story text, then the question), first
 * with SFT on the official labels, then with GRPO (reward: the official judge's exact match);
 * GRPO trains on the questions the SFT policy still gets wrong (--skip-solved: after SFT the
 * model answers most questions with the object's last location, so the false-belief questions are
 * most of what is left) with dynamic sampling, clip-higher and a small KL to the SFT policy;
 * the base, SFT and GRPO policies are then evaluated on ToMi val, by question type, through the
 * same command a user runs (`socialworld bench tomi --agent policy:DIR --mode simulation`).
 *
 *   node dist/measurements/grpo-demo.js [--out DIR] [--train FILE] [--val FILE] [--sft-steps N]
 *       [--grpo-steps N] [--seed S] [--val-limit N]
 *
 * Every stage is the project's command line in a child process, so the run is what a user would
 * type; the script prints each command, its wall time, and at the end the table
 * `| question type | base | SFT | GRPO |` (also written to OUT/results.md). Not a test.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { questionText } from "../agents/policy/question-prompt.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { scriptArgs } from "./script-args.js";
import { tomDataPath } from "./tom-data.js";
import type { BenchReport } from "../benchmarks/report.js";
import { loadBenchmark } from "../worlds/registry.js";
import { DataError } from "../worlds/core/errors.js";

const shared = tomDataPath("tomi", "original");
const USAGE = `node dist/measurements/grpo-demo.js [options]   (or: npm run demo:grpo -- [options])

Trains a small policy from scratch on ToMi train (SFT, then GRPO on what SFT still gets wrong) and
evaluates the base, SFT and GRPO policies on ToMi val by question type, each stage through the
socialworld command; the table goes to the terminal and to OUT/results.md.

Options:
  --out DIR          where the models, data, store and results go (default data/grpo-demo)
  --train FILE       ToMi training file (default: the shared fb_all_train.txt)
  --val FILE         ToMi evaluation file (default: the shared fb_all_val.txt)
  --sft-steps N      SFT optimizer steps (default 1000)
  --grpo-steps N     GRPO steps (default 40)
  --seed S           seed of every stage (default 1)
  --val-limit N      evaluate on the first N questions only (default: all)
  --help             this text`;

const values = scriptArgs({
  name: "grpo-demo",
  usage: USAGE,
  options: {
    out: { type: "string" },
    train: { type: "string" },
    val: { type: "string" },
    "sft-steps": { type: "string" },
    "grpo-steps": { type: "string" },
    seed: { type: "string" },
    "val-limit": { type: "string" },
  },
  schema: z.object({
    out: z.string().default(join(packageRoot(), "data", "grpo-demo")),
    train: z.string().default(join(shared, "fb_all_train.txt")),
    val: z.string().default(join(shared, "fb_all_val.txt")),
    "sft-steps": intArg(1).default(1000),
    "grpo-steps": intArg(1).default(40),
    seed: intArg(0, 2 ** 32 - 1).default(1),
    "val-limit": intArg(1).optional(),
  }),
});
const out = resolve(values.out);
const train = resolve(values.train);
const val = resolve(values.val);
for (const f of [train, val]) {
  if (!existsSync(f)) {
    process.stderr.write(`grpo-demo: ${f} not found (pass --train FILE and --val FILE)\n`);
    process.exit(2);
  }
}
mkdirSync(out, { recursive: true });
const store = join(out, "store");
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();

// 1. SFT data: every training question as the policy is asked it in simulation mode, with its official label.
{
  const t0 = performance.now();
  const bench = await loadBenchmark("tomi");
  const lines: string[] = [];
  let items;
  try {
    items = await bench.load(train);
  } catch (err) {
    // Bad input is one line naming the file and line, as the command line says it.
    if (!(err instanceof DataError)) throw err;
    process.stderr.write(`grpo-demo: bad input: ${err.message}\n`);
    process.exit(2);
  }
  for (const item of items) lines.push(JSON.stringify({ prompt: await questionText(bench.task(item, "simulation")), response: item.answer }));
  writeFileSync(join(out, "sft.jsonl"), lines.join("\n") + "\n");
  timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
  process.stderr.write(`[data] ${lines.length} training questions in simulation mode -> ${join(out, "sft.jsonl")}\n`);
}

const seed = String(values.seed);
const base = join(out, "base");
const sft = join(out, "sft");
const grpo = join(out, "grpo");
await run("base", ["model", "init", "--preset", "1m", "--corpus", join(out, "sft.jsonl"), "--seed", seed, "--out", base, "--force"]);
await run("sft", [
  "train", "sft", "--model", base, "--data", join(out, "sft.jsonl"), "--out", sft, "--steps", String(values["sft-steps"]), "--batch", "16",
  "--lr", "3e-3", "--min-lr", "3e-4", "--warmup", "30", "--weight-decay", "0.01", "--seed", seed, "--save-every", "100000",
]);
await run("grpo", [
  "train", "grpo", "--model", sft, "--bench", "tomi", "--data", train, "--mode", "simulation", "--out", grpo, "--store", store,
  "--steps", String(values["grpo-steps"]), "--prompts", "16", "--group-size", "8", "--max-new-tokens", "8", "--temperature", "1",
  "--lr", "1e-4", "--kl", "0.001", "--clip-high", "0.28", "--loss-agg", "token-mean", "--dynamic-sampling", "--max-rollout-batches", "3",
  "--skip-solved", "--seed", seed, "--save-every", "20", "--micro-batch", "32",
]);

const reports: Record<string, BenchReport> = {};
for (const [name, dir] of [["base", base], ["SFT", sft], ["GRPO", grpo]] as const) {
  const json = join(out, `eval-${name.toLowerCase()}.json`);
  await run(`eval ${name}`, [
    "bench", "tomi", "--data", val, "--agent", `policy:${dir}?max_new_tokens=8`, "--mode", "simulation", "--concurrency", "32",
    "--store", store, "--json", json, "--quiet", ...(values["val-limit"] !== undefined ? ["--limit", String(values["val-limit"])] : []),
  ]);
  reports[name] = JSON.parse(readFileSync(json, "utf8")) as BenchReport;
}

const total = (performance.now() - started) / 1000;
const fmt = (r: BenchReport, type?: string) => {
  const s = type ? r.byType[type] : { accuracy: r.accuracy, correct: r.correct, total: r.total };
  return s ? `${(100 * s.accuracy).toFixed(1)}%` : "–";
};
const names = ["base", "SFT", "GRPO"] as const;
const rows = [
  "| question type | base | SFT | GRPO |",
  "|:--|--:|--:|--:|",
  ...reports.base!.byType ? Object.keys(reports.base!.byType).map((t) => `| ${t} | ${names.map((n) => fmt(reports[n]!, t)).join(" | ")} |`) : [],
  `| **all** (${reports.base!.total}) | ${names.map((n) => fmt(reports[n]!)).join(" | ")} |`,
];
const text = [
  `ToMi val (${val}), simulation mode, policy preset 1m, seed ${seed}:`,
  "",
  ...rows,
  "",
  wallTimeLine(total, timings),
  "",
].join("\n");
writeFileSync(join(out, "results.md"), text);
process.stdout.write("\n" + text);

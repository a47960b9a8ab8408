/**
 * The social world's results table: small policies trained from scratch on the CPU, against the
 * baselines, on a generated test split. Every stage is the project's command line in a child
 * process (what a user types), timed:
 *
 *   1. `generate social` a training split and a test split (other seeds: other networks);
 *   2. the training split's questions as the policy is asked them (`--context short`, the default:
 *      the profile line, the feed and one line of the facts the screen shows; a 1M policy reads the
 *      type off it within a hundred steps, and not off the full prompt in four hundred), with their
 *      labels (the JSON a model should write), as SFT data, in their natural mix (`--balance none`,
 *      the default; `types`: as many of each interaction type as the rarest has); `model init
 *      --preset 1m` builds the tokenizer from it;
 *   3. `train sft` on them, the type's token weighed `--field-weight action=20` against the reply's
 *      text (the decision is one token of about 18); then `train grpo --world social --context` from
 *      the SFT policy (the same trees, regenerated from their seed, asked the same prompt; reward:
 *      -1 off the schema, type match + ROUGE-L of the content; replies sampled under the task's
 *      reaction grammar);
 *   4. `bench social --context` on the test split with random, majority (fitted on the training
 *      split), simulation (the latent model: the ceiling), the SFT and the SFT+GRPO policies (greedy,
 *      each answer written under the task's reaction grammar, as GRPO samples it): type accuracy,
 *      macro-F1, ROUGE-L and the share of replies in the strict format, at depth 0, depth 1 and over
 *      all; then SFT against majority and SFT+GRPO against SFT question by question (the paired
 *      change of type accuracy, its standard error and McNemar's exact p).
 *
 *   node dist/measurements/social-demo.js [--out DIR] [--context short|full] [--FACT ...] [--train-trees N]
 *       [--test-trees N] [--sft-steps N] [--field-weight SPEC] [--grpo-steps N] [--grpo-lr X] [--balance none|types]
 *       [--threads N] [--seed S]                               (or: npm run demo:social -- ...)
 *
 * Prints the table and each stage's wall time (also written to OUT/results.md). Not a test.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg, numArg } from "../cli/args.js";
import { countByType, equalByType } from "../trainers/data/balanced-types.js";
import type { BenchReport } from "../benchmarks/report.js";
import { pairedChange } from "../benchmarks/paired-change.js";
import { RunStore } from "../store/run-store.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { loadBenchmark } from "../worlds/registry.js";
import { factsTitle } from "../worlds/social/index.js";
import { scriptArgs } from "./script-args.js";
import { cascadeOf, evalReport, pairedTable, rightByQuestion } from "./social-paired.js";
import { factsFields, factsNeedShort, factsOf, factsUsage } from "./social-facts-args.js";
import { percentCell as pct, socialworld as run, wallTimeLine, type StageTiming } from "./cli-process.js";
import { writeResults } from "./results-file.js";

const USAGE = `node dist/measurements/social-demo.js [options]   (or: npm run demo:social -- [options])

Trains a small policy from scratch on generated social trees (SFT, then GRPO with the world's
reward) and evaluates it with the random and majority baselines on a generated test split, at
depth 0 and 1, each stage through the socialworld command; the table goes to the terminal and to
OUT/results.md.

Options:
  --out DIR           where the data, models, store and results go (default data/social-demo)
  --context MODE      the prompt the policies are trained and benched on: short (the profile line,
                      the feed and one line of deciding facts) or full (default short)
${factsUsage(22)}
  --train-trees N     trees in the training split (default 200)
  --test-trees N      trees in the test split (default 30)
  --sft-steps N       SFT optimizer steps, 16 examples each (default 400)
  --field-weight SPEC train sft's weight of a reply's JSON fields (default action=20: the type's token
                      weighs 20 of the text's); "none" for plain SFT
  --grpo-steps N      GRPO steps, 8 questions x 4 replies each (default 20)
  --grpo-lr X         GRPO's learning rate (default 1e-4; at 5e-4 the SFT policy fell to answering
                      "ignore" to every question in 20 steps: docs/results.md)
  --balance MODE      SFT data: "none" (every training question, the natural mix) or "types" (as
                      many of each interaction type as the rarest has, drawn with the seed) (default none)
  --threads N         CPU threads of the trainers (default: all)
  --seed S            seed of the training split and of every trainer; the test split is S + 1000 (default 1)
  --help              this text`;

const values = scriptArgs({
  name: "social-demo",
  usage: USAGE,
  schema: z.object({
    out: z.string().default(join(packageRoot(), "data", "social-demo")),
    context: z.enum(["short", "full"]).default("short"),
    ...factsFields,
    "train-trees": intArg(1, 100_000).default(200),
    "test-trees": intArg(1, 100_000).default(30),
    "sft-steps": intArg(1).default(400),
    "field-weight": z.string().min(1).default("action=20"),
    "grpo-steps": intArg(1).default(20),
    "grpo-lr": numArg().positive().default(1e-4),
    balance: z.enum(["types", "none"]).default("none"),
    threads: intArg(1, 1024).optional(),
    seed: intArg(0, 2 ** 32 - 1001).default(1),
  }).superRefine(factsNeedShort),
});
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const store = join(out, "store");
const timings: StageTiming[] = [];
const started = performance.now();
const seed = String(values.seed);
const trainFile = join(out, "train.jsonl");
const testFile = join(out, "test.jsonl");

const load0 = loadavg()[0]!;
const facts = factsOf(values);
const context = ["--context", values.context, ...Object.keys(facts).map((f) => `--${f}`)];
const socialworld = (stage: string, args: string[]) => run(stage, args, timings);

await socialworld("generate", ["generate", "social", "--n", String(values["train-trees"]), "--seed", seed, "--out", trainFile, "--quiet"]);
await socialworld("generate", ["generate", "social", "--n", String(values["test-trees"]), "--seed", String(values.seed + 1000), "--out", testFile, "--quiet"]);

// SFT data: the training questions as a policy is asked them, with their labels as the JSON to write.
let sftMix = "";
{
  const bench = await loadBenchmark("social", { context: values.context, flags: facts });
  const items = await bench.load(trainFile);
  const types = items.map((item) => item.type);
  const kept = values.balance === "types" ? equalByType(types, values.seed) : types.map((_, i) => i);
  const lines = kept.map((i) => JSON.stringify({ prompt: bench.task(items[i]!, "vanilla").prompt, response: items[i]!.answer }));
  writeFileSync(join(out, "sft.jsonl"), lines.join("\n") + "\n");
  const mix = (idx: readonly number[]) => Object.entries(countByType(types, idx)).map(([t, n]) => `${t} ${n}`).join(", ");
  sftMix = `${lines.length} of the ${items.length} training questions (${mix(kept)}; all: ${mix(types.map((_, i) => i))})`;
  process.stderr.write(`[data] ${sftMix} -> ${join(out, "sft.jsonl")}\n`);
}
const threads = values.threads !== undefined ? ["--threads", String(values.threads)] : [];

const base = join(out, "base");
const sft = join(out, "sft");
const grpo = join(out, "grpo");
await socialworld("base", ["model", "init", "--preset", "1m", "--corpus", join(out, "sft.jsonl"), "--seed", seed, "--out", base, "--force"]);
await socialworld("sft", [
  "train", "sft", "--model", base, "--data", join(out, "sft.jsonl"), "--out", sft, "--steps", String(values["sft-steps"]), "--batch", "16",
  "--lr", "3e-3", "--min-lr", "3e-4", "--warmup", String(Math.max(1, Math.round(values["sft-steps"] / 10))), "--seed", seed, "--save-every", "100000", "--quiet", ...threads,
  ...(values["field-weight"] === "none" ? [] : ["--field-weight", values["field-weight"]]),
]);
await socialworld("grpo", [
  "train", "grpo", "--model", sft, "--world", "social", ...context, "--episodes", String(values["train-trees"]), "--world-seed", seed, "--out", grpo, "--store", store,
  "--reward", "exact=1,rougeL=1", "--steps", String(values["grpo-steps"]), "--prompts", "8", "--group-size", "4", "--max-new-tokens", "80",
  "--temperature", "1", "--lr", String(values["grpo-lr"]), "--kl", "0.001", "--clip-high", "0.28", "--seed", seed, "--save-every", "100000", "--quiet", ...threads,
]);

const agents: [string, string][] = [
  ["random", "random"],
  ["majority", `majority:${trainFile}`],
  // The ceiling: the generator's latent user model, draws included.
  ["simulation", "simulation"],
  ["SFT", `policy:${sft}?max_new_tokens=80`],
  ["SFT+GRPO", `policy:${grpo}?max_new_tokens=80`],
];
const reports: Record<string, BenchReport> = {};
for (const [name, spec] of agents) {
  const json = evalReport(out, name);
  await socialworld(`eval ${name}`, ["bench", "social", "--data", testFile, ...context, "--agent", spec, "--concurrency", "16", "--store", store, "--json", json, "--quiet"]);
  reports[name] = JSON.parse(readFileSync(json, "utf8")) as BenchReport;
}

const pairs: [string, string][] = [["majority", "SFT"], ["SFT", "SFT+GRPO"]];
// Each test question's type right or wrong in the compared bench runs, read once a run.
const runStore = await RunStore.open(store);
const rightById = new Map([...new Set(pairs.flat())].map((name) => [name, rightByQuestion(runStore, reports[name]!.runId!)]));
const pairedRows = pairedTable(pairs.map(([before, after]) => [after, before, pairedChange(rightById.get(before)!, rightById.get(after)!, cascadeOf)]));

const total = (performance.now() - started) / 1000;
const num = (x: number | undefined) => (x === undefined ? "–" : x.toFixed(3));
const rows = ["| agent | depth | tasks | type accuracy | macro-F1 | ROUGE-L | strict format |", "|:--|--:|--:|--:|--:|--:|--:|"];
for (const [name] of agents) {
  const r = reports[name]!;
  for (const d of ["0", "1", "all"]) {
    const p = d === "all" ? "" : `depth${d}.`;
    const tasks = d === "all" ? r.total : (r.splits.depth?.[d]?.total ?? 0);
    const acc = d === "all" ? r.accuracy : r.metrics?.[`${p}accuracy`];
    rows.push(`| ${name} | ${d} | ${tasks} | ${pct(acc)} | ${pct(r.metrics?.[`${p}macroF1`])} | ${num(r.metrics?.[`${p}rougeL`])} | ${pct(r.metrics?.[`${p}format`])} |`);
  }
}
const text = [
  `Social world, ${values.context} prompts${factsTitle(facts)}; test split ${testFile} (${values["test-trees"]} trees, seed ${values.seed + 1000}); training split ${values["train-trees"]} trees (seed ${seed}); SFT data: ${sftMix}; policy preset 1m, SFT ${values["sft-steps"]} steps of 16 (field weight ${values["field-weight"]}), GRPO ${values["grpo-steps"]} steps of 8 questions x 4 replies at lr ${values["grpo-lr"]}; ${cpus().length} CPU cores, Node ${process.version}:`,
  "",
  ...rows,
  "",
  "Question by question (the same test questions):",
  "",
  ...pairedRows,
  "",
  wallTimeLine(total, timings) + ` Load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.`,
  "",
].join("\n");
writeResults(out, text);

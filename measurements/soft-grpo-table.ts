/**
 * Discrete GRPO against SofT-GRPO (issue 34) on a ToM world, from the same SFT policy with the
 * same budget: a policy of the tiny preset is SFT-trained on generated ToMi questions, then
 * trained twice more with GRPO, once sampling its replies token by token and once thinking first
 * in soft tokens (`train grpo --soft`), same steps, prompts, group size, learning rate, KL and
 * seed. Each is evaluated with `socialworld bench tomi` on held-out generated questions (greedy,
 * token by token; SofT-GRPO also as it was trained, thinking in soft tokens first, at temperature
 * 1: `policy:DIR?soft_thinking=K`), and the table gives the accuracy
 * before and after, with each run's per-step rollout accuracy and reward (for SofT-GRPO the
 * rollouts think in soft tokens).
 *
 *   npm run table:softgrpo -- [--out DIR] [--questions N] [--sft-steps N] [--grpo-steps N]
 *       [--eval N] [--thinking-steps K] [--seed S]
 *
 * Every stage is the command line in a child process (cli-process.ts). Not a test.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import type { BenchReport } from "../benchmarks/report.js";
import { Rng } from "../worlds/core/rng.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { loadBenchmark } from "../worlds/registry.js";
import { generateTomi } from "../worlds/tomi/index.js";
import { percentCell as pct, socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { scriptArgs } from "./script-args.js";
import { sftExample } from "./learn-recipe.js";

const USAGE = `node dist/measurements/soft-grpo-table.js [options]   (or: npm run table:softgrpo -- [options])

SFT on generated ToMi questions (tiny preset), then discrete GRPO and SofT-GRPO from that policy
with the same budget; held-out accuracy before and after, and each run's per-step curve. The
table goes to the terminal and to OUT/results.md.

Options:
  --out DIR            where models, data and results go (default data/soft-grpo-table)
  --questions N        generated training questions (default 600)
  --sft-steps N        SFT steps, batch 16 (default 300)
  --grpo-steps N       steps of each GRPO run, 8 prompts x 4 replies (default 8)
  --eval N             held-out generated questions (default 200)
  --thinking-steps K   SofT-GRPO's soft tokens per reply (default 4)
  --seed S             seed of every stage (default 1)
  --help               this text`;

const Options = z.object({
  out: z.string().default(join(packageRoot(), "data", "soft-grpo-table")),
  questions: intArg(20).default(600),
  "sft-steps": intArg(1).default(300),
  "grpo-steps": intArg(1).default(8),
  eval: intArg(10).default(200),
  "thinking-steps": intArg(1, 64).default(4),
  seed: intArg(0, 2 ** 32 - 1).default(1),
});
const values = scriptArgs({
  name: "soft-grpo-table",
  usage: USAGE,
  schema: Options,
});
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();
const seed = values.seed;
const s = String(seed);

// Training and held-out questions from different seeds of the generator, in simulation mode.
const trainFile = join(out, "train.txt");
const evalFile = join(out, "eval.txt");
const sftFile = join(out, "sft.jsonl");
{
  const t0 = performance.now();
  writeFileSync(trainFile, (await generateTomi(values.questions, seed)).txt);
  writeFileSync(evalFile, (await generateTomi(values.eval, seed + 1_000_003)).txt);
  const bench = await loadBenchmark("tomi");
  const lines: string[] = [];
  for (const item of await bench.load(trainFile)) lines.push(JSON.stringify(await sftExample(bench, item, "simulation")));
  writeFileSync(sftFile, Rng.seeded(`soft-grpo-table:${seed}`).shuffle(lines).join("\n") + "\n");
  timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
}

const base = join(out, "base");
const sft = join(out, "sft");
await run("base", ["model", "init", "--preset", "tiny", "--corpus", sftFile, "--tokenizer", "word", "--seed", s, "--out", base, "--force"]);
await run("sft", [
  "train", "sft", "--model", base, "--data", sftFile, "--out", sft, "--steps", String(values["sft-steps"]), "--batch", "16",
  "--lr", "3e-3", "--min-lr", "3e-4", "--warmup", "20", "--prompt-loss", "0.1", "--seed", s, "--save-every", "100000",
]);

// The same budget for both: steps, prompts, group size, learning rate, KL, clip, seed.
const grpoArgs = (dir: string) => [
  "train", "grpo", "--model", sft, "--bench", "tomi", "--data", trainFile, "--mode", "simulation", "--out", dir, "--store", join(out, "store"),
  "--steps", String(values["grpo-steps"]), "--prompts", "8", "--group-size", "4", "--max-new-tokens", "16", "--temperature", "1",
  "--lr", "1e-4", "--kl", "0.01", "--clip-low", "0.2", "--clip-high", "0.2", "--seed", s, "--save-every", "100000", "--quiet",
];
const runs: [string, string, string[]][] = [
  ["GRPO", join(out, "grpo"), []],
  ["SofT-GRPO", join(out, "soft-grpo"), ["--soft", "--thinking-steps", String(values["thinking-steps"]), "--tau", "1", "--top-p", "0.9"]],
];
for (const [name, dir, extra] of runs) await run(name, [...grpoArgs(dir), ...extra]);

const accuracy = new Map<string, number>();
// SofT-GRPO is also scored as it was trained: thinking in soft tokens first (sampled at temperature 1).
const thinking = `SofT-GRPO, ${values["thinking-steps"]} soft tokens (T 1)`;
const evals: [string, string, string][] = [
  ["SFT", sft, ""],
  ...runs.map(([n, d]): [string, string, string] => [n, d, ""]),
  [thinking, join(out, "soft-grpo"), `&soft_thinking=${values["thinking-steps"]}&tau=1&soft_top_p=0.9`],
];
for (const [name, dir, options] of evals) {
  const json = join(out, `eval-${name.toLowerCase().replace(/[^a-z0-9-]+/g, "-")}.json`);
  const spec = `policy:${dir}?max_new_tokens=8${options}`;
  await run(`eval ${name}`, ["bench", "tomi", "--data", evalFile, "--agent", spec, "--mode", "simulation", "--concurrency", "32", "--store", join(out, "store"), "--json", json, "--quiet"]);
  accuracy.set(name, (JSON.parse(readFileSync(json, "utf8")) as BenchReport).accuracy);
}

interface StepLine {
  readonly step: number;
  readonly accuracy: number;
  readonly reward: number;
  readonly seconds: number;
}
const metrics = (dir: string) =>
  readFileSync(join(dir, "metrics.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StepLine);
const curves = new Map(runs.map(([name, dir]) => [name, metrics(dir)]));
const before = accuracy.get("SFT")!;
const lines = [
  `ToMi (generated), simulation mode; tiny preset, SFT ${values["sft-steps"]} steps on ${values.questions} questions; each GRPO run ${values["grpo-steps"]} steps of 8 prompts x 4 replies, lr 1e-4, KL 0.01, clip 0.2, seed ${seed}; SofT-GRPO with ${values["thinking-steps"]} soft tokens, tau 1, top-p 0.9.`,
  "",
  `| policy | held-out accuracy (${values.eval} questions) | change | rollout accuracy, first step -> last | GRPO wall time |`,
  "|:--|--:|--:|--:|--:|",
  `| SFT (start) | ${pct(before)} | | | |`,
  ...runs.map(([name]) => {
    const c = curves.get(name)!;
    const acc = accuracy.get(name)!;
    const secs = c.reduce((a, m) => a + m.seconds, 0);
    return `| ${name} | ${pct(acc)} | ${acc >= before ? "+" : ""}${(100 * (acc - before)).toFixed(1)} pts | ${pct(c[0]?.accuracy)} -> ${pct(c.at(-1)?.accuracy)} | ${secs.toFixed(0)} s |`;
  }),
  `| ${thinking} | ${pct(accuracy.get(thinking))} | ${accuracy.get(thinking)! >= before ? "+" : ""}${(100 * (accuracy.get(thinking)! - before)).toFixed(1)} pts | | |`,
  "",
  "Per step (rollout accuracy / mean reward):",
  "",
  `| step | ${runs.map(([n]) => n).join(" | ")} |`,
  `|--:|${runs.map(() => "--:").join("|")}|`,
  ...Array.from({ length: values["grpo-steps"] }, (_, i) => `| ${i + 1} | ${runs.map(([n]) => {
    const m = curves.get(n)![i];
    return m ? `${pct(m.accuracy)} / ${m.reward.toFixed(3)}` : "–";
  }).join(" | ")} |`),
  "",
  wallTimeLine((performance.now() - started) / 1000, timings),
  "",
];
const text = lines.join("\n");
writeFileSync(join(out, "results.md"), text);
process.stdout.write("\n" + text);

/**
 * Discrete GRPO against SofT-GRPO (issue 34) on a ToM world, from the same SFT policy with the
 * same budget: a policy of the tiny preset is SFT-trained on generated ToMi questions (or one of
 * the user's is taken as it is, `--start`: a policy with room to learn, e.g. demo:learn's SFT in
 * vanilla mode, is where the comparison says something), then
 * trained twice more with GRPO, once sampling its replies token by token and once thinking first
 * in soft tokens (`train grpo --soft`), same steps, prompts, group size, learning rate, KL and
 * seed. Each is evaluated with `socialworld bench tomi` on held-out generated questions (greedy,
 * token by token; SofT-GRPO also as it was trained, thinking in soft tokens first, at temperature
 * 1: `policy:DIR?soft_thinking=K`), and the table gives the accuracy
 * before and after, with each run's per-step rollout accuracy and reward (for SofT-GRPO the
 * rollouts think in soft tokens).
 *
 *   npm run table:softgrpo -- [--out DIR] [--questions N] [--sft-steps N] [--start DIR] [--mode M]
 *       [--constrain C] [--grpo-steps N] [--prompts N] [--group-size G] [--lr X] [--kl X]
 *       [--balance B] [--eval N] [--eval-file FILE] [--thinking-steps K] [--threads N] [--seed S]
 *
 * Every stage is the command line in a child process (cli-process.ts). Not a test.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { z } from "zod";
import { intArg, numArg } from "../cli/args.js";
import type { BenchReport } from "../benchmarks/report.js";
import { Rng } from "../worlds/core/rng.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { loadBenchmark } from "../worlds/registry.js";
import { generateTomi } from "../worlds/tomi/index.js";
import { percentCell as pct, socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { linePlot } from "./line-plot.js";
import { writeResults } from "./results-file.js";
import { scriptArgs } from "./script-args.js";
import { sftExample } from "./learn-recipe.js";

const USAGE = `node dist/measurements/soft-grpo-table.js [options]   (or: npm run table:softgrpo -- [options])

SFT on generated ToMi questions (tiny preset), or a policy of yours (--start), then discrete GRPO
and SofT-GRPO from that policy with the same budget; held-out accuracy before and after, by
question type against the world model's labels, and each run's per-step curve. The tables go to
the terminal and to OUT/results.md, the curves to OUT/curves.svg.

Options:
  --out DIR            where models, data and results go (default data/soft-grpo-table)
  --questions N        generated training questions (default 600)
  --sft-steps N        SFT steps, batch 16 (default 300)
  --start DIR          start both runs from this policy instead (no base, no SFT; never written
                       to), e.g. demo:learn's OUT/sft
  --mode M             simulation (default) or vanilla: how the questions are asked, in the
                       runs and the evaluations
  --constrain C        schema (default), options or off: the replies' grammar, in the runs
                       (train grpo --constrain) and the evaluations (policy:DIR?constrain=)
  --grpo-steps N       steps of each GRPO run (default 8)
  --prompts N          questions a step (default 8)
  --group-size G       replies a question (default 4)
  --lr X               learning rate of both runs (default 1e-4)
  --kl X               KL coefficient to the starting policy (default 0.01)
  --balance B          none (default) or type: the runs draw the question types in equal shares
  --eval N             held-out generated questions (default 200)
  --eval-file FILE     evaluate on this ToMi file instead (e.g. the official val split)
  --thinking-steps K   SofT-GRPO's soft tokens per reply (default 4)
  --threads N          CPU threads of every stage (default: one per core)
  --seed S             seed of every stage (default 1)
  --help               this text`;

const Options = z.object({
  out: z.string().default(join(packageRoot(), "data", "soft-grpo-table")),
  questions: intArg(20).default(600),
  "sft-steps": intArg(1).default(300),
  start: z.string().optional(),
  mode: z.enum(["simulation", "vanilla"]).default("simulation"),
  constrain: z.enum(["schema", "options", "off"]).default("schema"),
  "grpo-steps": intArg(1).default(8),
  prompts: intArg(1, 1024).default(8),
  "group-size": intArg(2, 256).default(4),
  lr: numArg().positive().default(1e-4),
  kl: numArg().nonnegative().default(0.01),
  balance: z.enum(["none", "type"]).default("none"),
  eval: intArg(10).default(200),
  "eval-file": z.string().optional(),
  "thinking-steps": intArg(1, 64).default(4),
  threads: intArg(1, 1024).optional(),
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

const threads = values.threads === undefined ? [] : ["--threads", String(values.threads)];
const mode = values.mode;
if (values.start !== undefined && !existsSync(join(values.start, "config.json"))) {
  process.stderr.write(`soft-grpo-table: --start ${values.start} is not a policy checkpoint folder (no config.json)\n`);
  process.exit(2);
}
if (values["eval-file"] !== undefined && !existsSync(values["eval-file"])) {
  process.stderr.write(`soft-grpo-table: --eval-file ${values["eval-file"]} does not exist\n`);
  process.exit(2);
}

// Training and held-out questions from different seeds of the generator.
const trainFile = join(out, "train.txt");
const evalFile = values["eval-file"] !== undefined ? resolve(values["eval-file"]) : join(out, "eval.txt");
const sftFile = join(out, "sft.jsonl");
{
  const t0 = performance.now();
  writeFileSync(trainFile, (await generateTomi(values.questions, seed)).txt);
  if (values["eval-file"] === undefined) writeFileSync(evalFile, (await generateTomi(values.eval, seed + 1_000_003)).txt);
  if (values.start === undefined) {
    const bench = await loadBenchmark("tomi");
    const lines: string[] = [];
    for (const item of await bench.load(trainFile)) lines.push(JSON.stringify(await sftExample(bench, item, mode)));
    writeFileSync(sftFile, Rng.seeded(`soft-grpo-table:${seed}`).shuffle(lines).join("\n") + "\n");
  }
  timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
}

const sft = values.start !== undefined ? resolve(values.start) : join(out, "sft");
if (values.start === undefined) {
  const base = join(out, "base");
  await run("base", ["model", "init", "--preset", "tiny", "--corpus", sftFile, "--tokenizer", "word", "--seed", s, "--out", base, "--force"]);
  await run("sft", [
    "train", "sft", "--model", base, "--data", sftFile, "--out", sft, "--steps", String(values["sft-steps"]), "--batch", "16",
    "--lr", "3e-3", "--min-lr", "3e-4", "--warmup", "20", "--prompt-loss", "0.1", "--seed", s, "--save-every", "100000", ...threads,
  ]);
}

// The same budget for both: steps, prompts, group size, learning rate, KL, clip, seed.
const grpoArgs = (dir: string) => [
  "train", "grpo", "--model", sft, "--bench", "tomi", "--data", trainFile, "--mode", mode, "--out", dir, "--store", join(out, "store"),
  "--steps", String(values["grpo-steps"]), "--prompts", String(values.prompts), "--group-size", String(values["group-size"]),
  "--max-new-tokens", "16", "--temperature", "1", "--constrain", values.constrain, "--balance", values.balance,
  "--lr", String(values.lr), "--kl", String(values.kl), "--clip-low", "0.2", "--clip-high", "0.2", "--seed", s, "--save-every", "100000", "--quiet", ...threads,
];
const runs: [string, string, string[]][] = [
  ["GRPO", join(out, "grpo"), []],
  ["SofT-GRPO", join(out, "soft-grpo"), ["--soft", "--thinking-steps", String(values["thinking-steps"]), "--tau", "1", "--top-p", "0.9"]],
];
for (const [name, dir, extra] of runs) await run(name, [...grpoArgs(dir), ...extra]);

const accuracy = new Map<string, number>();
const byType = new Map<string, Readonly<Record<string, number>>>();
// SofT-GRPO is also scored as it was trained: thinking in soft tokens first (sampled at temperature 1).
const thinking = `SofT-GRPO, ${values["thinking-steps"]} soft tokens (T 1)`;
const evals: [string, string, string][] = [
  ["SFT", sft, ""],
  ...runs.map(([n, d]): [string, string, string] => [n, d, ""]),
  [thinking, join(out, "soft-grpo"), `&soft_thinking=${values["thinking-steps"]}&tau=1&soft_top_p=0.9`],
];
for (const [name, dir, options] of evals) {
  const json = join(out, `eval-${name.toLowerCase().replace(/[^a-z0-9-]+/g, "-")}.json`);
  const spec = `policy:${dir}?max_new_tokens=8&constrain=${values.constrain}${options}`;
  await run(`eval ${name}`, ["bench", "tomi", "--data", evalFile, "--agent", spec, "--mode", mode, "--concurrency", "32", "--store", join(out, "store"), "--json", json, "--quiet", ...threads]);
  const report = JSON.parse(readFileSync(json, "utf8")) as BenchReport;
  // Against the world model's labels where the report has them (every ToMi file), as demo:learn scores.
  const labelled = report.worldModel.total > 0;
  accuracy.set(name, labelled ? report.worldModel.agentAccuracy : report.accuracy);
  if (labelled) byType.set(name, report.worldModel.agentAccuracyByType);
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
const evalName = values["eval-file"] !== undefined ? basename(values["eval-file"]) : `${values.eval} generated questions`;
const start = values.start !== undefined ? `from ${values.start}` : `tiny preset, SFT ${values["sft-steps"]} steps on ${values.questions} questions`;
const types = [...new Set([...byType.values()].flatMap((t) => Object.keys(t)))];
const lines = [
  `ToMi, ${mode} mode, replies under --constrain ${values.constrain}; ${start}; each GRPO run ${values["grpo-steps"]} steps of ${values.prompts} prompts x ${values["group-size"]} replies (${values.questions} generated training questions, --balance ${values.balance}), lr ${values.lr}, KL ${values.kl}, clip 0.2, seed ${seed}; SofT-GRPO with ${values["thinking-steps"]} soft tokens, tau 1, top-p 0.9. Held out: ${evalName}${byType.size > 0 ? ", against the world model's labels" : ""}.`,
  "",
  `| policy | held-out accuracy | change | rollout accuracy, first step -> last | GRPO wall time |`,
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
  ...(types.length === 0
    ? []
    : [
        "By question type:",
        "",
        `| policy | ${types.join(" | ")} |`,
        `|:--|${types.map(() => "--:").join("|")}|`,
        ...[...byType].map(([name, t]) => `| ${name} | ${types.map((k) => pct(t[k])).join(" | ")} |`),
        "",
      ]),
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
writeResults(out, text, {
  "curves.svg": linePlot([
    { title: "rollout accuracy", x: "step", series: runs.map(([n]) => ({ name: n, points: curves.get(n)!.map((m) => [m.step, m.accuracy] as const) })) },
    { title: "mean reward", x: "step", series: runs.map(([n]) => ({ name: n, points: curves.get(n)!.map((m) => [m.step, m.reward] as const) })) },
  ]),
});

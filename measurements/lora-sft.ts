/**
 * LoRA against full fine-tuning, as a user runs them: a base policy of the `10m` preset trained
 * from scratch on generated ToMi questions, then fine-tuned on a task it was not trained on
 * (generated Hi-ToM questions, by default) twice from that same base, with the same data order
 * and steps: once every weight (`train sft --model BASE`), once a LoRA adapter (`train sft --model
 * BASE --lora ...`). Prints, and writes to OUT/results.md, the table
 * `| run | trainable parameters | weights, gradients and AdamW moments | final loss | vs full | s/step |`
 * where the final loss is the mean of the last 10 steps' losses. The acceptance line of issue 26:
 * LoRA's final loss within 10% of full fine-tuning's.
 *
 *   npm run build && node dist/measurements/lora-sft.js [--out DIR] [--preset 10m] [--base-steps N]
 *       [--steps N] [--lora SPEC] [--lr-full X] [--lr-lora X] [--seed S]
 *
 * Every stage is the command line in a child process (measurements/cli-process.ts). Not a test.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg, numArg } from "../cli/args.js";
import { questionText } from "../agents/policy/question-prompt.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { loadBenchmark, loadGenerator } from "../worlds/registry.js";
import { socialworld, type StageTiming } from "./cli-process.js";
import { writeResults } from "./results-file.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/lora-sft.js [options]

Trains a base policy on generated ToMi questions, then fine-tunes it on other generated questions
twice (every weight; a LoRA adapter) on the same data and steps, and prints the table of
trainable parameters, memory, final loss and seconds per step.

Options:
  --out DIR          where the data, models and results go (default data/lora-sft)
  --preset NAME      the base's size (default 10m)
  --base-steps N     SFT steps of the base, from scratch (default 150)
  --steps N          fine-tuning steps of each run (default 100)
  --questions N      generated questions of each set (default 1200)
  --finetune WORLD   the fine-tuning task's generated questions: hitom (default) or tomi (the
                     base's own task, other stories)
  --base DIR         a base trained before (by this script: OUT/base) instead of training one
  --lora SPEC        the adapter (default r=8,alpha=16,dropout=0.05,targets=all-linear)
  --lr-full X        full fine-tuning's peak learning rate (default 3e-4)
  --lr-lora X        LoRA's peak learning rate (default 2e-3)
  --batch N          examples per step (default 8)
  --seed S           seed of every stage (default 1)
  --help             this text`;

const values = scriptArgs({
  name: "lora-sft",
  usage: USAGE,
  schema: z.object({
    out: z.string().default(join(packageRoot(), "data", "lora-sft")),
    preset: z.string().default("10m"),
    "base-steps": intArg(1).default(150),
    steps: intArg(10).default(100),
    questions: intArg(10).default(1200),
    finetune: z.enum(["hitom", "tomi"]).default("hitom"),
    base: z.string().min(1).optional(),
    lora: z.string().default("r=8,alpha=16,dropout=0.05,targets=all-linear"),
    "lr-full": numArg().positive().default(3e-4),
    "lr-lora": numArg().positive().default(2e-3),
    batch: intArg(1).default(8),
    seed: intArg(0, 2 ** 32 - 1).default(1),
  }),
});
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const seed = String(values.seed);

// 1. Data: generated questions as the policy is asked them (vanilla mode), with their labels; the
// base's set (ToMi) and the fine-tuning set come from different seeds.
async function questions(world: string, name: string, genSeed: number): Promise<string> {
  const generator = await loadGenerator(world);
  const made = await generator.generate(values.questions, genSeed, join(out, world === "tomi" ? `${name}.txt` : `${name}.json`));
  for (const f of made.files) writeFileSync(f.path, f.text);
  const bench = await loadBenchmark(world);
  const lines: string[] = [];
  for (const item of await bench.load(made.data)) lines.push(JSON.stringify({ prompt: await questionText(bench.task(item, "vanilla")), response: item.answer }));
  const file = join(out, `${name}.jsonl`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}
const pre = await questions("tomi", "base-data", values.seed);
const ft = await questions(values.finetune, "finetune-data", values.seed + 1000);

// 2. The base, then the two fine-tuning runs from it.
const init = join(out, "init");
const base = values.base ? resolve(values.base) : join(out, "base");
const common = ["--batch", String(values.batch), "--seed", seed, "--save-every", "100000", "--quiet"];
if (!values.base) {
  await run("init", ["model", "init", "--preset", values.preset, "--corpus", pre, "--seed", seed, "--out", init, "--force"]);
  await run("base", ["train", "sft", "--model", init, "--data", pre, "--out", base, "--steps", String(values["base-steps"]), "--lr", "3e-3", "--min-lr", "3e-4", ...common]);
}
const fine = ["--data", ft, "--steps", String(values.steps), "--warmup", String(Math.floor(values.steps / 10)), ...common];
const fullErr = await run("full", ["train", "sft", "--model", base, "--out", join(out, "full"), "--lr", String(values["lr-full"]), ...fine]);
const loraErr = await run("lora", ["train", "sft", "--model", base, "--out", join(out, "lora"), "--lora", values.lora, "--lr", String(values["lr-lora"]), ...fine]);

// 3. The table.
interface Row {
  readonly run: string;
  readonly trainable: string;
  readonly memory: string;
  readonly loss: number;
  readonly first: number;
  readonly secondsPerStep: number;
}
function row(name: string, dir: string, stderr: string): Row {
  const steps = readFileSync(join(dir, "train_log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { loss: number; seconds: number });
  const last = steps.slice(-10);
  const summary = stderr.split("\n").find((l) => /trainable parameters|training all/.test(l)) ?? "";
  const trainable = /([\d.]+ [kMB]?) trainable parameters/.exec(summary)?.[1] ?? /training all ([\d.]+ [kMB]?) parameters/.exec(summary)?.[1] ?? "?";
  const memory = /memory .*? \+ ([\d.]+ \w+) adapter/.exec(summary)?.[1] ?? /: ([\d.]+ \w+) for weights/.exec(summary)?.[1] ?? "?";
  return {
    run: name,
    trainable,
    memory,
    loss: last.reduce((a, s) => a + s.loss, 0) / last.length,
    first: steps[0]!.loss,
    secondsPerStep: steps.reduce((a, s) => a + s.seconds, 0) / steps.length,
  };
}
const full = row("full fine-tuning", join(out, "full"), fullErr);
const lora = row(`LoRA ${values.lora}`, join(out, "lora"), loraErr);
const ratio = lora.loss / full.loss;
const table = [
  `| run | trainable parameters | weights, gradients and AdamW moments | first loss | final loss (last 10 steps) | vs full | s/step |`,
  `|---|---|---|---|---|---|---|`,
  ...[full, lora].map((r) => `| ${r.run} | ${r.trainable} | ${r.memory} | ${r.first.toFixed(4)} | ${r.loss.toFixed(4)} | ${(r.loss / full.loss).toFixed(3)} | ${r.secondsPerStep.toFixed(2)} |`),
  "",
  `Base: ${values.base ? base : `the ${values.preset} preset, ${values["base-steps"]} SFT steps from scratch on ${values.questions} generated ToMi questions (seed ${values.seed})`}; ` +
    `fine-tuning: ${values.steps} steps of ${values.batch} on ${values.questions} generated ${values.finetune === "hitom" ? "Hi-ToM" : "ToMi"} questions (seed ${values.seed + 1000}), peak lr ${values["lr-full"]} (full) and ${values["lr-lora"]} (LoRA). ` +
    `LoRA's final loss is ${((ratio - 1) * 100).toFixed(1)}% ${ratio >= 1 ? "above" : "below"} full fine-tuning's (target: within 10%): ${Math.abs(ratio - 1) <= 0.1 || ratio < 1 ? "met" : "not met"}.`,
  `Wall time: ${timings.map((t) => `${t.stage} ${t.seconds.toFixed(0)} s`).join(", ")}.`,
].join("\n");
writeResults(out, table + "\n");

/**
 * The economy's training recipe on a CPU, end to end (issue 29's Base vs trained table): a small
 * policy trained from scratch to answer as a household, then GRPO with the seed's recipe, then
 * `economy:compare` of the two against the heuristic households.
 *
 *   npm run demo:economy -- [--out DIR] [--examples N] [--teacher ceiling|heuristic] [--sft-steps N]
 *       [--grpo-steps N] [--grpo-lr X] [--grpo-advantage-std group|batch|none] [--points K] [--months M] [--seed S]
 *
 * 1. data (economy-sft-data.ts): N decision points of a heuristic run of the default economy
 *    (seed S + 2: neither GRPO's points, world seed S + 3, nor the comparison's, seed 1), each the
 *    household's prompt and the teacher's decision as the JSON the prompt asks for.
 * 2. base: `model init --preset 200k` (a BPE tokenizer built from those examples; a 1,024-token
 *    context, since a household's prompt is ~460 tokens).
 * 3. SFT: `train sft` on the examples, the loss on the reply. This is "Base".
 * 4. GRPO: `train grpo --world economy --preset econagent` over it (LoRA r=8, alpha=16, all linear
 *    layers; group 2, temperature 0.7, entropy 0.02, KL 0.005, 4 prompts a step, advantages scaled
 *    by each group's reward std), rollouts under the decision's JSON schema (`--constrain schema`,
 *    the trainer's default). This is "trained". `--grpo-advantage-std batch` is the guard for long
 *    runs against consumption's collapse (docs/worlds/economy.md).
 * 5. `economy-compare` of base, trained and the heuristic: the seed's columns on K decision points
 *    of seed 1's economy, and each agent's own economy of 100 households for M months (Phillips,
 *    Okun, and the spread of its decisions there). Policies decode greedily under the schema.
 *
 * Every stage is the command line in a child process (cli-process.ts); the tables go to the
 * terminal and to OUT/results.md with the wall time of each stage and the load average. Not a test.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { ADVANTAGE_STD } from "../trainers/grpo/config.js";
import { economyParams } from "../worlds/economy/index.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { economySftData, TEACHERS } from "./economy-sft-data.js";
import { writeResults } from "./results-file.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/economy-demo.js [options]   (or: npm run demo:economy -- [options])

Trains a household policy from scratch (SFT on a teacher's decisions: "Base"), then GRPO with
the econagent preset (a LoRA adapter over Base: "trained"), and compares the two with the
heuristic households (npm run economy:compare); the tables go to the terminal and OUT/results.md.

Options:
  --out DIR          where the models, data, store and results go (default data/economy-demo)
  --examples N       SFT examples (decision points of seed S + 2's economy; GRPO's are seed
                     S + 3's, the comparison's seed 1's; default 3000)
  --teacher T        ceiling (the ceiling's decision where it beats the heuristic's by --margin,
                     else the heuristic's; default) or heuristic
  --margin X         reward margin of the ceiling teacher (default 0.05)
  --sft-steps N      SFT optimizer steps, batch 16 (default 150)
  --grpo-steps N     GRPO steps of 4 prompts x 2 replies (default 20)
  --grpo-lr X        GRPO learning rate of the adapter (default 5e-4)
  --grpo-advantage-std group|batch|none
                     GRPO's advantage scale (default the preset's, group; batch: the guard
                     against consumption's collapse in long runs)
  --points K         decision points of the comparison (default 2000: on 200, the paired reward
                     difference of base and trained has a standard error of about 0.004, more
                     than GRPO's gain here)
  --months M         months of each agent's own economy of 100 households (default 48)
  --seed S           seed of every stage (default 0)
  --help             this text`;

const values = scriptArgs({
  name: "economy-demo",
  usage: USAGE,
  schema: z.object({
    out: z.string().default(join(packageRoot(), "data", "economy-demo")),
    examples: intArg(16).default(3000),
    teacher: z.enum(TEACHERS).default("ceiling"),
    margin: z.coerce.number().min(0).max(1).default(0.05),
    "sft-steps": intArg(1).default(150),
    "grpo-steps": intArg(1).default(20),
    "grpo-lr": z.coerce.number().positive().default(5e-4),
    "grpo-advantage-std": z.enum(ADVANTAGE_STD).optional(),
    points: intArg(1).default(2000),
    months: intArg(24).default(48),
    seed: intArg(0, 2 ** 31).default(0),
  }),
});

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const store = join(out, "store");
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();
const load0 = loadavg()[0]!;
const seed = values.seed;
const s = String(seed);

// 1. Data.
const t0 = performance.now();
const data = economySftData({ params: economyParams(), seed: seed + 2, count: values.examples, teacher: values.teacher, margin: values.margin });
const sftFile = join(out, "sft.jsonl");
writeFileSync(sftFile, data.examples.map((e) => JSON.stringify(e)).join("\n") + "\n");
timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
process.stderr.write(`[data] ${data.examples.length} examples (${data.fromCeiling} of them the ceiling's decision), teacher reward ${data.reward.toFixed(3)} -> ${sftFile}\n`);

// 2-3. Base: a policy from scratch, SFT'd on the teacher.
const init = join(out, "init");
const base = join(out, "base");
await run("init", ["model", "init", "--preset", "200k", "--corpus", sftFile, "--seed", s, "--out", init, "--force"]);
await run("sft", [
  "train", "sft", "--model", init, "--data", sftFile, "--out", base, "--steps", String(values["sft-steps"]), "--batch", "16",
  "--lr", "3e-3", "--min-lr", "1e-4", "--warmup", "10", "--weight-decay", "0.01", "--seed", s, "--save-every", "100000", "--threads", "1", "--quiet",
]);

// 4. Trained: GRPO with the seed's recipe, a LoRA adapter over Base. The preset resumes OUT's
// latest checkpoint; the demo trains afresh, as it does Base (a run of other --grpo-* settings
// left there would be refused): --resume off, which train grpo does under OUT/grpo's lock and
// which removes only the checkpoints (a folder not deleted whole, a run in progress refused).
const trained = join(out, "grpo");
await run("grpo", [
  "train", "grpo", "--model", base, "--world", "economy", "--preset", "econagent", "--resume", "off", "--points", "500", "--world-seed", String(seed + 3),
  "--out", trained, "--store", store, "--steps", String(values["grpo-steps"]), "--lr", String(values["grpo-lr"]), "--max-new-tokens", "24",
  "--seed", s, "--save-every", "100000", "--threads", "1", "--quiet",
  ...(values["grpo-advantage-std"] ? ["--advantage-std", values["grpo-advantage-std"]] : []),
]);

// 5. The comparison, as `npm run economy:compare` runs it.
const policy = (dir: string) => `policy:${dir}?max_new_tokens=24`;
const compareArgs = [
  "--agents", `base=${policy(base)},trained=${policy(trained)},heuristic`, "--points", String(values.points), "--point-seed", "1", "--households", "100", "--months", String(values.months), "--seed", s,
  "--replies", join(out, "replies.jsonl"),
];
const table = await compare(compareArgs);

const grpoLog = readFileSync(join(trained, "metrics.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { step: number; reward?: number });
const rewards = grpoLog.filter((r) => typeof r.reward === "number").map((r) => r.reward!);
const half = Math.max(1, Math.floor(rewards.length / 2));
const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const total = (performance.now() - started) / 1000;
const text = [
  `Policy preset 200k, seed ${seed}: SFT ${values["sft-steps"]} steps (batch 16) on ${data.examples.length} examples of the ${values.teacher} teacher` +
    (values.teacher === "ceiling" ? ` (${data.fromCeiling} of them the ceiling's decision, margin ${values.margin})` : "") +
    `, teacher reward ${data.reward.toFixed(3)}; GRPO ${values["grpo-steps"]} steps of the econagent preset (lr ${values["grpo-lr"]}` +
    (values["grpo-advantage-std"] ? `, --advantage-std ${values["grpo-advantage-std"]}` : "") +
    `), ` +
    `mean rollout reward ${avg(rewards.slice(0, half)).toFixed(3)} in the first half of the steps, ${avg(rewards.slice(half)).toFixed(3)} in the second.`,
  "",
  `\`node dist/measurements/economy-compare.js ${compareArgs.map((a) => (a.includes("?") || a.includes(",") ? `'${a}'` : a)).join(" ")}\``,
  "",
  table,
  wallTimeLine(total, timings) + ` Load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end (2 cores).`,
  "",
].join("\n");
writeResults(out, text);

/** economy-compare in a child process (its progress to this terminal); resolves with its tables. */
function compare(args: string[]): Promise<string> {
  process.stderr.write(`\n[compare] node dist/measurements/economy-compare.js ${args.join(" ")}\n`);
  const t = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(packageRoot(), "dist", "measurements", "economy-compare.js"), ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.on("error", fail);
    child.on("exit", (code) => {
      timings.push({ stage: "compare", seconds: (performance.now() - t) / 1000 });
      if (code === 0) done(text);
      else fail(new Error(`compare: economy-compare exited with ${code}`));
    });
  });
}

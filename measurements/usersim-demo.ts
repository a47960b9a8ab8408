/**
 * The user-simulation recipe, end to end on a CPU (issue 30): a policy trained from scratch to
 * write a simulated user's latent states and then its reply, and the four policy rows of the
 * usersim table (base, SFT, response-only GRPO, hierarchical GRPO) measured on the generated test
 * split beside the world's baselines.
 *
 *   npm run demo:usersim -- [--out DIR] [--n N] [--data-seed S] [--seed S] [--sft-steps N]
 *       [--grpo-steps N] [--prompts N] [--group-size G] [--eval N] [--threads N]
 *
 * 1. data: `generate usersim --n N --seed S` (80/10/10 splits); the train split's records as SFT
 *    examples on their ground-truth hierarchies (usersim-recipe.ts), a share of them also
 *    response-only. The hierarchy is worlds/usersim/hierarchies/compact.json: the default's six
 *    states with one-line descriptions, so that prompt and reply fit a small policy's context
 *    (the offline judge reads the tags, not their descriptions).
 * 2. base: `model init --preset 1m --tokenizer word` on those examples (every word one token, so
 *    a target's name is the same tokens in the profile, the states and the reply).
 * 3. SFT: `train sft` with the prompts' tokens in the loss at a tenth of the reply's weight.
 * 4. GRPO from that SFT, twice with the same budget (steps, prompts, group size, learning rate,
 *    KL): hierarchical (the compact hierarchy: each state and the response scored by the offline
 *    judge, their mean the reward) and response-only (worlds/usersim/hierarchies/response-only.json:
 *    the reply alone, scored by its ROUGE-L). Rollouts are sampled under the reply's grammar
 *    (constrained decoding: every rollout parses).
 * 5. `usersim-table.js` on the first --eval records of the test split: random, heuristic and
 *    simulation, then base, SFT, response-only GRPO (asked response-only), SFT asked
 *    response-only (its starting point), hierarchical GRPO; greedy, constrained to the grammar.
 *
 * Every stage is a child process (cli-process.ts); the table goes to the terminal and to
 * OUT/results.md with the wall time, the machine's load average and the learning curves. Not a test.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { readHierarchyFile } from "../worlds/usersim/index.js";
import { measurementScript, socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { readRunLog, tenthMeans } from "./run-logs.js";
import { loadAverageLine, writeResults } from "./results-file.js";
import { USERSIM_CONTEXT as CONTEXT, USERSIM_RECIPE_HELP, USERSIM_RECIPE_OPTIONS, usersimBaseArgs, usersimGrpoArgs, usersimSftArgs, writeUsersimSft } from "./usersim-recipe.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/usersim-demo.js [options]   (or: npm run demo:usersim -- [options])

Trains a small policy from scratch on generated usersim records (SFT on the ground-truth
hierarchies, then response-only and hierarchical GRPO with the same budget) and prints the
usersim table on the test split: the baselines and the base, SFT and GRPO policies; the table
goes to the terminal and to OUT/results.md.

Options:
  --out DIR          models, data, store and results (default data/usersim-demo)
  --n N              generated records (default 2000; train 80%, test 10%)
  --data-seed S      the generator's seed (default 0, the seed of the results page's baselines)
  --seed S           the seed of the model, SFT and GRPO (default 1)
  --sft-steps N      SFT optimizer steps of 8 examples (default 150)
  --response-only X  the share of training records also written response-only (default 0.5)
  --grpo-steps N     GRPO steps of each mode (default 4)
${USERSIM_RECIPE_HELP}
  --threads N        CPU threads of every stage (default 1)
  --help             this text`;

const values = scriptArgs({
  name: "usersim-demo",
  usage: USAGE,
  schema: z.object({
    ...USERSIM_RECIPE_OPTIONS,
    out: z.string().default(join(packageRoot(), "data", "usersim-demo")),
    "sft-steps": intArg(1).default(150),
    "response-only": z.coerce.number().min(0).max(1).default(0.5),
    "grpo-steps": intArg(0).default(4),
  }),
});

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const store = join(out, "store");
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();
const loadBefore = loadavg();
const hierarchyFile = join(packageRoot(), "worlds", "usersim", "hierarchies", "compact.json");
const responseOnlyFile = join(packageRoot(), "worlds", "usersim", "hierarchies", "response-only.json");
const MAX_NEW = { hierarchical: 320, responseOnly: 192 };

// 1. Data.
const data = join(out, "usersim.jsonl");
await run("generate", ["generate", "usersim", "--n", String(values.n), "--seed", String(values["data-seed"]), "--out", data]);
const t0 = performance.now();
const sftFile = join(out, "sft.jsonl");
const counts = await writeUsersimSft(data, sftFile, { hierarchy: readHierarchyFile(hierarchyFile), responseOnlyShare: values["response-only"], seed: values.seed });
timings.push({ stage: "sft data", seconds: (performance.now() - t0) / 1000 });
process.stderr.write(`[sft data] ${counts.records} train records: ${counts.hierarchical} hierarchical and ${counts.responseOnly} response-only examples -> ${sftFile}\n`);

// 2-3. Base and SFT.
const base = join(out, "base");
const sft = join(out, "sft");
await run("base", usersimBaseArgs(sftFile, base, values.seed));
await run("sft", usersimSftArgs(base, sftFile, sft, values["sft-steps"], values.seed, values.threads));

// 4. GRPO, both modes from the same SFT with the same budget.
const grpo = { hierarchical: join(out, "grpo-hierarchical"), responseOnly: join(out, "grpo-response-only") };
if (values["grpo-steps"] > 0) {
  for (const mode of ["responseOnly", "hierarchical"] as const) {
    await run(`GRPO ${mode === "hierarchical" ? "hierarchical" : "response-only"}`, usersimGrpoArgs({
      model: sft, data, hierarchy: mode === "hierarchical" ? hierarchyFile : responseOnlyFile, out: grpo[mode], store, steps: values["grpo-steps"],
      prompts: values.prompts, groupSize: values["group-size"], maxNewTokens: MAX_NEW[mode], lr: values.lr, seed: values.seed, threads: values.threads,
    }));
  }
}

// 5. The table.
const policy = (dir: string, maxNew: number) => `policy:${dir}?max_new_tokens=${maxNew}`;
const rows: [string, string, string?][] = [
  ["base", policy(base, MAX_NEW.hierarchical)],
  ["SFT", policy(sft, MAX_NEW.hierarchical)],
  ["SFT (asked response-only)", policy(sft, MAX_NEW.responseOnly), responseOnlyFile],
];
if (values["grpo-steps"] > 0) {
  rows.push(["response-only GRPO", policy(grpo.responseOnly, MAX_NEW.responseOnly), responseOnlyFile]);
  rows.push(["hierarchical GRPO", policy(grpo.hierarchical, MAX_NEW.hierarchical)]);
}
const tableMd = join(out, "table.md");
const tableArgs = [
  "--n", String(values.n), "--seed", String(values["data-seed"]), "--split", "test", "--limit", String(values.eval), "--hierarchy", hierarchyFile,
  "--policies", rows.map(([label, spec]) => `${label}=${spec}`).join(","),
  "--hierarchies", rows.filter((r) => r[2]).map(([label, , file]) => `${label}=${file}`).join(","),
  "--md", tableMd,
];
await measurementScript("table", "usersim-table", tableArgs, timings);

// The learning curves: SFT loss by tenths, GRPO's mean reward per step.
const curves: string[] = [];
const sftLoss = tenthMeans(readRunLog(join(sft, "train_log.jsonl")), "loss");
if (sftLoss.length) curves.push(`- SFT loss (mean over each tenth of the run): ${sftLoss.map((p) => p.mean.toFixed(3)).join(", ")}`);
for (const [name, dir] of [["response-only GRPO", grpo.responseOnly], ["hierarchical GRPO", grpo.hierarchical]] as const) {
  const log = readRunLog(join(dir, "metrics.jsonl")).filter((r) => typeof r.reward === "number");
  if (log.length) curves.push(`- ${name}, mean reward per step: ${log.map((r) => (r.reward as number).toFixed(3)).join(", ")}`);
}
const total = (performance.now() - started) / 1000;
const loadAfter = loadavg();
const config = JSON.parse(readFileSync(join(base, "config.json"), "utf8")) as { vocab_size: number };
const text = [
  `Policy preset 1m (vocabulary ${config.vocab_size}, context ${CONTEXT}), seed ${values.seed}; ${counts.records} training records of generate usersim --n ${values.n} --seed ${values["data-seed"]} ` +
    `(${counts.hierarchical} hierarchical and ${counts.responseOnly} response-only SFT examples); SFT ${values["sft-steps"]} steps of 8; ` +
    `GRPO ${values["grpo-steps"]} steps of ${values.prompts} records x ${values["group-size"]} replies each mode, lr ${values.lr}; hierarchy compact.json; greedy, constrained to the reply's grammar:`,
  "",
  readFileSync(tableMd, "utf8").trimEnd(),
  "",
  wallTimeLine(total, timings),
  loadAverageLine(loadBefore, loadAfter),
  "",
  ...curves,
  "",
].join("\n");
writeResults(out, text);

/**
 * The learning recipe, end to end: a policy trained from scratch that answers ToMi's belief
 * questions, evaluated on files it never trained on. Issue 27's headline run.
 *
 *   npm run demo:learn -- [--out DIR] [--questions N] [--sft-steps N] [--grpo-steps N] [--grpo-mode M] [--grpo-questions N] [--seed S]
 *       [--balance on|off] [--vanilla-share X] [--context world|self|self-latest] [--reword X] [--val FILE] [--paraphrased FILE] [--val-limit N] [--reuse]
 *
 * 1. data (learn-recipe.ts): N questions of new ToMi stories (the world's generator, seeded),
 *    varied beyond ToMi's own file so that the policy learns the task and not the file: half the
 *    stories name their containers plainly ("envelope", as ParaphrasedToMi does; ToMi colours
 *    every one), a third say where a container stands; as many of each question type. Each
 *    question is written as the policy is asked it in simulation mode (the compact socialized
 *    context, worlds/tomi/compact-context.ts, then the question), and a share of them also in
 *    vanilla mode (the story, then the question), with the world model's label.
 * 2. base: `model init --preset 1m --tokenizer word` on those prompts (every word one token, so a
 *    container's name is the same tokens in the context and in the answer).
 * 3. SFT: `train sft` on the mixed file, with the prompts' tokens in the loss at a tenth of the
 *    answer's weight (`--prompt-loss 0.1`: a policy from scratch learns to read and copy from
 *    every token of its prompts, not only from the two or three of each answer).
 * 4. GRPO (learn-grpo.ts): `train grpo --bench tomi --mode vanilla --skip-solved --balance type`
 *    on the first questions of the generated file, reward the judge's exact match, rollouts on
 *    the questions SFT still gets wrong in vanilla mode (in simulation mode it gets almost none
 *    wrong), every type in equal shares, a share of the solved ones kept, a KL to SFT.
 *    In simulation mode a policy answers by citing a line of the compact context (its title, then
 *    its place: worlds/core/compact-context.ts); in vanilla mode with one of the story's
 *    containers (`constrain=options` in rollouts and in the evaluations): the question asks for a
 *    container exactly as the story writes it, and a policy free to spell would also score its
 *    misspellings ("blue_crate" from "blue_suitcase" and "red_crate"), which say nothing of whose
 *    belief it read.
 * 5. Evaluations, each `socialworld bench tomi --agent ...` as a user runs it: the random agent,
 *    the base, SFT and GRPO policies, and the symbolic agent, on ToMi val and ParaphrasedToMi
 *    val_600 (never trained on: no sentence of either file is in the training stories' grammar
 *    of the paraphrases), in simulation and vanilla modes, scored against the world model's labels
 *    by question type (report.worldModel.agentAccuracyByType).
 *
 * Every stage is the command line in a child process (cli-process.ts); each policy stays a
 * checkpoint folder that `bench --agent policy:DIR` runs. The tables go to the terminal and to
 * OUT/results.md, the learning curves to OUT/curves.md. Not a test.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { CONTEXT_SOURCES, writtenOrder } from "../agents/policy/options.js";
import type { BenchReport } from "../benchmarks/report.js";
import { DeviceChoiceSchema, MatmulPrecisionSchema } from "../models/device-choice.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { percentCell as pct, socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { RECIPE_GRPO_STEPS, recipeGrpoArgs, recipeGrpoMode } from "./learn-grpo.js";
import { RECIPE_BATCH, RECIPE_PRESET, recipeSft, recipeSftData } from "./learn-recipe.js";
import { PRESETS } from "../models/presets.js";
import { writeResults } from "./results-file.js";
import { readRunLog, tenthMeans } from "./run-logs.js";
import { scriptArgs } from "./script-args.js";
import { keptStage, trainStage } from "./stage-record.js";
import { tomDataPath } from "./tom-data.js";

const USAGE = `node dist/measurements/learn-demo.js [options]   (or: npm run demo:learn -- [options])

Trains a policy from scratch on generated ToMi stories (SFT, then GRPO on what SFT still gets
wrong) and evaluates the random agent, the base, SFT and GRPO policies and the symbolic agent on
ToMi val and ParaphrasedToMi val_600, in simulation and vanilla modes, by question type against the
world model's labels; the tables go to the terminal and to OUT/results.md. With --world hitom, the
same on generated Hi-ToM stories, evaluated on the Hi-ToM dev file by order.

Options:
  --world W          tomi (default) or hitom
  --out DIR          where the models, data, store and results go (default data/learn-demo,
                     data/learn-demo-hitom for hitom)
  --questions N      generated training questions (default 30000; hitom 20000)
  --sft-steps N      SFT optimizer steps, of --batch examples (default 2500; hitom 1200)
  --grpo-steps N     GRPO steps (default 30 in vanilla mode, 10 in simulation mode; 0: no GRPO)
  --grpo-mode M      the mode GRPO trains in: vanilla (ToMi's default: the raw story, where SFT
                     leaves the most wrong) or simulation (Hi-ToM's, and wherever vanilla mode is
                     not trained)
  --grpo-questions N GRPO's questions: the first N of the training file (default 12000 in vanilla
                     mode, all in simulation mode); those SFT answers right are left out but for
                     a share
  --preset P         the policy's size (a model init preset; default 1m: 0.9M parameters; 10m is
                     for the GPU)
  --batch N          SFT examples per step (default 32)
  --lr X             SFT's peak learning rate (default 3e-3)
  --agents LIST      the agents evaluated, of random, base, sft, grpo, symbolic (default all;
                     grpo with a GRPO stage only)
  --seed S           seed of every stage (default 1)
  --balance on|off   as many questions of each type (default on) or the generator's own mix
  --vanilla-share X  the share of questions also written in vanilla mode (default 0.5; hitom 0:
                     its stories do not fit the policy's 1,024-token window, and vanilla mode
                     is evaluated only when it is trained)
  --context C        who writes the simulation-mode context: world (default; the policy cites a
                     line of the world model's compact context), self (the policy reads the
                     story, writes who saw the asked object where, then answers; Hi-ToM's
                     trace adds who left it and who was told where; evaluated as
                     policy:DIR?context=self) or self-latest (the same, the
                     trace latest first); GRPO in simulation mode is asked the same prompt
  --reword X         the share of the training stories' sentences whose wording is drawn from
                     other everyday ones ("Ella walked into the den.", "The crate holds the
                     lime."; ToMi's own among them; default 0: ToMi's wording only; ToMi only);
                     the stories, questions and labels stay the same
  --val FILE         evaluation file (default: the shared fb_all_val.txt; hitom: Hi-ToM_dev.json)
  --paraphrased FILE ParaphrasedToMi file (default: the shared val_600.txt; not with hitom)
  --val-limit N      evaluate on the first N questions of each file only (default: all)
  --device D         where SFT, GRPO and the policies' evaluations run: cpu (default), cuda or
                     auto, as the commands' --device; --precision fp32|tf32|bf16 on the GPU
  --reuse            keep OUT's base, SFT and GRPO policies where a finished run trained them as
                     this one asks (SFT: the same data, steps and seed; GRPO: the same SFT policy,
                     mode, steps, questions and seed), train the others again, and run the evaluations
  --help             this text`;

// The agents a run can evaluate, in the tables' order.
const EVALUATED = ["random", "base", "sft", "grpo", "symbolic"] as const;

const values = scriptArgs({
  name: "learn-demo",
  usage: USAGE,
  schema: z.object({
    world: z.enum(["tomi", "hitom"]).default("tomi"),
    out: z.string().optional(),
    questions: intArg(60).optional(),
    "sft-steps": intArg(1).optional(),
    "grpo-steps": intArg(0).optional(),
    "grpo-mode": z.enum(["simulation", "vanilla"]).optional(),
    "grpo-questions": intArg(1).optional(),
    seed: intArg(0, 2 ** 32 - 1).default(1),
    preset: z.enum(Object.keys(PRESETS) as [string, ...string[]]).default(RECIPE_PRESET),
    batch: intArg(1, 4096).default(RECIPE_BATCH),
    lr: z.coerce.number().positive().max(1).optional(),
    agents: z
      .string()
      .optional()
      .transform((list, ctx) => {
        if (list === undefined) return undefined;
        const names = list.split(",").map((n) => n.trim().toLowerCase());
        for (const n of names) {
          if (!(EVALUATED as readonly string[]).includes(n)) ctx.addIssue({ code: "custom", message: `unknown agent "${n}" (one of ${EVALUATED.join(", ")})` });
        }
        return new Set(names);
      }),
    balance: z.enum(["on", "off"]).default("on"),
    "vanilla-share": z.coerce.number().min(0).max(1).optional(),
    context: z.enum(CONTEXT_SOURCES).default("world"),
    reword: z.coerce.number().min(0).max(1).default(0),
    val: z.string().optional(),
    paraphrased: z.string().optional(),
    "val-limit": intArg(1).optional(),
    reuse: z.boolean().default(false),
    // Passed on to the commands' --device and --precision.
    device: DeviceChoiceSchema.default("cpu"),
    precision: MatmulPrecisionSchema.optional(),
  }),
});
const world = values.world;
const out = resolve(values.out ?? join(packageRoot(), "data", world === "tomi" ? "learn-demo" : "learn-demo-hitom"));
if (world === "hitom" && values.paraphrased !== undefined) {
  process.stderr.write("learn-demo: --paraphrased is ToMi's; Hi-ToM is evaluated on --val only\n");
  process.exit(2);
}
const writesContext = writtenOrder(values.context) !== undefined;
if (world === "hitom" && values.reword > 0) {
  process.stderr.write("learn-demo: --reword is ToMi's (Hi-ToM's generator has one wording)\n");
  process.exit(2);
}
const evalSets: (readonly [string, string])[] =
  world === "tomi"
    ? [
        ["ToMi val", resolve(values.val ?? tomDataPath("tomi", "original", "fb_all_val.txt"))],
        ["ParaphrasedToMi val_600", resolve(values.paraphrased ?? tomDataPath("tomi", "paraphrased_symbolictom", "val_600.txt"))],
      ]
    : [["Hi-ToM dev", resolve(values.val ?? tomDataPath("hitom", "Hi-ToM_dev.json"))]];
const store = join(out, "store");
const timings: StageTiming[] = [];
const run = (stage: string, args: string[]) => socialworld(stage, args, timings);
const started = performance.now();
const seed = values.seed;
// Hi-ToM's defaults: its compact contexts are twice ToMi's length, and its vanilla prompts (the
// story, 15 choices and the instructions) pass the 1m preset's 1,024-token window.
const questions = values.questions ?? (world === "tomi" ? 30_000 : 20_000);
const sftSteps = values["sft-steps"] ?? (world === "tomi" ? 2500 : 1200);
const vanillaShare = values["vanilla-share"] ?? (world === "tomi" ? 0.5 : 0);
// The commands that run a policy get the device; the random and symbolic agents' evaluations need none.
const device = values.device === "cpu" && values.precision === undefined ? [] : ["--device", values.device, ...(values.precision ? ["--precision", values.precision] : [])];
const MODES = world === "tomi" || vanillaShare > 0 ? (["simulation", "vanilla"] as const) : (["simulation"] as const);
// GRPO trains in vanilla mode where the recipe trains it (learn-grpo.ts), checked before any stage runs.
const grpoMode = values["grpo-mode"] ?? recipeGrpoMode(world, vanillaShare);
const grpoSteps = values["grpo-steps"] ?? RECIPE_GRPO_STEPS[grpoMode];
// Named on the command line, an agent is evaluated or refused, never left out unsaid.
if (grpoSteps === 0 && values.agents?.has("grpo")) {
  process.stderr.write("learn-demo: --agents grpo: --grpo-steps 0 trains no GRPO policy to evaluate\n");
  process.exit(2);
}
const evaluated: ReadonlySet<string> = values.agents ?? new Set(EVALUATED);
if (grpoMode === "vanilla" && vanillaShare === 0) {
  process.stderr.write("learn-demo: --grpo-mode vanilla needs vanilla-mode training data (--vanilla-share above 0)\n");
  process.exit(2);
}
// The files last: every argument is checked first, with or without the data.
for (const [, f] of evalSets) {
  if (!existsSync(f)) {
    process.stderr.write(`learn-demo: ${f} not found (pass --val FILE${world === "tomi" ? " and --paraphrased FILE" : ""})\n`);
    process.exit(2);
  }
}
mkdirSync(out, { recursive: true });

// 1-3. Data, base, SFT: the recipe's supervised stage (learn-recipe.ts): every question in simulation mode, a share also in vanilla.
const { trainFile, sftFile } = await recipeSftData(out, {
  world,
  questions,
  seed,
  modes: MODES,
  shares: { vanilla: vanillaShare },
  context: values.context,
  balance: values.balance === "on",
  reworded: values.reword,
  timings,
});
const { base, sft, trained: sftTrained } = await recipeSft(run, out, { sftFile, steps: sftSteps, seed, reuse: values.reuse, device, preset: values.preset, batch: values.batch, lr: values.lr });
const grpo = join(out, "grpo");
const policies: [string, string][] = [["base", base], ["SFT", sft]];
if (grpoSteps > 0) {
  // The device is left out of the record: it changes where the stage runs, not what it trains.
  const grpoArgs = recipeGrpoArgs({ world, model: sft, out: grpo, trainFile, store, mode: grpoMode, steps: grpoSteps, seed, questions: values["grpo-questions"], context: values.context });
  // A GRPO policy trained from another SFT policy than this run's is another policy, whatever its arguments.
  const kept = values.reuse && !sftTrained ? keptStage(grpo, grpoArgs) : "no";
  if (kept === "kept") process.stderr.write(`[grpo] kept ${grpo} (--reuse)\n`);
  else {
    if (kept === "other") process.stderr.write(`[grpo] ${grpo} was trained with other settings than this run's (or before the demo recorded them): training it again\n`);
    await trainStage(grpo, grpoArgs, () => run("grpo", [...grpoArgs, ...device]));
  }
  policies.push(["SFT+GRPO", grpo]);
}

// 5. Evaluations: every agent on every file in both modes.
// A policy that writes its context in simulation mode gets the default budget (256 tokens), what its trace needs.
const selfWritten = (mode: string) => writesContext && mode === "simulation";
const allAgents: [string, string][] = [["random", `random:${seed}`], ...policies.map(([n, dir]): [string, string] => [n, `policy:${dir}?max_new_tokens=16&constrain=options`]), ["symbolic", "simulation"]];
// --agents names the table's rows as written on the command line (SFT+GRPO is `grpo`).
const agents = allAgents.filter(([name]) => evaluated.has(name === "SFT+GRPO" ? "grpo" : name.toLowerCase()));
const agentSpec = (spec: string, mode: string) => (spec.startsWith("policy:") && selfWritten(mode) ? spec.replace("max_new_tokens=16&", `context=${values.context}&`) : spec);
const reports = new Map<string, BenchReport>();
const key = (set: string, agent: string, mode: string) => `${set}|${agent}|${mode}`;
for (const [set, file] of evalSets) {
  for (const mode of MODES) {
    for (const [name, spec] of agents) {
      if (name === "symbolic" && mode === "vanilla") continue; // the symbolic agent always reads the story through its world model
      const json = join(out, `eval-${set.split(" ")[0]!.toLowerCase()}-${name.toLowerCase().replace("+", "-")}-${mode}.json`);
      await run(`eval ${name} ${mode} ${set}`, [
        "bench", world, "--data", file, "--agent", agentSpec(spec, mode), "--mode", mode, "--concurrency", "32", "--store", store, "--json", json, "--quiet",
        ...(values["val-limit"] !== undefined ? ["--limit", String(values["val-limit"])] : []),
        ...(spec.startsWith("policy:") ? device : []),
      ]);
      reports.set(key(set, name, mode), JSON.parse(readFileSync(json, "utf8")) as BenchReport);
    }
  }
}

const tables: string[] = [];
for (const [set, file] of evalSets) {
  const first = reports.get(key(set, agents[0]![0], "simulation"))!;
  const types = Object.keys(first.byType);
  tables.push(`### ${set} (\`${file}\`, ${first.total} questions): accuracy against the world model's labels`, "");
  tables.push(`| agent | mode | ${types.join(" | ")} | **all** | official labels |`);
  tables.push(`|:--|:--|${types.map(() => "--:").join("|")}|--:|--:|`);
  for (const mode of MODES) {
    for (const [name] of agents) {
      const r = reports.get(key(set, name, mode));
      if (!r) continue;
      const wm = r.worldModel;
      tables.push(`| ${name} | ${mode} | ${types.map((t) => pct(wm.agentAccuracyByType[t])).join(" | ")} | **${pct(wm.agentAccuracy)}** | ${pct(r.accuracy)} |`);
    }
  }
  tables.push("");
  // Where a policy wrote the context itself: how faithful its traces were to the world model's.
  for (const [name] of agents) {
    const w = reports.get(key(set, name, "simulation"))?.writtenContext;
    if (w) tables.push(`- ${name}'s written contexts: ${pct(w.exactShare)} of the traces exact (${w.exact}/${w.questions}), ${pct(w.lineShare)} of the lines right (${w.linesRight}/${w.lines}).`);
  }
  if (writesContext) tables.push("");
}

// The learning curves: SFT loss and GRPO reward, in tenths of the run.
const curves: string[] = ["## Learning curves", ""];
// SFT logs each step to train_log.jsonl, GRPO to metrics.jsonl.
// A GRPO folder an earlier run left is not this run's when it trained none (--grpo-steps 0).
const logs: [string, string, string][] = [["SFT loss", join(sft, "train_log.jsonl"), "loss"]];
if (grpoSteps > 0) logs.push(["GRPO mean reward", join(grpo, "metrics.jsonl"), "reward"]);
for (const [name, file, field] of logs) {
  const points = tenthMeans(readRunLog(file), field);
  if (points.length) curves.push(`- ${name} (mean over each tenth of the run): ${points.map((p) => `step ${String(p.step)}: ${p.mean.toFixed(3)}`).join(", ")}`);
}
const config = JSON.parse(readFileSync(join(base, "config.json"), "utf8")) as { vocab_size: number };
const total = (performance.now() - started) / 1000;
const where = values.device === "cpu" ? "" : ` (--device ${values.device}${values.precision ? ` --precision ${values.precision}` : ""})`;
const text = [
  `Policy preset ${values.preset} (vocabulary ${config.vocab_size})${where}, seed ${seed}, ${questions} generated ${world === "tomi" ? "ToMi" : "Hi-ToM"} training questions (${world === "hitom" ? "every order of every story" : values.balance === "on" ? "balanced by type" : "the generator's mix"}${values.reword > 0 ? `, ${values.reword} of the sentences' wordings drawn from other words` : ""}, ${vanillaShare} of them also in vanilla mode), SFT ${sftSteps} steps of ${values.batch}${values.lr === undefined ? "" : ` at lr ${values.lr}`}, GRPO ${grpoSteps} steps in ${grpoMode} mode; policies ${writesContext ? `write who saw the asked object where${world === "hitom" ? " and who was told where" : ""}${values.context === "self-latest" ? ", latest first" : ""}, then answer from it (context=${values.context})` : "answer by citing a line of the compact context"} in simulation mode, one of the story's containers in vanilla mode (constrain=options):`,
  "",
  ...tables,
  wallTimeLine(total, timings),
  "",
  ...curves,
  "",
].join("\n");
writeResults(out, text);

/**
 * Joint against per-level generation, each recipe trained as it is asked (issue 30). HumanLM
 * writes a reply level by level (each state, then the response, by a request of its own); a
 * policy trained on joint prompts only and then asked level by level meets prompts it never saw.
 * Here both recipes start from one base and get the same SFT budget (steps, batch, schedule):
 *
 *   joint      SFT on the records asked jointly (the whole reply after system.txt), asked jointly;
 *   per-level  SFT on the same records asked per level (each level's prompt after the true levels
 *              before it, usersim-recipe.ts), asked per level (`policy:DIR?generation=per-level`).
 *
 *   npm run demo:usersim-generation -- [--out DIR] [--n N] [--data-seed S] [--seed S] [--sft-steps N]
 *       [--grpo-steps N] [--prompts N] [--group-size G] [--lr X] [--eval N] [--cross] [--level-credit]
 *       [--only joint|per-level] [--threads N] [--reuse]
 *
 * Optionally GRPO on top of each SFT in its own generation (`train grpo --generation MODE`), the
 * same budget for both. Every policy is benched greedily under the reply's grammar on the test
 * split's first --eval records, in its own generation (and, with --cross, in the other); the table
 * gives each row's per-tag means, its alignment with its standard error over the records, and
 * paired differences on the same records: from the joint recipe asked jointly, from the joint
 * recipe asked the same way (with --cross), and a GRPO policy's from its own SFT.
 *
 * With --level-credit, GRPO is trained a second time in each generation from the same SFT with
 * the same budget and seed, each level's tokens credited with that level's own score (`--credit
 * level`; a joint reply's tokens split by its tags) instead of the whole reply's; its rows follow,
 * and their paired differences from reply credit. --only GEN trains, benches and tabulates one
 * generation (the SFT data and the base are both recipes' still, so that a run reuses them).
 *
 * Every stage is a child process (cli-process.ts); the table goes to the terminal and to
 * OUT/results.md with the wall time and the load average. Not a test.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { readEpisodeLog } from "../store/episode-log.js";
import { RunStore } from "../store/run-store.js";
import { meanError } from "../worlds/core/mean-error.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { readHierarchyFile } from "../worlds/usersim/index.js";
import { socialworld, wallTimeLine, type StageTiming } from "./cli-process.js";
import { readRunLog, tenthMeans } from "./run-logs.js";
import { loadAverageLine, writeResults } from "./results-file.js";
import { scriptArgs } from "./script-args.js";
import { reusedTraining, trainStage } from "./stage-record.js";
import { USERSIM_CONTEXT, USERSIM_RECIPE_HELP, USERSIM_RECIPE_OPTIONS, usersimBaseArgs, usersimGrpoArgs, usersimSftArgs, usersimSftLines } from "./usersim-recipe.js";

const USAGE = `node dist/measurements/usersim-generation.js [options]   (or: npm run demo:usersim-generation -- [options])

Trains one base policy on generated usersim records twice with the same SFT budget, once on joint
prompts and once on per-level prompts (optionally GRPO on top, each in its own generation), and
benches each as it was trained on the same test records: per-tag means, alignment with its
standard error, and paired differences on the records (per-level minus joint, GRPO minus its SFT).
OUT/results.md holds the table.

Options:
  --out DIR          models, data, store and results (default data/usersim-generation)
  --n N              generated records (default 2000; train 80%, test 10%)
  --data-seed S      the generator's seed (default 0)
  --seed S           the seed of the model, SFT and GRPO (default 1)
  --sft-steps N      SFT optimizer steps of 8 examples, each recipe (default 60)
  --grpo-steps N     GRPO steps on top of each SFT, in its generation (default 0: none)
${USERSIM_RECIPE_HELP}
  --cross            also bench each policy in the other generation
  --level-credit     with --grpo-steps: also GRPO in each generation with each level's own advantage (--credit level)
  --only GEN         joint or per-level: train (from the SFT data on), bench and tabulate that generation only
  --threads N        CPU threads of every stage (default 1)
  --reuse            keep OUT's data, base, SFT and GRPO policies and bench reports where a finished run left them,
                     if made with these arguments (OUT/stages.json; otherwise it stops, saying which differ)
  --help             this text`;

const values = scriptArgs({
  name: "usersim-generation",
  usage: USAGE,
  schema: z.object({
    ...USERSIM_RECIPE_OPTIONS,
    out: z.string().default(join(packageRoot(), "data", "usersim-generation")),
    "sft-steps": intArg(1).default(60),
    "grpo-steps": intArg(0).default(0),
    cross: z.boolean().default(false),
    "level-credit": z.boolean().default(false),
    only: z.enum(["joint", "per-level"]).optional(),
    reuse: z.boolean().default(false),
  }),
});

type Generation = "joint" | "per-level";
/** Both recipes' SFT data and one base for both; the generations trained and benched (--only). */
const RECIPES: readonly Generation[] = ["joint", "per-level"];
const GENERATIONS: readonly Generation[] = values.only ? [values.only] : RECIPES;
if (values.only && values.cross) {
  // Otherwise --cross would be dropped without a word (the cross rows are drawn from GENERATIONS).
  process.stderr.write(`usersim-generation: --cross benches each generation's policies asked the other way; with --only ${values.only} there is no other generation to compare\n`);
  process.exit(2);
}

const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const store = join(out, "store");
const timings: StageTiming[] = [];
const started = performance.now();
const loadBefore = loadavg();
const threads = ["--threads", String(values.threads)];
const hierarchyFile = join(packageRoot(), "worlds", "usersim", "hierarchies", "compact.json");
// As usersim-demo.ts asks a hierarchical reply.
const MAX_NEW = 320;
// Each stage's arguments, recorded in OUT/stages.json when it finishes: --reuse keeps an output
// only if it was made with the arguments this run would give it (another --sft-steps once benched
// the old models silently) and none of the stages it reads ran again here. An output this script
// did not record (a hand-trained model linked in, docs/worlds/usersim.md) is kept unchecked, and says so.
const stagesFile = join(out, "stages.json");
const recorded: Record<string, string[]> = existsSync(stagesFile) ? z.record(z.string(), z.array(z.string())).parse(JSON.parse(readFileSync(stagesFile, "utf8"))) : {};
const ran = new Set<string>();
// What a stage makes does not depend on its threads or its chatter.
const significant = (args: readonly string[]) => args.filter((a, i) => a !== "--quiet" && a !== "--threads" && args[i - 1] !== "--threads");
const kept = (what: string, all: readonly string[], path: string, after: readonly string[] = []): boolean => {
  if (!values.reuse || !existsSync(path) || after.some((s) => ran.has(s))) return false;
  const was = recorded[what];
  const args = significant(all);
  if (was === undefined) {
    process.stderr.write(`[${what}] kept ${path} (--reuse; not made by this script, its arguments unchecked)\n`);
    return true;
  }
  if (was.join("\0") !== args.join("\0")) {
    const changes = was.length === args.length ? args.flatMap((a, i) => (a === was[i] ? [] : [`${i > 0 ? `${args[i - 1]} ` : ""}${was[i]} -> ${a}`])) : [`${was.join(" ")} -> ${args.join(" ")}`];
    process.stderr.write(
      `usersim-generation: --reuse: ${path} was made by stage "${what}" with other arguments (${changes.join("; ")}); ` +
        `run without --reuse or with another --out to make it again\n`,
    );
    process.exit(2);
  }
  process.stderr.write(`[${what}] kept ${path} (--reuse)\n`);
  return true;
};
const record = (what: string, args: readonly string[]) => {
  ran.add(what);
  recorded[what] = significant(args);
  writeFileSync(stagesFile, JSON.stringify(recorded, null, 2) + "\n");
};
/** Runs a stage unless --reuse keeps its output; `policy`: the folder of the policy it trains, which gets its stage record too (stage-record.ts). */
const run = async (stage: string, args: string[], output: string, after: readonly string[] = [], policy?: string) => {
  if (kept(stage, args, output, after)) return;
  // A stage that fails leaves no record behind it to vouch for what it half wrote.
  delete recorded[stage];
  writeFileSync(stagesFile, JSON.stringify(recorded, null, 2) + "\n");
  const train = () => socialworld(stage, args, timings);
  await (policy ? trainStage(policy, { [stage]: significant(args) }, train) : train());
  record(stage, args);
};

// 1. Data: the records, each recipe's SFT examples (no response-only ones: both recipes are hierarchical).
const data = join(out, "usersim.jsonl");
await run("generate", ["generate", "usersim", "--n", String(values.n), "--seed", String(values["data-seed"]), "--out", data], data);
const sftFile = (g: Generation) => join(out, `sft-${g}.jsonl`);
const corpus = join(out, "corpus.jsonl");
const sftDataArgs = ["--hierarchy", hierarchyFile, "--seed", String(values.seed)];
if (!kept("sft data", sftDataArgs, corpus, ["generate"])) {
  const t0 = performance.now();
  const lines: string[] = [];
  for (const g of RECIPES) {
    const d = await usersimSftLines(data, { hierarchy: readHierarchyFile(hierarchyFile), responseOnlyShare: 0, generation: g, seed: values.seed });
    writeFileSync(sftFile(g), d.lines.join("\n") + "\n");
    lines.push(...d.lines);
    process.stderr.write(`[sft data] ${g}: ${d.records} train records, ${d.lines.length} examples -> ${sftFile(g)}\n`);
  }
  // One tokenizer for both recipes: the words of both prompts (the per-level ones have level.txt's).
  writeFileSync(corpus, lines.join("\n") + "\n");
  timings.push({ stage: "sft data", seconds: (performance.now() - t0) / 1000 });
  record("sft data", sftDataArgs);
}

// 2-3. One base, then SFT on each recipe's examples with the same budget.
const base = join(out, "base");
await run("base", usersimBaseArgs(corpus, base, values.seed), join(base, "model.safetensors"), ["sft data"]);
const sft = (g: Generation) => join(out, `sft-${g}`);
for (const g of GENERATIONS) {
  await run(`SFT ${g}`, [...usersimSftArgs(base, sftFile(g), sft(g), values["sft-steps"], values.seed, values.threads), "--quiet"], join(sft(g), "model.safetensors"), ["sft data", "base"], sft(g));
}
// What each SFT policy was trained with, for the header: this run's --sft-steps where this script
// trained it (now, or in the run whose record --reuse checked); else, kept unchecked (linked in from
// elsewhere), what its own stage record says, if it has one.
const sftTrained = GENERATIONS.map((g) => (recorded[`SFT ${g}`] ? undefined : `${g} ${reusedTraining(sft(g))}`));
const sftHeader = sftTrained.every((x) => x === undefined)
  ? `SFT ${values["sft-steps"]} steps of 8 examples each recipe`
  : `SFT ${GENERATIONS.map((g, i) => sftTrained[i] ?? `${g} ${values["sft-steps"]} steps of 8 examples`).join(", ")}`;

// 4. GRPO on top, each in its own generation, the same budget.
const grpo = (g: Generation) => join(out, `grpo-${g}`);
if (values["grpo-steps"] > 0) {
  for (const g of GENERATIONS) {
    const args = usersimGrpoArgs({
      model: sft(g), data, hierarchy: hierarchyFile, out: grpo(g), store, steps: values["grpo-steps"], prompts: values.prompts, groupSize: values["group-size"],
      maxNewTokens: MAX_NEW, lr: values.lr, seed: values.seed, threads: values.threads, generation: g,
    });
    await run(`GRPO ${g}`, args, join(grpo(g), "model.safetensors"), ["generate", `SFT ${g}`]);
  }
}
const levelCredit = (g: Generation) => join(out, `grpo-${g}-level-credit`);
const levelCredited = values["grpo-steps"] > 0 && values["level-credit"] ? GENERATIONS : [];
for (const g of levelCredited) {
  const args = usersimGrpoArgs({
    model: sft(g), data, hierarchy: hierarchyFile, out: levelCredit(g), store, steps: values["grpo-steps"], prompts: values.prompts, groupSize: values["group-size"],
    maxNewTokens: MAX_NEW, lr: values.lr, seed: values.seed, threads: values.threads, generation: g, credit: "level",
  });
  await run(`GRPO ${g}, level credit`, args, join(levelCredit(g), "model.safetensors"), ["generate", `SFT ${g}`]);
}

// 5. Bench: each policy in its own generation (and the other with --cross), the same records, greedy, under the grammar.
interface Row {
  readonly label: string;
  readonly trained: Generation;
  readonly asked: Generation;
  readonly report: { runId: string; accuracy: number; metrics: Record<string, number> };
  /** Alignment by record id. */
  readonly scores: Map<string, number>;
}
const runStore = () => RunStore.open(store);
const rows: Row[] = [];
/** Benches the policy in `dir` (its stage `made`) asked one way, as `label`: its report and its alignment by record. */
const bench = async (label: string, made: string, dir: string, trained: Generation, asked: Generation, json: string): Promise<Row> => {
  const agent = asked === "joint" ? `policy:${dir}?max_new_tokens=${MAX_NEW}` : `policy:${dir}?generation=per-level`;
  await run(`bench ${label}, asked ${asked}`, [
    "bench", "usersim", "--data", data, "--split", "test", "--limit", String(values.eval), "--hierarchy", hierarchyFile, "--agent", agent, "--store", store, "--json", json, ...threads, "--quiet",
  ], json, ["generate", made]);
  const report = JSON.parse(readFileSync(json, "utf8")) as Row["report"];
  const r = (await runStore()).get(report.runId);
  if (!r) throw new Error(`no run ${report.runId} in ${store}`);
  const recs = readEpisodeLog<{ kind: string; result?: { id: string; score: number } }>((await runStore()).episodesPath(r)).records;
  const scores = new Map(recs.flatMap((x) => (x.kind === "benchmark_item" && x.result ? [[x.result.id, x.result.score] as const] : [])));
  return { label, trained, asked, report, scores };
};
const policies: [string, (g: Generation) => string][] = [["SFT", sft]];
if (values["grpo-steps"] > 0) policies.push(["GRPO", grpo]);
for (const [name, dir] of policies) {
  for (const trained of GENERATIONS) {
    for (const asked of GENERATIONS.filter((a) => a === trained || values.cross)) {
      rows.push(await bench(`${name} ${trained}`, `${name} ${trained}`, dir(trained), trained, asked, join(out, `eval-${name.toLowerCase()}-${trained}-asked-${asked}.json`)));
    }
  }
}
// Each level-credit row beside its reply-credit one (the same generation, asked the same way).
const creditPairs: [Row, Row | undefined][] = [];
for (const g of levelCredited) {
  const row = await bench(`GRPO ${g}, level credit`, `GRPO ${g}, level credit`, levelCredit(g), g, g, join(out, `eval-grpo-${g}-level-credit-asked-${g}.json`));
  rows.push(row);
  creditPairs.push([row, rows.find((r) => r.label === `GRPO ${g}` && r.asked === g)]);
}

// 6. The table: per-tag means, alignment +- its standard error, and paired differences on the same records:
// from the joint recipe asked jointly (the same kind of policy: the per-level recipe's cost, or the cost of
// asking a joint policy per level), from the joint recipe asked the same way (the recipe alone, with --cross),
// and a GRPO policy's from its own SFT asked the same way.
const h = readHierarchyFile(hierarchyFile);
const tags = [...h.states.map((d) => d.name), h.response.name];
const f3 = (x: number | undefined) => (x === undefined ? "–" : x.toFixed(3));
const kind = (row: Row) => row.label.split(" ")[0];
const paired = (row: Row, other: Row | undefined) => {
  if (!other || other === row) return "";
  const d = meanError([...row.scores].filter(([id]) => other.scores.has(id)).map(([id, x]) => x - other.scores.get(id)!), "records");
  return `${d.mean >= 0 ? "+" : "−"}${Math.abs(d.mean).toFixed(3)} ± ${d.error.toFixed(3)}`;
};
const table = [
  `| policy | asked | ${tags.join(" | ")} | format | alignment ± s.e. | minus the joint recipe asked jointly (paired ± s.e.) | minus the joint recipe asked the same way (paired ± s.e.) | minus its SFT (paired ± s.e.) |`,
  `|:--|:--|${tags.map(() => "--:").join("|")}|--:|--:|--:|--:|--:|`,
  ...rows.map((row) => {
    const a = meanError([...row.scores.values()], "records");
    const jointly = rows.find((o) => kind(o) === kind(row) && o.trained === "joint" && o.asked === "joint");
    const sameWay = row.trained === "joint" ? undefined : rows.find((o) => kind(o) === kind(row) && o.trained === "joint" && o.asked === row.asked);
    const itsSft = kind(row) === "SFT" ? undefined : rows.find((o) => kind(o) === "SFT" && o.trained === row.trained && o.asked === row.asked);
    return `| ${row.label} | ${row.asked} | ${tags.map((t) => f3(row.report.metrics[t])).join(" | ")} | ${f3(row.report.metrics.format_rate)} | ${a.mean.toFixed(3)} ± ${a.error.toFixed(3)} | ${paired(row, jointly)} | ${paired(row, sameWay)} | ${paired(row, itsSft)} |`;
  }),
];

const curves: string[] = [];
for (const g of GENERATIONS) {
  const loss = existsSync(join(sft(g), "train_log.jsonl")) ? tenthMeans(readRunLog(join(sft(g), "train_log.jsonl")), "loss") : [];
  if (loss.length) curves.push(`- SFT ${g}, loss (mean over each tenth of the run): ${loss.map((p) => p.mean.toFixed(3)).join(", ")}`);
  const log = values["grpo-steps"] > 0 && existsSync(join(grpo(g), "metrics.jsonl")) ? readRunLog(join(grpo(g), "metrics.jsonl")).filter((r) => typeof r.reward === "number") : [];
  if (log.length) curves.push(`- GRPO ${g}, mean reward per step: ${log.map((r) => (r.reward as number).toFixed(3)).join(", ")}`);
}
for (const g of levelCredited) {
  if (!existsSync(join(levelCredit(g), "metrics.jsonl"))) continue;
  const log = readRunLog(join(levelCredit(g), "metrics.jsonl")).filter((r) => typeof r.reward === "number");
  curves.push(`- GRPO ${g}, level credit, mean reward per step: ${log.map((r) => (r.reward as number).toFixed(3)).join(", ")}`);
}
const total = (performance.now() - started) / 1000;
const loadAfter = loadavg();
const text = [
  `Policy preset 1m (context ${USERSIM_CONTEXT}), seed ${values.seed}; generate usersim --n ${values.n} --seed ${values["data-seed"]}; ${sftHeader}` +
    `${values["grpo-steps"] > 0 ? `; GRPO ${values["grpo-steps"]} steps of ${values.prompts} records x ${values["group-size"]} replies each, lr ${values.lr}` : ""}; hierarchy compact.json; ` +
    `the test split's first ${values.eval} records, greedy, constrained to the reply's grammar (joint: max_new_tokens ${MAX_NEW}; per-level: each level's max_tokens):`,
  "",
  ...table,
  "",
  ...creditPairs.flatMap(([level, reply]) => (reply ? [`Level credit minus reply credit (${level.trained} GRPO from the same SFT, the same budget; paired on the records ± s.e.): ${paired(level, reply)}`, ""] : [])),
  timings.length ? wallTimeLine(total, timings) : "Every stage kept from an earlier run (--reuse).",
  loadAverageLine(loadBefore, loadAfter),
  "",
  ...curves,
  "",
].join("\n");
writeResults(out, text);

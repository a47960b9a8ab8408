/**
 * The recommendation table: NDCG@10 and HR@10 of each recaller alone (pop, itemknn, bpr, sasrec), the best fixed mixture
 * (weights chosen on the valid items) and the oracle (the generator's latent truth), on generated
 * users of several shapes, and on MovieLens-1M where its folder is found; with the wall time of
 * each row (fit + evaluation) and each NDCG as a share of the oracle's, the peer of the same run.
 * At the small shape, policies that weigh the four recallers per user: SFT, then GRPO and
 * SofT-GRPO from it with the same budget (rec-policies.ts), with their learning curves (CSV, SVG).
 *
 *   node dist/measurements/rec-table.js [--shapes small,medium,large] [--movielens DIR] [--md OUT.md]
 *       [--policies small|none] [--out DIR] [--points N] [--sft-steps N] [--grpo-steps N]
 *
 * Not a test: it runs as `bench rec` does (benchmarks/recommendation.ts).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../store/write-atomic.js";
import { parseRecAgent, runRecBench, type RecAgent, type RecBenchRow } from "../benchmarks/recommendation.js";
import { generateRec, leaveLastOut, pairedDifference, readMovieLens, splitStats, type Preferences, type RecSplit } from "../worlds/rec/index.js";
import { intArg, numArg } from "../cli/args.js";
import { packageRoot } from "../worlds/question/prompts.js";
import { wallTimeLine, type StageTiming } from "./cli-process.js";
import { linePlot } from "./line-plot.js";
import { trainRecPolicies, type TrainedPolicies } from "./rec-policies.js";
import { REC_SHAPES as SHAPES, recShapesPattern, type RecShape as Shape } from "./rec-shapes.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/rec-table.js [options]   (or: npm run table:rec -- [options])

Prints NDCG@10, HR@10 and wall time of pop, itemknn, bpr, sasrec, the best fixed mixture and the oracle on
generated users of each shape, and on MovieLens-1M when its folder is there (no oracle: no truth).

Options:
  --shapes LIST     generated shapes, from ${Object.entries(SHAPES)
    .map(([n, s]) => `${n} (${s.users} users, ${s.items} items, ${s.meanLength} per user)`)
    .join(", ")}; default small,medium
  --seed S          the generator's and BPR's seed (default 0)
  --epochs N        BPR's epochs (default 30)
  --movielens DIR   MovieLens-1M's folder (default: ../shared/data/ml-1m when it exists)
  --md FILE         also write the table there

Policies (rows at the small shape; trained on other generated users, the world's own decision points):
  --policies small|none   train and score SFT, GRPO and SofT-GRPO policies (default small when the
                    small shape is asked for)
  --out DIR         their models, data, curves.csv and curves.svg (default data/rec-table); a stage
                    finished there with the same command is kept
  --preset NAME     their architecture (default 1m)
  --points N        generated users they train on (default 300, seed --train-seed)
  --train-seed S    those users' seed (default 1: not the table's users)
  --sft-steps N     SFT steps, batch 16 (default 150)
  --grpo-steps N    steps of each GRPO run, --prompts x --group-size replies (default 10)
  --prompts N       prompts per GRPO step (default 8)
  --group-size N    replies per prompt (default 4)
  --lr X            GRPO's learning rate (default 1e-4)
  --thinking-steps K  SofT-GRPO's soft tokens per reply (default 4; scored with soft thinking too)
  --threads N       native threads of each training run (default 1)
  --help            this text`;

const values = scriptArgs({
  name: "rec-table",
  usage: USAGE,
  schema: z.object({
    shapes: z
      .string()
      .regex(recShapesPattern, `expected shapes from ${Object.keys(SHAPES).join(", ")}, separated by commas`)
      .default("small,medium"),
    seed: intArg(0, 2 ** 32 - 1).default(0),
    epochs: intArg(1, 10_000).default(30),
    movielens: z.string().min(1).optional(),
    md: z.string().min(1).optional(),
    policies: z.enum(["small", "none"]).optional(),
    out: z.string().min(1).default(join(packageRoot(), "data", "rec-table")),
    preset: z.string().min(1).default("1m"),
    points: intArg(8, 100_000).default(300),
    "train-seed": intArg(0, 2 ** 32 - 1).default(1),
    "sft-steps": intArg(1).default(150),
    "grpo-steps": intArg(1).default(10),
    prompts: intArg(1, 1024).default(8),
    "group-size": intArg(2, 64).default(4),
    lr: numArg().positive().default(1e-4),
    "thinking-steps": intArg(1, 64).default(4),
    threads: intArg(1, 1024).default(1),
  }),
});
const shapes = values.shapes.split(",") as Shape[];
const policiesAt: Shape | undefined = (values.policies ?? (shapes.includes("small") ? "small" : "none")) === "small" ? "small" : undefined;
if (policiesAt && !shapes.includes(policiesAt)) {
  process.stderr.write(`rec-table: --policies small needs the small shape among --shapes\n`);
  process.exit(2);
}

/** Per table with policies: which policy wins, against SFT and the best fixed mixture, in NDCG@10 points. */
const verdicts: string[] = [];
const lines = ["| data | users | items | interactions | agent | NDCG@10 | s.e. | HR@10 | NDCG / oracle | fit s | eval s |", "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"];

async function table(label: string, split: RecSplit, preferences: Preferences | undefined, policies: readonly [string, RecAgent][] = []): Promise<void> {
  const t0 = performance.now();
  const stats = splitStats(split);
  const agents = [parseRecAgent("all"), ...policies.map(([, a]) => a)];
  const names = new Map(policies.map(([name, a]) => [a.kind === "policy" ? a.spec : "", name]));
  const rows: RecBenchRow[] = await runRecBench(split, agents, { bpr: { epochs: values.epochs, seed: values.seed }, ...(preferences ? { preferences } : {}) }, (stage) => {
    process.stderr.write(`${label}: ${stage}\n`);
    return () => {};
  });
  const oracle = rows.find((r) => r.agent === "oracle")?.ndcg;
  if (policies.length > 0) verdicts.push(verdict(label, rows, names));
  for (const r of rows) {
    const share = oracle ? (r.ndcg / oracle).toFixed(2) : "n/a";
    const name = names.get(r.agent) ?? r.agent;
    const agent = r.weights ? `${name} (${names.has(r.agent) ? "mean " : ""}${Object.entries(r.weights).map(([n, w]) => `${n} ${+w.toFixed(2)}`).join(", ")})` : name;
    lines.push(`| ${label} | ${stats.users} | ${stats.items} | ${stats.interactions} | ${agent} | ${r.ndcg.toFixed(4)} | ${r.ndcgError.toFixed(4)} | ${r.hr.toFixed(4)} | ${share} | ${r.fitSeconds.toFixed(2)} | ${r.evalSeconds.toFixed(2)} |`);
  }
  process.stderr.write(`${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}

const started = performance.now();
const timings: StageTiming[] = [];
let trained: TrainedPolicies | undefined;
if (policiesAt) {
  const out = resolve(values.out);
  trained = await trainRecPolicies(
    {
      out,
      points: values.points,
      seed: values["train-seed"],
      preset: values.preset,
      sftSteps: values["sft-steps"],
      grpoSteps: values["grpo-steps"],
      prompts: values.prompts,
      groupSize: values["group-size"],
      lr: values.lr,
      thinkingSteps: values["thinking-steps"],
      threads: values.threads,
    },
    timings,
  );
  writeCurves(out, trained);
}
for (const name of shapes) {
  const t0 = performance.now();
  const gen = generateRec(SHAPES[name], values.seed);
  process.stderr.write(`generated ${name} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  await table(`generated ${name}`, leaveLastOut(gen.dataset), gen.preferences, name === policiesAt && trained ? policyAgents(trained) : []);
}

const ml = values.movielens ?? join("..", "shared", "data", "ml-1m");
const notes: string[] = [];
if (existsSync(join(ml, "ratings.dat"))) await table("MovieLens-1M", leaveLastOut(readMovieLens(ml)), undefined);
else notes.push(`MovieLens-1M: no ratings.dat under ${ml}, so no MovieLens row (give --movielens DIR)`);

notes.push(...verdicts);
if (trained)
  notes.push(
    `Policies (${values.preset} preset): SFT ${values["sft-steps"]} steps (batch 16) on ${trained.sftExamples} of ${values.points} generated users (seed ${values["train-seed"]}, the world's decision points: the valid item, the default catalogue), those whose valid item some grid mixture ranks in the top 10, answered with the best grid weights; GRPO and SofT-GRPO from it, ${values["grpo-steps"]} steps of ${values.prompts} prompts x ${values["group-size"]} replies each on the same users, lr ${values.lr}, KL 0.01, clip 0.2, temperature 1; SofT-GRPO with ${values["thinking-steps"]} soft tokens, tau 1, top-p 0.9. Scored on the small shape's test items (users they never saw): greedy (temperature 0) unless the row says otherwise. Learning curves: ${join(values.out, "curves.csv")}, curves.svg.`,
    timings.length ? wallTimeLine(timings.reduce((a, t) => a + t.seconds, 0), timings) : `Every stage kept from an earlier run in ${values.out}: its wall times are that run's.`,
  );
const out = [...lines, "", ...notes.map((n) => `${n}  `), `wall time ${((performance.now() - started) / 1000).toFixed(1)} s (seed ${values.seed}, BPR ${values.epochs} epochs)`, ""].join("\n");
process.stdout.write(out);
if (values.md) writeFileAtomic(values.md, out);

/** The policy rows: each policy greedy, and the GRPO policies also as their rollouts sampled (temperature 1), SofT-GRPO's thinking in soft tokens first. */
function policyAgents(t: TrainedPolicies): [string, RecAgent][] {
  const k = values["thinking-steps"];
  const rows: [string, string][] = [
    ["SFT", `policy:${t.sft}`],
    ["GRPO", `policy:${t.grpo}`],
    ["SofT-GRPO, no thinking", `policy:${t.softGrpo}`],
    ["GRPO, sampled (T 1)", `policy:${t.grpo}?temperature=1`],
    [`SofT-GRPO, ${k} soft tokens (T 1)`, `policy:${t.softGrpo}?soft_thinking=${k}&tau=1&soft_top_p=0.9&temperature=1`],
  ];
  return rows.map(([name, spec]) => [name, parseRecAgent(spec)]);
}

/** The GRPO runs' per-step rollout reward and accuracy, as CSV and as a plot. */
function writeCurves(out: string, t: TrainedPolicies): void {
  mkdirSync(out, { recursive: true });
  const runs = Object.entries(t.curves);
  const csv = ["run,step,reward,reward_std,accuracy,seconds", ...runs.flatMap(([run, c]) => c.map((m) => [run, m.step, m.reward, m.rewardStd ?? "", m.accuracy, m.seconds].join(",")))];
  writeFileSync(join(out, "curves.csv"), csv.join("\n") + "\n");
  writeFileSync(
    join(out, "curves.svg"),
    linePlot([
      { title: "mean rollout reward (NDCG@10; -1 for no action)", x: "step", series: runs.map(([name, c]) => ({ name, points: c.map((m) => [m.step, m.reward] as const) })) },
      { title: "mean rollout NDCG@10 (the reward's exact part)", x: "step", series: runs.map(([name, c]) => ({ name, points: c.map((m) => [m.step, m.accuracy] as const) })) },
    ]),
  );
}

/**
 * Which policy wins, by how much against the runner-up, SFT and the best fixed mixture: each a
 * difference of NDCG@10 user by user (the same test users), with its standard error.
 */
function verdict(label: string, rows: readonly RecBenchRow[], names: ReadonlyMap<string, string>): string {
  const policyRows = rows.filter((r) => names.has(r.agent)).sort((a, b) => b.ndcg - a.ndcg);
  const sft = rows.find((r) => names.get(r.agent) === "SFT");
  const best = rows.find((r) => r.agent === "best mixture");
  const pts = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(2)}`;
  const against = (r: RecBenchRow, base: RecBenchRow | undefined, what: string) => {
    if (!base || base === r) return [];
    const d = pairedDifference(base.ndcgs, r.ndcgs);
    return [`${pts(d.mean)} (s.e. ${(100 * d.error).toFixed(2)}) against ${what}`];
  };
  const each = policyRows.map((r) => `${names.get(r.agent)} ${r.ndcg.toFixed(4)} (${[...against(r, sft, "SFT"), ...against(r, best, "the best mixture")].join(", ")})`);
  // The runner-up is the best row of another method (SFT, GRPO, SofT-GRPO), not the winner scored another way.
  const method = (r: RecBenchRow) => names.get(r.agent)!.split(",")[0]!;
  const first = policyRows[0];
  const second = first && policyRows.find((r) => method(r) !== method(first));
  const wins = first && second ? ` ${names.get(first.agent)} wins, ${against(first, second, names.get(second.agent)!)[0]}.` : "";
  // The two methods head to head: scored greedily, and each as it was trained (sampled; thinking in soft tokens).
  const named = (test: (name: string) => boolean) => policyRows.find((r) => test(names.get(r.agent)!));
  const heads = [
    ["greedy", named((n) => n === "SofT-GRPO, no thinking"), named((n) => n === "GRPO")],
    ["as each was trained", named((n) => n.startsWith("SofT-GRPO") && n.includes("soft tokens")), named((n) => n.startsWith("GRPO, sampled"))],
  ] as const;
  const head = heads.flatMap(([how, soft, grpo]) => (soft && grpo ? [`${how} ${against(soft, grpo, "GRPO")[0]}`] : []));
  const versus = head.length ? ` SofT-GRPO against GRPO: ${head.join("; ")}.` : "";
  return `${label}, policies by NDCG@10 (differences in points of NDCG@10 x 100, paired over the ${rows[0]?.users ?? 0} test users, with their standard errors):${wins}${versus} ${each.join("; ")}.`;
}

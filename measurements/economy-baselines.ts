/**
 * The rule-based households and the simulation ceiling on decision points, in the columns of the
 * economy's training report (a script, not a test):
 *   npm run build && node dist/measurements/economy-baselines.js [--households 100] [--points 2000] [--seed 1]
 *
 * Points come from a heuristic run (generator.ts); each baseline answers every point from what
 * the household saw (the ceiling from the path ahead), as JSON, and is scored by the reward the
 * trainer uses: -1 for a malformed reply, else the utility scaled between the point's worst (0)
 * and best (1) decisions.
 */
import { z } from "zod";
import {
  ceilingDecision,
  consumptionRule,
  decisionReport,
  economyParams,
  fixedPolicy,
  generateDecisionPoints,
  heuristicDecision,
  randomPolicy,
  type DecisionPoint,
  type DecisionReport,
} from "../worlds/economy/index.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/economy-baselines.js [--households N] [--months M] [--points K] [--seed S]

Scores rule-based households and the simulation ceiling on decision points of a heuristic run.

Options:
  --households N  households in the run (default 100)
  --months M      months of the run (default 240)
  --points K      decision points drawn from it (default 2000)
  --seed S        the run's seed (default 1)
  --help          this text`;

const args = scriptArgs({
  name: "economy-baselines",
  usage: USAGE,
  schema: z.object({
    households: z.coerce.number().int().min(1).default(100),
    months: z.coerce.number().int().min(1).default(240),
    points: z.coerce.number().int().min(1).default(2000),
    seed: z.coerce.number().int().default(1),
  }),
});

const params = economyParams({ households: args.households, months: args.months });
const points = generateDecisionPoints({ params, seed: args.seed, count: args.points });
const random = randomPolicy(args.seed);
const answer = (f: (p: DecisionPoint) => unknown) => points.map((p) => JSON.stringify(f(p)));

const baselines: [string, string[]][] = [
  ["heuristic (EconAgent's composite rule)", answer((p) => heuristicDecision(p.view, consumptionRule(args.seed, p.household)))],
  ["fixed: work 1, consumption 0.5 (EconAgent's fallback)", answer(() => fixedPolicy(1, 0.5).decide(points[0]!.view))],
  ["random", answer((p) => random.decide(p.view))],
  ["idle: work 0, consumption 0", answer(() => ({ work: 0, consumption: 0 }))],
  ["simulation ceiling (knows the path ahead)", answer(ceilingDecision)],
];

const f = (x: number | null, d = 3) => (x === null ? "n/a" : x.toFixed(d));
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
let out = `## Baselines on ${points.length} decision points (${args.households} households, ${args.months} months, seed ${args.seed})\n\n`;
out += "| agent | work mean | work std | consumption mean | consumption std | reward mean | utility mean | JSON parse rate | share of -1 |\n";
out += "|:---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
for (const [name, replies] of baselines) {
  const r: DecisionReport = decisionReport(points, replies);
  out += `| ${name} | ${f(r.workMean)} | ${f(r.workStd)} | ${f(r.consumptionMean)} | ${f(r.consumptionStd)} | ${f(r.reward)} | ${f(r.utility)} | ${pct(r.parseRate)} | ${pct(r.formatFailures)} |\n`;
}
process.stdout.write(out);

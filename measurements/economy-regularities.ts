/**
 * The Phillips curve and Okun's law in runs of the economy with rule-based households (a script,
 * not a test):
 *   npm run build && node dist/measurements/economy-regularities.js [--households 100,1000] [--seeds 5] [--policy RULE]
 *
 * Prints, for each run, the two correlations the issue asks for (Phillips: unemployment against
 * wage inflation; Okun: the change in unemployment against real GDP growth), Okun with the
 * relative change EconAgent's code logs, and what explains their signs: the correlation of
 * unemployment with the year's mean imbalance phi = (D - G) / max(D, G) (which drives wages),
 * of phi with wage inflation, of wage inflation with the next year's unemployment, of
 * unemployment with the share of the goods wanted that the firm could not serve and with the
 * households' mean log(savings / wage offer) (what the heuristic's work rule reads), and the
 * hourly skill of the households that did not work against the mean skill. Then the yearly
 * table of the first run.
 *
 * `--blind-forced-saving` is the counterfactual that names the heuristic's channel: the rule's
 * work decision reads its savings less the money shortages left unspent (the unserved spending,
 * carried forward as the household spends its consumption share of it each month), its
 * consumption decision the whole savings. The economy is not changed, only what the work rule sees.
 */
import { z } from "zod";
import {
  economyParams,
  HOUSEHOLD_RULES,
  pearson,
  ruleOrThrow,
  simulateEconomy,
  type EconomyRun,
  type HouseholdPolicy,
  type YearRow,
} from "../worlds/economy/index.js";
import { scriptArgs } from "./script-args.js";
import { householdList } from "./economy-options.js";

const USAGE = `node dist/measurements/economy-regularities.js [--households LIST] [--seeds N] [--first-seed S] [--months M] [--policy RULE] [--blind-forced-saving]

Runs the economy with rule-based households and prints the Phillips and Okun correlations, with
the quantities that explain their signs, then the first run's yearly indicators.

Options:
  --households LIST  populations, comma-separated (default 100,1000)
  --seeds N          runs per population, seeds S..S+N-1 (default 5)
  --first-seed S     the first seed (default 1)
  --months M         months a run lasts (default 240)
  --policy RULE      a household rule, as simulate --agent takes it: ${HOUSEHOLD_RULES.join(", ")}
                     (default heuristic; responsive:K works K more when its wage offer rose)
  --blind-forced-saving
                     the rule decides its work on its savings less the money shortages left
                     unspent (a counterfactual: the heuristic's channel to a positive Phillips)
  --help             this text`;

const args = scriptArgs({
  name: "economy-regularities",
  usage: USAGE,
  schema: z.object({
    households: householdList("100,1000"),
    seeds: z.coerce.number().int().min(1).default(5),
    "first-seed": z.coerce.number().int().min(0).default(1),
    months: z.coerce.number().int().min(24).default(240),
    policy: z
      .string()
      .default("heuristic")
      .superRefine((spec, ctx) => {
        try {
          ruleOrThrow(spec, 0);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: (err as Error).message });
        }
      }),
    "blind-forced-saving": z.boolean().default(false),
  }),
});

/**
 * The rule, or with --blind-forced-saving the rule whose work decision sees its savings less
 * `forced[i]`, the money shortages left unspent (kept up to date by the run's onMonth).
 */
function policyFor(seed: number, index: ReadonlyMap<string, number>, forced: Float64Array): HouseholdPolicy {
  const rule = ruleOrThrow(args.policy, seed);
  if (!args["blind-forced-saving"]) return rule;
  return {
    id: `${rule.id}, work blind to forced saving`,
    decide(o) {
      const own = forced[index.get(o.household)!]!;
      const net = { ...o, finances: { ...o.finances, savings: Math.max(0, o.finances.savings - own) } };
      return { work: rule.decide(net).work, consumption: rule.decide(o).consumption };
    },
  };
}

const f3 = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
const pct = (x: number | null) => (x === null ? "" : `${(x * 100).toFixed(2)}%`);

interface Diagnosed {
  readonly run: EconomyRun;
  readonly meanPhi: number[];
  /** Per year: the mean share of the goods wanted that the firm could not serve. */
  readonly unserved: number[];
  /** Per year: the mean over households and months of log(savings / wage offer). */
  readonly savingsToWage: number[];
  readonly idleSkill: number;
  readonly meanSkill: number;
}

function diagnosed(households: number, seed: number): Diagnosed {
  const params = economyParams({ households, months: args.months });
  const phi: number[] = [];
  const unserved: number[] = [];
  const savingsToWage: number[] = [];
  const forced = new Float64Array(households);
  const index = new Map(Array.from({ length: households }, (_, i) => [`household-${i + 1}`, i]));
  let idleSkill = 0;
  let idle = 0;
  let meanSkill = 0;
  const run = simulateEconomy({
    params,
    seed,
    policy: policyFor(seed, index, forced),
    onMonth: ({ stats, before, after, consumption }) => {
      const y = Math.floor((stats.month - 1) / params.monthsPerYear);
      const perMonth = 1 / params.monthsPerYear;
      phi[y] = (phi[y] ?? 0) + stats.imbalance * perMonth;
      unserved[y] = (unserved[y] ?? 0) + (stats.demand > 0 ? (stats.demand - stats.sold) / stats.demand : 0) * perMonth;
      const b = before.households;
      const h = after.households;
      let ratio = 0;
      for (let i = 0; i < households; i++) {
        // +1: savings start at 0.
        ratio += Math.log((b.savings[i]! + 1) / (params.hoursPerMonth * b.wage[i]!));
        forced[i] = forced[i]! * (1 - consumption[i]!) + (h.wanted[i]! - h.goods[i]!) * stats.price;
        if (stats.month === 1) meanSkill += h.skill[i]! / households;
        if (!h.worked[i]) {
          idleSkill += h.skill[i]!;
          idle++;
        }
      }
      savingsToWage[y] = (savingsToWage[y] ?? 0) + (ratio / households) * perMonth;
    },
  });
  return { run, meanPhi: phi, unserved, savingsToWage, idleSkill: idle ? idleSkill / idle : NaN, meanSkill };
}

const later = (rows: readonly YearRow[]) => rows.filter((r) => r.wageInflation !== null);

const lines: string[] = [];
let first: EconomyRun | undefined;
for (const households of args.households) {
  for (let seed = args["first-seed"]; seed < args["first-seed"] + args.seeds; seed++) {
    const d = diagnosed(households, seed);
    first ??= d.run;
    const ys = later(d.run.years);
    const u = ys.map((r) => r.unemployment);
    const wi = ys.map((r) => r.wageInflation!);
    const phi = ys.map((r) => d.meanPhi[r.year - 1]!);
    const unserved = ys.map((r) => d.unserved[r.year - 1]!);
    const savingsToWage = ys.map((r) => d.savingsToWage[r.year - 1]!);
    const okunRelative = pearson(
      ys.filter((r) => r.unemploymentGrowth !== null).map((r) => r.unemploymentGrowth!),
      ys.filter((r) => r.unemploymentGrowth !== null).map((r) => r.realGdpGrowth!),
    );
    lines.push(
      `| ${households.toLocaleString("en-US")} | ${seed} | ${f3(d.run.phillips)} | ${f3(d.run.okun)} | ${f3(okunRelative)} | ${f3(pearson(u, phi))} | ${f3(pearson(phi, wi))} | ${f3(pearson(wi.slice(0, -1), u.slice(1)))} | ${f3(pearson(u, unserved))} | ${f3(pearson(u, savingsToWage))} | ${d.idleSkill.toFixed(1)} / ${d.meanSkill.toFixed(1)} | ${pct(u.reduce((a, b) => a + b, 0) / u.length)} |`,
    );
    process.stderr.write(`${households} households, seed ${seed} done\n`);
  }
}

const who = args["blind-forced-saving"] ? `${args.policy} households, work blind to forced saving` : `${args.policy} households`;
let out = `## Phillips and Okun with ${who} (${args.months} months; years 2 on)\n\n`;
out +=
  "| households | seed | Phillips: corr(u, wage inflation) | Okun: corr(change in u, real GDP growth) | Okun, relative change in u | corr(u, mean phi) | corr(mean phi, wage inflation) | corr(wage inflation, next year's u) | corr(u, unserved share of demand) | corr(u, log savings / wage offer) | skill of the idle / mean skill | mean unemployment |\n";
out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
out += lines.join("\n") + "\n\n";
if (first) {
  out += `### Yearly indicators: ${args.households[0]} households, seed ${args["first-seed"]}\n\n`;
  out += "| year | real GDP | nominal GDP | price level | inflation | unemployment | wage | wage inflation | real GDP growth | interest rate |\n";
  out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const r of first.years) {
    out += `| ${r.year} | ${r.realGdp.toExponential(4)} | ${r.nominalGdp.toExponential(4)} | ${r.priceLevel.toFixed(2)} | ${pct(r.inflation)} | ${pct(r.unemployment)} | ${r.wage.toFixed(2)} | ${pct(r.wageInflation)} | ${pct(r.realGdpGrowth)} | ${pct(r.rate)} |\n`;
  }
  out += `\nPhillips ${f3(first.phillips)}, Okun ${f3(first.okun)}.\n`;
}
process.stdout.write(out);

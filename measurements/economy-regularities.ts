/**
 * The Phillips curve and Okun's law in runs of the economy with rule-based households (a script,
 * not a test):
 *   npm run build && node dist/measurements/economy-regularities.js [--households 100,1000] [--seeds 5] [--policy RULE]
 *
 * Prints, for each run, the two correlations the issue asks for (Phillips: unemployment against
 * wage inflation; Okun: the change in unemployment against real GDP growth), Okun with the
 * relative change EconAgent's code logs, and what explains their signs: the correlation of
 * unemployment with the year's mean imbalance phi = (D - G) / max(D, G) (which drives wages),
 * of phi with wage inflation, of wage inflation with the next year's unemployment, and the
 * hourly skill of the households that did not work against the mean skill. Then the yearly
 * table of the first run.
 */
import { z } from "zod";
import {
  economyParams,
  HOUSEHOLD_RULES,
  householdRule,
  pearson,
  simulateEconomy,
  type EconomyRun,
  type HouseholdPolicy,
  type YearRow,
} from "../worlds/economy/index.js";
import { scriptArgs } from "./script-args.js";
import { householdList } from "./economy-options.js";

const USAGE = `node dist/measurements/economy-regularities.js [--households LIST] [--seeds N] [--months M] [--policy RULE]

Runs the economy with rule-based households and prints the Phillips and Okun correlations, with
the quantities that explain their signs, then the first run's yearly indicators.

Options:
  --households LIST  populations, comma-separated (default 100,1000)
  --seeds N          runs per population, seeds 1..N (default 5)
  --months M         months a run lasts (default 240)
  --policy RULE      a household rule, as simulate --agent takes it: \${HOUSEHOLD_RULES.join(", ")}
                     (default heuristic; responsive:K works K more when its wage offer rose)
  --help             this text`;

const args = scriptArgs({
  name: "economy-regularities",
  usage: USAGE,
  schema: z.object({
    households: householdList("100,1000"),
    seeds: z.coerce.number().int().min(1).default(5),
    months: z.coerce.number().int().min(24).default(240),
    policy: z
      .string()
      .default("heuristic")
      .superRefine((spec, ctx) => {
        try {
          if (!householdRule(spec, 0)) ctx.addIssue({ code: "custom", message: `not a household rule: "${spec}" (${HOUSEHOLD_RULES.join(", ")})` });
        } catch (err) {
          ctx.addIssue({ code: "custom", message: (err as Error).message });
        }
      }),
  }),
});

function policyFor(seed: number): HouseholdPolicy {
  return householdRule(args.policy, seed)!;
}

const f3 = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
const pct = (x: number | null) => (x === null ? "" : `${(x * 100).toFixed(2)}%`);

interface Diagnosed {
  readonly run: EconomyRun;
  readonly meanPhi: number[];
  readonly idleSkill: number;
  readonly meanSkill: number;
}

function diagnosed(households: number, seed: number): Diagnosed {
  const params = economyParams({ households, months: args.months });
  const phi: number[] = [];
  let idleSkill = 0;
  let idle = 0;
  let meanSkill = 0;
  const run = simulateEconomy({
    params,
    seed,
    policy: policyFor(seed),
    onMonth: ({ stats, after }) => {
      const y = Math.floor((stats.month - 1) / params.monthsPerYear);
      phi[y] = (phi[y] ?? 0) + stats.imbalance / params.monthsPerYear;
      const h = after.households;
      for (let i = 0; i < households; i++) {
        if (stats.month === 1) meanSkill += h.skill[i]! / households;
        if (!h.worked[i]) {
          idleSkill += h.skill[i]!;
          idle++;
        }
      }
    },
  });
  return { run, meanPhi: phi, idleSkill: idle ? idleSkill / idle : NaN, meanSkill };
}

const later = (rows: readonly YearRow[]) => rows.filter((r) => r.wageInflation !== null);

const lines: string[] = [];
let first: EconomyRun | undefined;
for (const households of args.households) {
  for (let seed = 1; seed <= args.seeds; seed++) {
    const d = diagnosed(households, seed);
    first ??= d.run;
    const ys = later(d.run.years);
    const u = ys.map((r) => r.unemployment);
    const wi = ys.map((r) => r.wageInflation!);
    const phi = ys.map((r) => d.meanPhi[r.year - 1]!);
    const okunRelative = pearson(
      ys.filter((r) => r.unemploymentGrowth !== null).map((r) => r.unemploymentGrowth!),
      ys.filter((r) => r.unemploymentGrowth !== null).map((r) => r.realGdpGrowth!),
    );
    lines.push(
      `| ${households.toLocaleString("en-US")} | ${seed} | ${f3(d.run.phillips)} | ${f3(d.run.okun)} | ${f3(okunRelative)} | ${f3(pearson(u, phi))} | ${f3(pearson(phi, wi))} | ${f3(pearson(wi.slice(0, -1), u.slice(1)))} | ${d.idleSkill.toFixed(1)} / ${d.meanSkill.toFixed(1)} | ${pct(u.reduce((a, b) => a + b, 0) / u.length)} |`,
    );
    process.stderr.write(`${households} households, seed ${seed} done\n`);
  }
}

let out = `## Phillips and Okun with ${args.policy} households (${args.months} months; years 2 on)\n\n`;
out +=
  "| households | seed | Phillips: corr(u, wage inflation) | Okun: corr(change in u, real GDP growth) | Okun, relative change in u | corr(u, mean phi) | corr(mean phi, wage inflation) | corr(wage inflation, next year's u) | skill of the idle / mean skill | mean unemployment |\n";
out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
out += lines.join("\n") + "\n\n";
if (first) {
  out += `### Yearly indicators: ${args.households[0]} households, seed 1\n\n`;
  out += "| year | real GDP | nominal GDP | price level | inflation | unemployment | wage | wage inflation | real GDP growth | interest rate |\n";
  out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const r of first.years) {
    out += `| ${r.year} | ${r.realGdp.toExponential(4)} | ${r.nominalGdp.toExponential(4)} | ${r.priceLevel.toFixed(2)} | ${pct(r.inflation)} | ${pct(r.unemployment)} | ${r.wage.toFixed(2)} | ${pct(r.wageInflation)} | ${pct(r.realGdpGrowth)} | ${pct(r.rate)} |\n`;
  }
  out += `\nPhillips ${f3(first.phillips)}, Okun ${f3(first.okun)}.\n`;
}
process.stdout.write(out);

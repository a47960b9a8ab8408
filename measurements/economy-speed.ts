/**
 * Speed of the economy with rule-based households (a script, not a test):
 *   npm run build && node dist/measurements/economy-speed.js [--households 100,1000,10000] [--months 240] [--runs 3]
 *
 * Prints a Markdown table: for each population, the time to draw the skills (SimpleLabor's
 * 1000 sorted samples), then a whole run with the heuristic households (EconAgent's baseline)
 * and, as the peer in the same process, a run with fixed propensities (the dynamics alone, with
 * the observations every household is shown, but no decision rule): medians of `--runs`
 * alternating runs, on one core (Node runs the simulation on one thread). The target:
 * 10,000 households x 240 months in under a minute.
 */
import { z } from "zod";
import { economyParams, fixedPolicy, heuristicPolicy, initialEconomy, simulateEconomy, type HouseholdPolicy } from "../worlds/economy/index.js";
import { median } from "./speed-table.js";
import { scriptArgs } from "./script-args.js";
import { householdList } from "./economy-options.js";

const USAGE = `node dist/measurements/economy-speed.js [--households LIST] [--months M] [--runs R] [--seed S]

Times runs of the economy world with rule-based households.

Options:
  --households LIST  populations to time, comma-separated (default 100,1000,10000)
  --months M         months a run lasts (default 240)
  --runs R           runs of each kind per population; medians are printed (default 3)
  --seed S           the economy's seed (default 1)
  --help             this text`;

const args = scriptArgs({
  name: "economy-speed",
  usage: USAGE,
  schema: z.object({
    households: householdList("100,1000,10000"),
    months: z.coerce.number().int().min(1).default(240),
    runs: z.coerce.number().int().min(1).default(3),
    seed: z.coerce.number().int().default(1),
  }),
});

function seconds(f: () => void): number {
  const t0 = performance.now();
  f();
  return (performance.now() - t0) / 1000;
}

const rows: string[] = [];
for (const households of args.households) {
  const params = economyParams({ households, months: args.months });
  const skills: number[] = [];
  const heuristic: number[] = [];
  const fixed: number[] = [];
  const run = (policy: HouseholdPolicy) => {
    const initialState = initialEconomy(params, args.seed);
    return seconds(() => void simulateEconomy({ params, seed: args.seed, policy, initialState }));
  };
  for (let r = 0; r < args.runs; r++) {
    skills.push(seconds(() => void initialEconomy(params, args.seed)));
    heuristic.push(run(heuristicPolicy(args.seed)));
    fixed.push(run(fixedPolicy(1, 0.5)));
  }
  const h = median(heuristic);
  const f = median(fixed);
  const s = median(skills);
  const hm = households * args.months;
  rows.push(
    `| ${households.toLocaleString("en-US")} | ${args.months} | ${hm.toLocaleString("en-US")} | ${(s * 1000).toFixed(0)} | ${h.toFixed(2)} | ${f.toFixed(2)} | ${(h / f).toFixed(2)} | ${(s + h).toFixed(2)} | ${Math.round(hm / h).toLocaleString("en-US")} |`,
  );
  process.stderr.write(`${households} households done\n`);
}
process.stdout.write(
  `## Economy speed (rule-based households, one core; medians of ${args.runs} runs)\n\n` +
    "| households | months | household-months | skills (ms) | heuristic run (s) | fixed run (s) | heuristic / fixed | skills + heuristic run (s) | household-months per second (heuristic) |\n" +
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
    rows.join("\n") +
    "\n",
);

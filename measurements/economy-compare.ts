/**
 * Base against trained (a script, not a test): each agent answers the same decision points, in
 * the columns of the seed's training report (work and consumption mean and std, reward mean, JSON
 * parse rate, share of -1 rewards, and the utility), then runs an economy of its own, whose
 * yearly indicators give its Phillips and Okun correlations, and whose decisions' mean and std say
 * whether a policy answers every household alike (mode collapse):
 *
 *   npm run build && node dist/measurements/economy-compare.js \
 *     --agents base=policy:ckpt/base,trained=policy:ckpt/grpo,heuristic [--points 400] [--households 100] [--months 240]
 *
 * A model agent is asked as `simulate` asks it (every household of a month at once, so a policy's
 * engine batches them; a reply it cannot read gets EconAgent's fallback in the economy, and -1 on
 * the decision points). Prints Markdown tables, with every agent after the first paired against it
 * point by point (replies and decisions that differ, the reward and utility differences with their
 * standard errors); `--replies FILE` also writes every agent's reply at every point with its
 * decision and score (JSON Lines).
 */
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { checkAgentSpec, loadAgent } from "../agents/registry.js";
import type { AgentTurn } from "../worlds/core/agent.js";
import {
  decisionReport,
  economyParams,
  EconomyRunner,
  generateDecisionPoints,
  HouseholdDecisionSchema,
  householdRule,
  meanStd,
  MonthDataSchema,
  pairedDifference,
  renderObservation,
  scoreReply,
  type Deciders,
  type DecisionReport,
  type EconomyRun,
} from "../worlds/economy/index.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/economy-compare.js --agents NAME=SPEC,... [options]

Each agent (a household rule, or policy:DIR, onnx:DIR, llm:MODEL) answers the same decision points
and runs an economy; prints the seed's report columns and the macro regularities per agent.

Options:
  --agents LIST    comma-separated NAME=SPEC or SPEC (default heuristic)
  --points K       decision points of a heuristic run of the default economy (default 400)
  --point-seed S   the seed of that run (default 1)
  --households N   households of each agent's own economy (default 100)
  --months M       its months (default 240)
  --seed S         its seed (default 0)
  --replies FILE   write every agent's reply at every point, with its decision, reward and utility (JSON Lines)
  --help           this text`;

const args = scriptArgs({
  name: "economy-compare",
  usage: USAGE,
  schema: z.object({
    agents: z.string().min(1).default("heuristic"),
    points: z.coerce.number().int().min(1).default(400),
    "point-seed": z.coerce.number().int().min(0).default(1),
    households: z.coerce.number().int().min(1).default(100),
    months: z.coerce.number().int().min(1).default(240),
    seed: z.coerce.number().int().min(0).default(0),
    replies: z.string().min(1).optional(),
  }),
});

/** The agents: NAME=SPEC, or SPEC named after itself. */
const agents = args.agents.split(",").map((part) => {
  const i = part.indexOf("=");
  const [name, spec] = i > 0 && !part.slice(0, i).includes(":") ? [part.slice(0, i), part.slice(i + 1)] : [part, part];
  return { name, spec };
});

async function decidersFor(spec: string, seed: number): Promise<Deciders> {
  const policy = householdRule(spec, seed);
  if (policy) return { kind: "rule", policy };
  checkAgentSpec(spec);
  return { kind: "model", agent: await loadAgent(spec) };
}

const points = generateDecisionPoints({ params: economyParams(), seed: args["point-seed"], count: args.points });
const params = economyParams({ households: args.households, months: args.months });
const replyLines: string[] = [];
const rows: { name: string; replies: string[]; report: DecisionReport; run: EconomyRun; spread: { work: number[]; consumption: number[] }; fallbacks: number | null; seconds: number }[] = [];
for (const { name, spec } of agents) {
  const started = performance.now();
  const deciders = await decidersFor(spec, args.seed);
  // The decision points: the household's prompt, the reply as written (an agent's error: no reply).
  const errors: string[] = [];
  const replies = await Promise.all(
    points.map(async (p, k) => {
      if (deciders.kind === "rule") return JSON.stringify(deciders.policy.decide(p.view));
      const turn: AgentTurn = { world: "economy", agent: p.household, timestep: p.month, observation: { text: renderObservation(p.view), data: p.view }, actionSchema: HouseholdDecisionSchema };
      try {
        const r = await deciders.agent.act(turn);
        return r.raw ?? JSON.stringify(r.action);
      } catch (err) {
        errors.push(`point ${k}: ${(err as Error).message}`);
        return "";
      }
    }),
  );
  if (errors.length) process.stderr.write(`${name}: ${errors.length} of ${points.length} points failed (first: ${errors[0]})\n`);
  const report = decisionReport(points, replies);
  replies.forEach((reply, k) => {
    const s = scoreReply(points[k]!, reply);
    const scored = s.format ? { work: s.decision.work, consumption: s.decision.consumption, reward: s.reward, utility: s.utility } : { reward: s.reward, error: s.error };
    replyLines.push(JSON.stringify({ agent: name, point: points[k]!.id, reply, ...scored }));
  });
  const sim = new EconomyRunner({ params, seed: args.seed, agentId: spec, deciders, logHouseholds: 0 });
  const spread = { work: [] as number[], consumption: [] as number[] };
  while (sim.done < sim.total) {
    const { decisions } = MonthDataSchema.parse(await sim.step());
    spread.work.push(...decisions.work);
    spread.consumption.push(...decisions.consumption);
    if (sim.done % 12 === 0) process.stderr.write(`\r${name}: year ${sim.done / 12} of ${Math.ceil(sim.total / 12)}`);
  }
  process.stderr.write("\n");
  const c = sim.counts;
  rows.push({ name, replies, report, run: sim.result(), spread, fallbacks: c.turns ? c.fallbacks / c.turns : null, seconds: (performance.now() - started) / 1000 });
}

if (args.replies) writeFileSync(args.replies, replyLines.join("\n") + "\n");

const f = (x: number | null, d = 3) => (x === null ? "n/a" : x.toFixed(d));
const pct = (x: number | null) => (x === null ? "n/a" : `${(x * 100).toFixed(1)}%`);
let out = `## ${points.length} decision points (a heuristic run of the default economy, seed ${args["point-seed"]})\n\n`;
out += "| agent | work mean | work std | consumption mean | consumption std | reward mean | utility mean | JSON parse rate | share of -1 |\n|:---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
for (const { name, report: r } of rows) out += `| ${name} | ${f(r.workMean)} | ${f(r.workStd)} | ${f(r.consumptionMean)} | ${f(r.consumptionStd)} | ${f(r.reward)} | ${f(r.utility)} | ${pct(r.parseRate)} | ${pct(r.formatFailures)} |\n`;
if (rows.length > 1) {
  // Point by point against the first agent: a tie of two rows to three decimals is either the same
  // replies or a difference within the noise of the points, which the standard error tells apart.
  const first = rows[0]!;
  const sign = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
  const cell = (d: { mean: number; error: number } | null) => (d === null ? "n/a" : `${sign(d.mean)} (${d.error.toFixed(4)})`);
  out += `\n## Point by point against ${first.name} (the difference of the means, its standard error over the ${points.length} points)\n\n`;
  out += "| agent | replies that differ | decisions that differ | reward difference (s.e.) | utility difference (s.e.) |\n|:---|---:|---:|---:|---:|\n";
  for (const row of rows.slice(1)) {
    const d = pairedDifference(points, first.replies, row.replies);
    out += `| ${row.name} | ${d.differing} | ${d.differentDecisions} | ${cell(d.reward)} | ${cell(d.utility)} |\n`;
  }
}
out += `\n## Each agent's economy (${args.households} households, ${args.months} months, seed ${args.seed})\n\n`;
out += "| agent | Phillips corr(u, wage inflation) | Okun corr(du, GDP growth) | mean unemployment | mean inflation | work mean (std) | consumption mean (std) | fallbacks | seconds |\n|:---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
const mean = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};
const spreadCell = (xs: readonly number[]) => {
  const [m, sd] = meanStd(xs);
  return `${f(m)} (${f(sd)})`;
};
for (const { name, run, spread, fallbacks, seconds } of rows) {
  out += `| ${name} | ${f(run.phillips)} | ${f(run.okun)} | ${pct(mean(run.years.map((y) => y.unemployment)))} | ${pct(mean(run.years.map((y) => y.inflation)))} | ${spreadCell(spread.work)} | ${spreadCell(spread.consumption)} | ${pct(fallbacks)} | ${seconds.toFixed(1)} |\n`;
}
process.stdout.write(out);

/**
 * `socialworld simulate economy [--households N] [--months M] [--agent A] [--json OUT] [options]`
 */
import { resolve } from "node:path";
import { z } from "zod";
import { AgentSpecError } from "../../agents/agent-spec-error.js";
import { checkAgentSpec, loadAgent } from "../../agents/registry.js";
import { ResumeRefused } from "../../benchmarks/session.js";
import { SimulationSession } from "../../benchmarks/simulation-session.js";
import { RunStore } from "../../store/run-store.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import {
  correlationYears,
  ECONOMY_DEFAULTS,
  EconomyParamsFields,
  EconomyRunner,
  economyParams,
  DEFAULT_HOUSEHOLD_RULE,
  HOUSEHOLD_RULES,
  householdRule,
  LOGGED_HOUSEHOLDS,
  type Deciders,
  type EconomyParamsInput,
  type YearRow,
} from "../../worlds/economy/index.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";
import { onStopSignal } from "../stop-signals.js";

/** Every parameter of the economy as a flag: bracketCutoffs is --bracket-cutoffs. */
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const PARAM_KEYS = Object.keys(EconomyParamsFields.shape) as (keyof typeof EconomyParamsFields.shape)[];
const LIST_PARAMS = new Set(["bracketCutoffs", "bracketRates"]);

function paramLines(): string {
  return PARAM_KEYS.map((k) => {
    const value = ECONOMY_DEFAULTS[k];
    const shown = k === "initialPrice" ? "mean skill" : Array.isArray(value) ? value.map((v) => +v.toFixed(4)).join(",") : String(value);
    const about = EconomyParamsFields.shape[k].description ?? "";
    return `  --${kebab(k).padEnd(24)} ${about} (default ${shown})`;
  }).join("\n");
}

export const SIMULATE_HELP = `socialworld simulate economy [--households N] [--months M] [--agent A] [--json OUT] [options]

Runs the economy of EconAgent (Li et al., ACL 2024; docs/worlds/economy.md): every month each
household decides how willing it is to work and what share of its money to spend, and the
economy answers (wages, taxes paid back in equal shares, prices and wages following the goods
market, interest and the Taylor rule). Prints the yearly indicators and the two regularities:
Phillips (corr of unemployment with wage inflation) and Okun (corr of the change in unemployment
with real GDP growth, and with its relative change).

The run is logged to the store (socialworld runs show RUN): one record per month with every
household's decision and the logged households' prompts and decisions, the socialized context of
the run (socialworld export --run RUN --format sap|sft|chat --turns); report.json holds the
yearly table and the correlations.

Agents (--agent, default ${DEFAULT_HOUSEHOLD_RULE}):
  heuristic              EconAgent's rule-based households (simulate.py's complex_actions); their
                         economy's Phillips correlation is positive (docs/worlds/economy.md says why)
  responsive[:K]         the heuristic, working K more (less) when its wage offer rose (fell), as
                         EconAgent's prompt tells its agents why their pay moved; K 0.1. The default:
                         its economy shows the Phillips curve
  fixed[:W,C]            the same propensities every month (default work 1, consumption 0.5)
  random                 uniform propensities
  policy:DIR[?options]   a checkpoint on the native engine (households asked in batches)
  onnx:DIR[?options]     an ONNX decoder folder
  llm:MODEL[@URL][?opts] an OpenAI-compatible endpoint

Run:
  --seed S               the economy's seed (default 0): skills, work draws, purchases, wages
  --json OUT             also write the report (yearly table, phillips, okun) as JSON
  --log-households N     households whose prompts and decisions the log keeps as text (default:
                         ${LOGGED_HOUSEHOLDS} with a rule, all with a model; every decision is logged)
  --resume RUN           take up an interrupted run (same parameters, seed and agent)
  --threads N            CPU threads of a policy's engine
  --store DIR            where the run is logged (default: data/, or $SOCIALWORLD_DATA)
  --quiet                no progress bar

The economy's parameters (docs/worlds/economy.md cites where each default comes from):
${paramLines()}
`;

const Args = z.object({
  _: z.tuple([z.literal("economy", { error: 'expected the world to simulate: "economy"' })], { error: 'expected the world to simulate: "economy"' }),
  agent: z.string().min(1).default(DEFAULT_HOUSEHOLD_RULE),
  seed: intArg(0, 2 ** 32 - 1).default(0),
  json: z.string().min(1).optional(),
  "log-households": intArg(0).optional(),
  resume: z.string().min(1).optional(),
  threads: intArg(1, 1024).optional(),
  store: z.string().min(1).optional(),
  quiet: z.boolean().default(false),
  ...Object.fromEntries(PARAM_KEYS.map((k) => [kebab(k), z.string().min(1).optional()])),
});

/** The economy's parameters from their flags; a bad value names its flag. */
function paramsFrom(values: Record<string, unknown>): ReturnType<typeof economyParams> {
  const input: Record<string, unknown> = {};
  for (const k of PARAM_KEYS) {
    const raw = values[kebab(k)];
    if (typeof raw !== "string") continue;
    const number = (text: string) => {
      const x = Number(text);
      if (text.trim() === "" || !Number.isFinite(x)) throw new UsageError(`--${kebab(k)}: expected a number, got "${text}"`);
      return x;
    };
    input[k] = LIST_PARAMS.has(k) ? raw.split(",").map(number) : number(raw);
  }
  try {
    return economyParams(input as EconomyParamsInput);
  } catch (err) {
    const m = /^economy parameter ([\w.]+): (.*)$/.exec((err as Error).message);
    if (!m) throw err;
    const [field, ...rest] = m[1]!.split(".");
    throw new UsageError(`--${kebab(field!)}${rest.length ? ` (item ${rest.join(".")})` : ""}: ${m[2]}`);
  }
}

const pct = (x: number | null) => (x === null ? "" : `${(100 * x).toFixed(2)}%`);
/**
 * A correlation, or why there is none: fewer than three years with both values (`pairs`), or a
 * series that never moves (households that always work are never unemployed).
 */
const corr = (x: number | null, pairs: number, few = "too few years") => (x !== null ? x.toFixed(3) : pairs < 3 ? `n/a (${few})` : "n/a (a series without variation)");

/** The yearly table as the command prints it (markdown). */
export function yearTable(years: readonly YearRow[]): string {
  const rows = years.map(
    (r) =>
      `| ${r.year} | ${r.realGdp.toExponential(4)} | ${r.priceLevel.toFixed(2)} | ${pct(r.inflation)} | ${pct(r.unemployment)} | ${r.wage.toFixed(2)} | ${pct(r.wageInflation)} | ${pct(r.realGdpGrowth)} | ${pct(r.rate)} |`,
  );
  return ["| year | real GDP | price level | inflation | unemployment | hourly wage | wage inflation | real GDP growth | interest rate |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|", ...rows].join("\n");
}

/** The household rule or model agent `spec` names; a model is loaded here, so a bad folder fails before the run exists. */
async function decidersFor(spec: string, seed: number): Promise<Deciders> {
  let policy;
  try {
    policy = householdRule(spec, seed);
  } catch (err) {
    throw new UsageError(`--agent: ${(err as Error).message}`);
  }
  if (policy) return { kind: "rule", policy };
  try {
    checkAgentSpec(spec);
  } catch (err) {
    throw new UsageError(`--agent: ${(err as Error).message.replace(/^unknown agent "[^"]*" \(known: /, `unknown agent "${spec}" (household rules: ${HOUSEHOLD_RULES.join(", ")}; models: `)}`);
  }
  if (spec === "simulation" || spec.startsWith("random:")) {
    throw new UsageError(`--agent: ${spec} answers benchmark questions, it does not run a household (household rules: ${HOUSEHOLD_RULES.join(", ")}; or policy:DIR, onnx:DIR, llm:MODEL)`);
  }
  try {
    return { kind: "model", agent: await loadAgent(spec) };
  } catch (err) {
    if (err instanceof AgentSpecError) throw new UsageError(`--agent: ${err.message}`);
    throw err;
  }
}

export async function simulateCommand(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, Args);
  const params = paramsFrom(a);
  if (a.json) prepareOutput("--json", a.json);
  if (a.threads) (await import("../../models/native.js")).loadNative().setThreads(a.threads);
  const store = await RunStore.open(a.store);
  const deciders = await decidersFor(a.agent, a.seed);
  const started = performance.now();
  const sim = new EconomyRunner({
    params,
    seed: a.seed,
    agentId: a.agent,
    deciders,
    ...(a["log-households"] !== undefined ? { logHouseholds: a["log-households"] } : {}),
  });
  const n = params.households;
  let session: SimulationSession;
  try {
    session = await SimulationSession.start({
      store,
      sim,
      title: `economy · ${n.toLocaleString("en-US")} households × ${params.months} months · ${a.agent}`,
      params: { seed: a.seed, agent: a.agent, logHouseholds: sim.logged, economy: params },
      sameOnResume: ["seed", "agent", "logHouseholds", "economy"],
      ...(a.resume ? { resume: a.resume } : {}),
    });
  } catch (err) {
    if (err instanceof ResumeRefused) throw new UsageError(`--resume: ${err.message}`);
    throw err;
  }
  process.stderr.write(
    `${a.resume ? `resuming run ${session.run.id} at month ${sim.done + 1}` : `run ${session.run.id}`}: ${n.toLocaleString("en-US")} households × ${params.months} months, ${a.agent} (${deciders.kind}), seed ${a.seed}\n`,
  );
  const progress = new Progress("economy", params.months, a.quiet ? null : process.stderr);
  progress.update(sim.done);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  try {
    while (sim.done < sim.total && !controller.signal.aborted) {
      await session.step();
      const m = sim.lastMonth!;
      progress.update(m.month, () => `unemployment ${pct(1 - m.employed / m.households)} · price $${m.priceAfter.toFixed(2)}`);
    }
    if (controller.signal.aborted) {
      await session.close("interrupted");
      process.stderr.write(`\ninterrupted after month ${sim.done}: continue with --resume ${session.run.id}\n`);
      return signals.exitCode;
    }
  } catch (err) {
    await session.close("failed", (err as Error).message);
    throw err;
  } finally {
    signals.dispose();
  }
  progress.finish();
  const report = await session.close("done");
  if (a.json) writeFileAtomic(a.json, JSON.stringify(report, null, 2) + "\n");
  const result = sim.result();
  const years = correlationYears(result.years);
  const c = sim.counts;
  process.stdout.write(
    `${yearTable(result.years)}\n\n` +
      `Phillips curve: corr(unemployment, wage inflation) = ${corr(result.phillips, years.phillips)}\n` +
      `Okun's law: corr(change in unemployment, real GDP growth) = ${corr(result.okun, years.okun)}; with the relative change of unemployment ${corr(result.okunRelative, years.okunRelative, "too few years with real GDP growth after one with unemployment")}\n` +
      (c.turns ? `replies: ${c.turns.toLocaleString("en-US")}, exactly the decision's JSON ${pct(c.strict / c.turns)}, fallbacks ${pct(c.fallbacks / c.turns)}\n` : "") +
      `${n.toLocaleString("en-US")} households × ${sim.done} months in ${((performance.now() - started) / 1000).toFixed(1)} s (skills drawn, ${a.resume ? "logged months replayed, " : ""}months run and logged)\n` +
      `run ${session.run.id} in ${resolve(store.dirOf(session.run))}${a.json ? `; report in ${a.json}` : ""}\n`,
  );
  return 0;
}

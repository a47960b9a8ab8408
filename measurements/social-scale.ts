/**
 * The social world at scale, headless: a generated network of N users (network.ts), one post
 * cascade per 1,000 users started at time 0, every user played by the rule agent (the latent
 * model), stepped on one core until every cascade has died out. Each size runs in its own
 * process so that its peak memory is its own. Prints a Markdown table: agent-steps per CPU
 * second of the stepping (every user's turn every step counts, as the World's loop asks every
 * agent; CPU time, not wall time, so that a shared host's other work does not count), what happened
 * (sessions, decisions, reactions, exposures), the engine's typed arrays and the process's peak
 * resident memory. The peer row runs the same rule agents through the World interface (SocialWorld:
 * a Map of actions, observations, the state cloned each step), as rooms run it.
 *
 *   npm run bench:social -- [--users 10000,100000,1000000] [--viral 100000] [--peer 10000]
 *
 * Targets (issue 28): 1,000,000 users within 8 GB, >= 200,000 agent-steps/s on one core.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { Rng } from "../worlds/core/rng.js";
import { generateNetwork, graphBytes, initialSocialState, ruleAction, SocialSim, SocialWorld, topInterest, type SocialAction, type SocialState } from "../worlds/social/index.js";
import { scriptArgs } from "./script-args.js";

/**
 * Latent engagement offsets of the headless runs (behavior.ts): at -2 a cascade gathers tens of
 * reactions (a typical post), at -1 thousands (a viral one); both die out.
 */
export const TYPICAL_ENGAGEMENT = -2;
export const VIRAL_ENGAGEMENT = -1;
const MAX_STEPS = 2000;

interface Result {
  readonly users: number;
  readonly path: "headless" | "world";
  readonly engagement: number;
  readonly edges: number;
  /** CPU time to generate the network. */
  readonly buildSeconds: number;
  readonly steps: number;
  readonly quiet: boolean;
  readonly seconds: number;
  /** CPU time of the stepping (user + system): on a shared host, what one core did. */
  readonly cpuSeconds: number;
  readonly agentSteps: number;
  readonly sessions: number;
  readonly decisions: number;
  readonly reactions: number;
  readonly items: number;
  readonly exposures: number;
  readonly arrayMB: number;
  readonly peakRssMB: number;
}

function run(users: number, path: Result["path"], engagement: number): Result {
  const built = process.cpuUsage();
  const { population, graph } = generateNetwork({ users, seed: 1 });
  const buildSeconds = cpuSince(built);
  const sim = new SocialSim(population, graph, { seed: 7, engagement, maxDepth: 3 });
  const rng = Rng.seeded("social-scale");
  const cascades = Math.max(1, Math.round(users / 1000));
  for (let k = 0; k < cascades; k++) {
    const author = rng.int(users);
    sim.post(author, topInterest(population, author));
  }
  const posts = sim.stats.actions;
  let steps = 0;
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  if (path === "headless") {
    while (!sim.isQuiet() && steps < MAX_STEPS) {
      sim.stepRuleAgents(rng);
      if (++steps % 50 === 0) process.stderr.write(`  ${users} users: step ${steps}, ${sim.openSessions} sessions open, ${sim.items.length} items\n`);
    }
  } else {
    const world = new SocialWorld();
    let state: SocialState = initialSocialState(sim);
    const names = world.agents(state);
    while (!world.isTerminal(state) && steps < MAX_STEPS) {
      const actions = new Map<string, SocialAction>();
      for (const name of names) {
        // What the loop does for each agent: its observation, then its act.
        world.observe(state, name);
        actions.set(name, ruleAction(state, name));
      }
      state = world.step(state, actions, { rng, exogenous: [] }).state;
      steps++;
    }
    const s = state.sim;
    return result(users, path, engagement, graph.following.length, buildSeconds, steps, s, (performance.now() - start) / 1000, cpuSince(cpu0), posts);
  }
  return result(users, path, engagement, graph.following.length, buildSeconds, steps, sim, (performance.now() - start) / 1000, cpuSince(cpu0), posts);
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}

function result(users: number, path: Result["path"], engagement: number, edges: number, buildSeconds: number, steps: number, sim: SocialSim, seconds: number, cpuSeconds: number, posts: number): Result {
  const pop = sim.population;
  const popBytes = pop.interests.byteLength + pop.stances.byteLength + pop.activity.byteLength + pop.styles.byteLength;
  return {
    users,
    path,
    engagement,
    edges,
    buildSeconds,
    steps,
    quiet: sim.isQuiet(),
    seconds,
    cpuSeconds,
    agentSteps: sim.stats.agentSteps,
    sessions: sim.stats.sessions,
    decisions: sim.stats.decisions,
    reactions: sim.stats.actions - posts,
    items: sim.items.length,
    exposures: sim.seen.size,
    arrayMB: (sim.bytes() + graphBytes(sim.graph) + popBytes) / 2 ** 20,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

const fmt = (x: number, digits = 0) => x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

const HEAD = "| users | path | engagement | follows | build CPU (s) | steps | stepping (s) | CPU (s) | agent-steps per CPU-s | decisions per CPU-s | sessions | decisions | reactions | exposures | arrays (MB) | peak RSS (MB) |";
const RULE = "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

export function scaleRow(r: Result): string {
  const cells = [
    fmt(r.users),
    r.path,
    String(r.engagement),
    fmt(r.edges),
    fmt(r.buildSeconds, 2),
    `${fmt(r.steps)}${r.quiet ? "" : " (cut)"}`,
    fmt(r.seconds, 2),
    fmt(r.cpuSeconds, 2),
    fmt(r.agentSteps / r.cpuSeconds),
    fmt(r.decisions / r.cpuSeconds),
    fmt(r.sessions),
    fmt(r.decisions),
    fmt(r.reactions),
    fmt(r.exposures),
    fmt(r.arrayMB, 1),
    fmt(r.peakRssMB),
  ];
  return `| ${cells.join(" | ")} |`;
}

const sizes = z
  .string()
  .regex(/^(\d+(,\d+)*)?$/, "expected comma-separated numbers of users")
  .transform((x) => (x === "" ? [] : x.split(",").map(Number)))
  .refine((xs) => xs.every((n) => n >= 2 && n <= 10_000_000), "each size must be between 2 and 10,000,000 users");

const Args = z.object({
  users: sizes.default([10_000, 100_000, 1_000_000]),
  viral: sizes.default([100_000]),
  peer: intArg(0, 10_000_000).default(10_000),
  child: intArg(2, 10_000_000).optional(),
  path: z.enum(["headless", "world"]).default("headless"),
  engagement: z.coerce.number().default(TYPICAL_ENGAGEMENT),
});

const USAGE = `node dist/measurements/social-scale.js [options]   (or: npm run bench:social -- [options])

The social world at scale, headless: generated networks, one post cascade per 1,000 users, rule
agents stepped on one core until every cascade has died out; each size in a process of its own.
Prints a Markdown table (agent-steps and decisions per CPU second, peak memory).

Options:
  --users N,N,...   network sizes at the typical engagement (default 10000,100000,1000000)
  --viral N,...     sizes at the viral engagement, -1 (default 100000; "" for none)
  --peer N          size of the peer row through the World interface (default 10000; 0: none)
  --help            this text`;

function main(): void {
  const args = scriptArgs({
    name: "social-scale",
    usage: USAGE,
    schema: Args,
  });
  if (args.child !== undefined) {
    process.stdout.write(JSON.stringify(run(args.child, args.path, args.engagement)) + "\n");
    return;
  }
  const peer = args.peer;
  const jobs: [number, Result["path"], number][] = [
    ...args.users.map((n): [number, Result["path"], number] => [n, "headless", TYPICAL_ENGAGEMENT]),
    ...args.viral.map((n): [number, Result["path"], number] => [n, "headless", VIRAL_ENGAGEMENT]),
  ];
  if (peer > 0) jobs.push([peer, "world", TYPICAL_ENGAGEMENT]);
  const results: Result[] = [];
  // Rows are printed as they come: the million-user runs take minutes.
  process.stdout.write(`${HEAD}\n${RULE}\n`);
  for (const [n, path, engagement] of jobs) {
    process.stderr.write(`${path}, ${fmt(n)} users, engagement ${engagement}...\n`);
    const args = [fileURLToPath(import.meta.url), "--child", String(n), "--path", path, "--engagement", String(engagement)];
    const r = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`the run with ${n} users failed (exit ${r.status ?? r.signal})`);
    const result = JSON.parse(r.stdout.trim().split("\n").pop()!) as Result;
    results.push(result);
    process.stdout.write(scaleRow(result) + "\n");
  }
  const head = results.find((r) => r.path === "headless" && r.users === peer && r.engagement === TYPICAL_ENGAGEMENT);
  const world = results.find((r) => r.path === "world");
  if (head && world) process.stdout.write(`\nWorld interface against headless at ${fmt(peer)} users: ${(world.agentSteps / world.cpuSeconds / (head.agentSteps / head.cpuSeconds)).toFixed(3)}x the agent-steps per CPU second.\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();

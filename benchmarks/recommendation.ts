/**
 * The recommendation benchmark (`bench rec`): recallers fitted in-process on a leave-last-out
 * split's training items, then NDCG@k and HR@k of each on the test items by full ranking, with
 * the time each took. Agents:
 *
 *   pop, itemknn, bpr   one recaller alone (the world's, worlds/rec/recallers)
 *   sasrec              the sequential recaller on the native engine (trainers/rec/sasrec.ts)
 *   mix:W               a fixed mixture, W = "pop=0.2,itemknn=0.3,bpr=0.2,sasrec=0.3" (normalised)
 *   best                the best fixed mixture, its weights searched on the valid items
 *   oracle              the generator's latent truth (generated data only: preferences.json)
 *   all                 every one of the above that the data allows (the default)
 *   policy:DIR[?opts]   a trained policy weighing the four recallers per user (rec-policy.ts)
 */
import {
  bestMixture,
  casesOf,
  evaluate,
  fitRecaller,
  isRecallerName,
  meanError,
  mixtureRecaller,
  MixtureError,
  normaliseWeights,
  oracleRecaller,
  RECALLERS,
  parseWeights,
  trainSetOf,
  type BprOptions,
  type Preferences,
  type Recaller,
  type RecSplit,
  type Weights,
} from "../worlds/rec/index.js";
import { fitSasrec, type SasrecOptions } from "../trainers/rec/sasrec.js";
import { AgentSpecError } from "../agents/agent-spec-error.js";
import { checkAgentSpec, loadAgent } from "../agents/registry.js";
import type { Agent } from "../worlds/core/agent.js";
import { scorePolicy } from "./rec-policy.js";

/** The recallers the benchmark fits: the world's, and SASRec, which needs the model runtime. */
export const BENCH_RECALLERS = [...RECALLERS, "sasrec"] as const;
export type BenchRecaller = (typeof BENCH_RECALLERS)[number];

export function isBenchRecaller(name: string): name is BenchRecaller {
  return isRecallerName(name) || name === "sasrec";
}

export type RecAgent =
  | { readonly kind: "recaller"; readonly name: BenchRecaller }
  | { readonly kind: "mix"; readonly weights: Weights }
  | { readonly kind: "best" }
  | { readonly kind: "oracle" }
  | { readonly kind: "all" }
  | { readonly kind: "policy"; readonly spec: string };

export const REC_AGENTS = "pop, itemknn, bpr, sasrec, mix:RECALLER=W,..., best, oracle, all or policy:DIR[?options]";

export class RecAgentError extends Error {}

export function parseRecAgent(spec: string): RecAgent {
  if (isBenchRecaller(spec)) return { kind: "recaller", name: spec };
  if (spec === "best" || spec === "oracle" || spec === "all") return { kind: spec };
  if (spec.startsWith("policy:")) {
    try {
      checkAgentSpec(spec);
    } catch (err) {
      if (err instanceof AgentSpecError) throw new RecAgentError(err.message);
      throw err;
    }
    return { kind: "policy", spec };
  }
  if (spec.startsWith("mix:")) {
    try {
      const weights = parseWeights(spec.slice(4));
      normaliseWeights(weights, BENCH_RECALLERS);
      return { kind: "mix", weights };
    } catch (err) {
      if (err instanceof MixtureError) throw new RecAgentError(`mix: ${err.message}`);
      throw err;
    }
  }
  throw new RecAgentError(`unknown agent "${spec}" for the recommendation world (expected ${REC_AGENTS})`);
}

export interface RecBenchOptions {
  readonly k?: number;
  readonly bpr?: BprOptions;
  /** SASRec's architecture and training (seeded; trainers/rec/sasrec.ts). */
  readonly sasrec?: SasrecOptions;
  /** Item-kNN's neighbours per item. */
  readonly knn?: number;
  /** Validation cases the best-mixture search uses at most. */
  readonly mixtureSample?: number;
  /** The generator's latent truth, for the oracle. */
  readonly preferences?: Preferences;
  /** Users a policy agent is asked at once (default 32). */
  readonly concurrency?: number;
}

export interface RecBenchRow {
  readonly agent: string;
  readonly ndcg: number;
  /** The standard error of `ndcg` over the users. */
  readonly ndcgError: number;
  /** Each test user's NDCG@k, in the split's order of test users (the same for every row: rows pair user by user). */
  readonly ndcgs: readonly number[];
  readonly hr: number;
  /** Test users scored. */
  readonly users: number;
  /** Fitting (and for `best`, the weight search), in seconds; 0 for what needs none. */
  readonly fitSeconds: number;
  readonly evalSeconds: number;
  /** The mixture's weights, normalised to sum to 1; a policy's, averaged over the users. */
  readonly weights?: Weights;
  /** A policy's replies that were no weights action (scored 0). */
  readonly failures?: number;
}

/** Reports progress: `stage` starts a stage of `total` steps; the function it returns takes the steps done. */
export type StageProgress = (stage: string, total: number) => (done: number) => void;

const silent: StageProgress = () => () => {};

/**
 * Scores `agents` (one, or several sharing the fitted recallers) on the split's test items; a
 * row per agent, `all` giving one per recaller, the best mixture and the oracle.
 */
export async function runRecBench(split: RecSplit, agents: RecAgent | readonly RecAgent[], opts: RecBenchOptions = {}, progress: StageProgress = silent): Promise<RecBenchRow[]> {
  const k = opts.k ?? 10;
  const items = split.items.length;
  const train = trainSetOf(split);
  const test = casesOf(split, "test");
  if (test.length === 0) throw new RecAgentError(`${split.source}: no user has a test item (a user needs 2 interactions)`);
  const rows: RecBenchRow[] = [];
  const fitted = new Map<BenchRecaller, { recaller: Recaller; seconds: number }>();

  const fit = (name: BenchRecaller) => {
    const have = fitted.get(name);
    if (have) return have;
    const t0 = performance.now();
    let tick: ((d: number) => void) | undefined;
    const label = name === "bpr" || name === "sasrec" ? `fit ${name} (epochs)` : `fit ${name}`;
    const onProgress = (done: number, total: number) => (tick ??= progress(label, total))(done);
    const recaller =
      name === "sasrec"
        ? fitSasrec(train, opts.sasrec, onProgress)
        : fitRecaller(name, train, { ...(opts.bpr ? { bpr: opts.bpr } : {}), ...(opts.knn !== undefined ? { knn: opts.knn } : {}) }, onProgress);
    const entry = { recaller, seconds: (performance.now() - t0) / 1000 };
    fitted.set(name, entry);
    return entry;
  };
  const score = (name: string, recaller: Recaller, fitSeconds: number, weights?: Weights) => {
    const t0 = performance.now();
    const s = evaluate(recaller, test, items, k, progress(`test ${name}`, test.length));
    rows.push({ agent: name, ndcg: s.ndcg, ndcgError: meanError(s.ndcgs).error, ndcgs: s.ndcgs, hr: s.hr, users: s.n, fitSeconds, evalSeconds: (performance.now() - t0) / 1000, ...(weights ? { weights } : {}) });
  };
  const fitAll = () => BENCH_RECALLERS.map(fit);
  const list: readonly RecAgent[] = Array.isArray(agents) ? agents : [agents as RecAgent];
  // Policies load before anything is fitted: a bad folder fails at once.
  const policies = new Map<string, Agent>();
  for (const a of list) if (a.kind === "policy" && !policies.has(a.spec)) policies.set(a.spec, await loadPolicy(a.spec));

  for (const agent of list) {
    if (agent.kind === "recaller" || agent.kind === "all") {
      for (const name of agent.kind === "all" ? BENCH_RECALLERS : [agent.name]) {
        const f = fit(name);
        score(name, f.recaller, f.seconds);
      }
    }
    if (agent.kind === "mix") {
      const names = BENCH_RECALLERS.filter((n) => Object.hasOwn(agent.weights, n));
      const parts = names.map(fit);
      const ws = normaliseWeights(agent.weights, names);
      const seconds = parts.reduce((a, f) => a + f.seconds, 0);
      const label = `mix:${Object.entries(agent.weights).map(([n, w]) => `${n}=${w}`).join(",")}`;
      score(label, mixtureRecaller(parts.map((f) => f.recaller), agent.weights), seconds, Object.fromEntries(names.map((n, t) => [n, ws[t]!])));
    }
    if (agent.kind === "best" || agent.kind === "all") {
      const all = fitAll();
      const valid = casesOf(split, "valid");
      if (valid.length === 0) {
        if (agent.kind === "best") throw new RecAgentError(`${split.source}: no user has a valid item (a user needs 3 interactions), so no mixture can be chosen`);
      } else {
        const t0 = performance.now();
        let tick: ((d: number) => void) | undefined;
        const best = bestMixture(
          all.map((f) => f.recaller),
          valid,
          items,
          k,
          opts.mixtureSample !== undefined ? { sample: opts.mixtureSample } : {},
          (done, total) => (tick ??= progress("search mixture (valid users)", total))(done),
        );
        const seconds = all.reduce((a, f) => a + f.seconds, 0) + (performance.now() - t0) / 1000;
        score("best mixture", mixtureRecaller(all.map((f) => f.recaller), best.weights), seconds, best.weights);
      }
    }
    if (agent.kind === "oracle" || (agent.kind === "all" && opts.preferences)) {
      if (!opts.preferences) throw new RecAgentError("the oracle needs the generator's latent truth (preferences.json beside ratings.dat): only generated data has one");
      score("oracle", oracleRecaller(opts.preferences, split), 0);
    }
    if (agent.kind === "policy") {
      const all = fitAll();
      const seconds = all.reduce((a, f) => a + f.seconds, 0);
      const loaded = policies.get(agent.spec)!;
      const t0 = performance.now();
      const tick = progress(`test ${agent.spec}`, test.length);
      const s = await scorePolicy(loaded, agent.spec, split, all.map((f) => f.recaller), test, { k, ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), onProgress: tick });
      rows.push({ agent: agent.spec, ndcg: s.ndcg, ndcgError: meanError(s.ndcgs).error, ndcgs: s.ndcgs, hr: s.hr, users: s.n, fitSeconds: seconds, evalSeconds: (performance.now() - t0) / 1000, weights: s.meanWeights, failures: s.failures });
    }
  }
  return rows;
}

/** The policy agent `spec` names, its folder checked (a missing or bad file is named). */
async function loadPolicy(spec: string): Promise<Agent> {
  try {
    return await loadAgent(spec);
  } catch (err) {
    if (err instanceof AgentSpecError) throw new RecAgentError(err.message);
    throw err;
  }
}

/**
 * Every world, by name. A world is one folder with one entry point (worlds/<name>/index.ts, which
 * exports `world`: its scenario for rooms, its generator, its benchmark, its solver, its fact
 * vocabulary for the leak audit); adding a
 * world is adding its folder and its line here. Each is loaded only when asked for: `bench tomi`
 * loads ToMi's folder and no other.
 */
import type { BenchmarkEntry, Generator, WorldEntry } from "./core/world-entry.js";
import { sentencesOf, type FactSource } from "./core/leak-audit.js";
import type { QuestionMaker } from "./core/episode-questions.js";
import type { ScenarioFactory } from "./core/scenario.js";
import type { DecisionSet } from "./core/scored-decision.js";
import type { SocializedContext } from "./core/socialized-context.js";
import { BenchmarkOptionError, flagOf, OPTION_KEYS, type Benchmark, type BenchmarkOptions } from "./question/benchmark.js";
import type { Solver } from "./question/solver.js";

const WORLDS = {
  tomi: () => import("./tomi/index.js"),
  hitom: () => import("./hitom/index.js"),
  fantom: () => import("./fantom/index.js"),
  economy: () => import("./economy/index.js"),
  usersim: () => import("./usersim/index.js"),
  social: () => import("./social/index.js"),
  rec: () => import("./rec/index.js"),
} as const satisfies Readonly<Record<string, () => Promise<{ readonly world: WorldEntry }>>>;

export type WorldName = keyof typeof WORLDS;
export const WORLD_NAMES = Object.keys(WORLDS) as readonly WorldName[];

export function isWorldName(name: string): name is WorldName {
  return Object.hasOwn(WORLDS, name);
}

/** A name the registry does not know, or a world without the part asked for. */
export class RegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RegistryError";
  }
}

/**
 * The worlds whose benchmark declares flags of its own (BenchmarkEntry.flags: the social prompt's
 * facts). The flags stay declared in the world's folder, which the registry reaches only through
 * its entry point; this list lets a help text or a misplaced flag's error load these worlds and
 * not every one. loadWorld refuses a world that declares flags and is not listed.
 */
const WITH_FLAGS: readonly WorldName[] = ["social"];

const loaded = new Map<string, Promise<WorldEntry>>();

/** The world `name`'s entry, its folder imported the first time it is asked for. */
export function loadWorld(name: string): Promise<WorldEntry> {
  if (!isWorldName(name)) return Promise.reject(new RegistryError(`unknown world "${name}" (known: ${WORLD_NAMES.join(", ")})`));
  let entry = loaded.get(name);
  if (!entry) {
    entry = WORLDS[name]().then((m) => checkFlags(m.world, WITH_FLAGS.includes(name)));
    loaded.set(name, entry);
  }
  return entry;
}

/** Option names a benchmark flag may not take: a run records flags beside the options, and commands take both. */
const TAKEN = new Set<string>([...OPTION_KEYS, ...OPTION_KEYS.map(flagOf)]);

/**
 * `entry`, if its benchmark's flags are declared as the registry needs (`listed`: the world is in
 * WITH_FLAGS); otherwise an error naming the world and the flag (a flag named as an option would
 * overwrite it in a run's recorded options, silently).
 */
export function checkFlags(entry: WorldEntry, listed: boolean): WorldEntry {
  const flags = entry.benchmark?.flags ?? [];
  if (flags.length && !listed) throw new RegistryError(`the ${entry.name} world's benchmark declares flags (--${flags[0]!.key}): add it to the registry's WITH_FLAGS`);
  for (const f of flags) if (TAKEN.has(f.key)) throw new RegistryError(`the ${entry.name} world's benchmark flag --${f.key} has the name of a benchmark option`);
  return entry;
}

/** The worlds whose benchmark declares flags (only these are loaded). */
export function worldsWithFlags(): Promise<WorldEntry[]> {
  return Promise.all(WITH_FLAGS.map(loadWorld));
}

/** Every world (for catalogs and help texts, which list them all). */
export function loadWorlds(): Promise<WorldEntry[]> {
  return Promise.all(WORLD_NAMES.map(loadWorld));
}

type Part = "scenario" | "generator" | "benchmark" | "solver" | "decisions" | "facts" | "questions";
const PART_NAMES: Readonly<Record<Part, string>> = {
  scenario: "scenario for rooms",
  generator: "generator",
  benchmark: "benchmark",
  solver: "solver",
  decisions: "decision points of its own",
  facts: "fact vocabulary",
  questions: "questions about its episodes",
};

/** The worlds that have `part`. */
export async function worldsWith(part: Part): Promise<WorldEntry[]> {
  return (await loadWorlds()).filter((w) => w[part] !== undefined);
}

/** The world `name`'s `part`; an error naming the worlds that have one when it has none. */
async function partOf<P extends Part>(name: string, part: P): Promise<NonNullable<WorldEntry[P]>> {
  const value = (await loadWorld(name))[part];
  if (value !== undefined) return value as NonNullable<WorldEntry[P]>;
  const have = (await worldsWith(part)).map((w) => w.name);
  throw new RegistryError(`the ${name} world has no ${PART_NAMES[part]} (${have.length ? `worlds with one: ${have.join(", ")}` : "no world has one"})`);
}

export const loadScenario = (name: string): Promise<ScenarioFactory> => partOf(name, "scenario");
export const loadGenerator = (name: string): Promise<Generator> => partOf(name, "generator");
export const loadSolver = (name: string): Promise<Solver> => partOf(name, "solver");
export const loadDecisions = (name: string): Promise<DecisionSet> => partOf(name, "decisions");
export const loadFacts = (name: string): Promise<FactSource> => partOf(name, "facts");
export const loadQuestionMaker = (name: string): Promise<QuestionMaker> => partOf(name, "questions");

/**
 * The world whose fact vocabulary reads most of a context's world sentences (an imported context
 * names no world); undefined when none reads half of them.
 */
export async function worldOfContext(context: SocializedContext): Promise<string | undefined> {
  const sentences = context.socialized_context.flatMap((s) => (s.state === "none" ? [] : sentencesOf(s.state)));
  if (sentences.length === 0) return undefined;
  let best: string | undefined;
  let bestShare = 0.5;
  for (const w of await worldsWith("facts")) {
    const share = sentences.filter((s) => w.facts!.reads(s)).length / sentences.length;
    if (share > bestShare) {
      best = w.name;
      bestShare = share;
    }
  }
  return best;
}

/** The benchmark of world `name`, ready to judge; an option it does not take is a BenchmarkOptionError. */
export async function loadBenchmark(name: string, opts: BenchmarkOptions = {}): Promise<Benchmark> {
  const entry: BenchmarkEntry = await partOf(name, "benchmark");
  for (const key of Object.keys(opts) as (keyof BenchmarkOptions)[]) {
    if (opts[key] === undefined || key === "flags" || entry.options.includes(key)) continue;
    const takers = (await worldsWith("benchmark")).filter((w) => w.benchmark!.options.includes(key)).map((w) => w.name);
    throw new BenchmarkOptionError(`--${flagOf(key)} does not apply to ${name} (it applies to ${takers.join(", ")})`);
  }
  for (const [key, on] of Object.entries(opts.flags ?? {})) {
    if (!on || entry.flags?.some((f) => f.key === key)) continue;
    const takers = (await worldsWithFlags()).filter((w) => w.benchmark!.flags!.some((f) => f.key === key)).map((w) => w.name);
    throw new BenchmarkOptionError(`--${key} does not apply to ${name}${takers.length ? ` (it applies to ${takers.join(", ")})` : ""}`);
  }
  return entry.create(opts);
}

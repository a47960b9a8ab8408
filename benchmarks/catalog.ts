/**
 * The benchmarks by name, the options each takes, and `loadBenchmark`, which imports only the
 * benchmark asked for: `bench tomi` need not load the FANToM and Hi-ToM readers and their schemas
 * at start-up. registry.ts builds the same benchmarks synchronously, for rooms and trainers.
 */
import type { Benchmark } from "./benchmark.js";

/** Benchmark-specific settings (the `bench` command's --context, --embedder, --aggregation). */
export interface BenchmarkOptions {
  /** FANToM: the conversation given with each question, "short" (official default) or "full". */
  readonly context?: "short" | "full";
  /** FANToM: how free-form beliefs are judged, "lexical" or "onnx:DIR". */
  readonly embedder?: string;
  /** FANToM: what ALL* and ALL group by: "set", "part" or "conversation". */
  readonly aggregation?: "set" | "part" | "conversation";
  /** Hi-ToM: what VP entries are scored against, "cotp" (the CoTP twin's label: upstream's evaluator) or "own". */
  readonly vpLabels?: "cotp" | "own";
}

/**
 * The options each benchmark understands (others are an error, not silently ignored). Its keys
 * are the benchmark names: the loaders below and registry.ts's constructors are typed by them, so
 * a benchmark missing from either does not compile.
 */
export const BENCHMARK_OPTIONS = {
  tomi: [],
  hitom: ["vpLabels"],
  fantom: ["context", "embedder", "aggregation"],
} as const satisfies Readonly<Record<string, readonly (keyof BenchmarkOptions)[]>>;

export type BenchmarkName = keyof typeof BENCHMARK_OPTIONS;

export const BENCHMARK_NAMES = Object.keys(BENCHMARK_OPTIONS) as BenchmarkName[];

export function isBenchmarkName(name: string): name is BenchmarkName {
  return Object.hasOwn(BENCHMARK_OPTIONS, name);
}

export class BenchmarkOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkOptionError";
  }
}

/** Checks `opts` against what `name` takes; throws for an unknown benchmark or a foreign option. */
export function checkBenchmarkOptions(name: string, opts: BenchmarkOptions): asserts name is BenchmarkName {
  if (!isBenchmarkName(name)) throw new Error(`unknown benchmark "${name}" (known: ${BENCHMARK_NAMES.join(", ")})`);
  const takes = (n: BenchmarkName, key: keyof BenchmarkOptions) => (BENCHMARK_OPTIONS[n] as readonly (keyof BenchmarkOptions)[]).includes(key);
  for (const key of Object.keys(opts) as (keyof BenchmarkOptions)[]) {
    if (opts[key] !== undefined && !takes(name, key)) {
      const takers = BENCHMARK_NAMES.filter((n) => takes(n, key));
      throw new BenchmarkOptionError(`--${flagOf(key)} does not apply to ${name} (it applies to ${takers.join(", ")})`);
    }
  }
}

/** An option's command-line flag: vpLabels -> vp-labels. */
export function flagOf(key: keyof BenchmarkOptions): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

const LOADERS: Readonly<Record<BenchmarkName, (opts: BenchmarkOptions) => Promise<Benchmark>>> = {
  tomi: async () => new (await import("./tomi.js")).TomiBenchmark() as unknown as Benchmark,
  hitom: async (o) => new (await import("./hitom.js")).HitomBenchmark(o) as unknown as Benchmark,
  fantom: async (o) => {
    const benchmark = new (await import("./fantom.js")).FantomBenchmark(o);
    // The ONNX embedder's folder is checked and its model loaded now: a bad folder should stop the
    // command before a run exists, not fail the run at its first free-form question.
    try {
      await benchmark.ready();
    } catch (err) {
      const from = o.embedder !== undefined ? "--embedder" : "$SOCIALWORLD_FANTOM_EMBEDDER";
      throw new BenchmarkOptionError(`${from}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return benchmark as unknown as Benchmark;
  },
};

/** The benchmark `name`, its module imported on demand. */
export async function loadBenchmark(name: string, opts: BenchmarkOptions = {}): Promise<Benchmark> {
  checkBenchmarkOptions(name, opts);
  return LOADERS[name](opts);
}

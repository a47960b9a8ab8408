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
}

/** The options each benchmark understands (others are an error, not silently ignored). */
export const BENCHMARK_OPTIONS: Readonly<Record<string, readonly (keyof BenchmarkOptions)[]>> = {
  tomi: [],
  hitom: [],
  fantom: ["context", "embedder", "aggregation"],
};

export const BENCHMARK_NAMES = Object.keys(BENCHMARK_OPTIONS);

export class BenchmarkOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkOptionError";
  }
}

/** Checks `opts` against what `name` takes; throws for an unknown benchmark or a foreign option. */
export function checkBenchmarkOptions(name: string, opts: BenchmarkOptions): void {
  const taken = BENCHMARK_OPTIONS[name];
  if (!taken) throw new Error(`unknown benchmark "${name}" (known: ${BENCHMARK_NAMES.join(", ")})`);
  for (const key of Object.keys(opts) as (keyof BenchmarkOptions)[]) {
    if (opts[key] !== undefined && !taken.includes(key)) {
      const takers = BENCHMARK_NAMES.filter((n) => BENCHMARK_OPTIONS[n]!.includes(key));
      throw new BenchmarkOptionError(`--${key} does not apply to ${name} (it applies to ${takers.join(", ")})`);
    }
  }
}

const LOADERS: Readonly<Record<string, (opts: BenchmarkOptions) => Promise<Benchmark>>> = {
  tomi: async () => new (await import("./tomi.js")).TomiBenchmark() as unknown as Benchmark,
  hitom: async () => new (await import("./hitom.js")).HitomBenchmark() as unknown as Benchmark,
  fantom: async (o) => new (await import("./fantom.js")).FantomBenchmark(o) as unknown as Benchmark,
};

/** The benchmark `name`, its module imported on demand. */
export async function loadBenchmark(name: string, opts: BenchmarkOptions = {}): Promise<Benchmark> {
  checkBenchmarkOptions(name, opts);
  return LOADERS[name]!(opts);
}

/**
 * The benchmarks `bench` and the benchmark rooms know, by name, built synchronously (rooms and
 * trainers have them loaded anyway). The names, their options and the on-demand loader the
 * command line uses are in catalog.ts.
 */
import type { Benchmark } from "./benchmark.js";
import { BENCHMARK_OPTIONS, checkBenchmarkOptions, type BenchmarkOptions } from "./catalog.js";
import { FantomBenchmark } from "./fantom.js";
import { HitomBenchmark } from "./hitom.js";
import { TomiBenchmark } from "./tomi.js";

export { BenchmarkOptionError, type BenchmarkOptions } from "./catalog.js";

interface Entry {
  readonly make: (opts: BenchmarkOptions) => Benchmark;
  /** The options it understands (others are an error, not silently ignored). */
  readonly options: readonly (keyof BenchmarkOptions)[];
}

export const BENCHMARKS: Readonly<Record<string, Entry>> = {
  tomi: { make: () => new TomiBenchmark() as unknown as Benchmark, options: BENCHMARK_OPTIONS.tomi! },
  hitom: { make: () => new HitomBenchmark() as unknown as Benchmark, options: BENCHMARK_OPTIONS.hitom! },
  fantom: { make: (o) => new FantomBenchmark(o) as unknown as Benchmark, options: BENCHMARK_OPTIONS.fantom! },
};

export function createBenchmark(name: string, opts: BenchmarkOptions = {}): Benchmark {
  checkBenchmarkOptions(name, opts);
  return BENCHMARKS[name]!.make(opts);
}

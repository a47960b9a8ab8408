/**
 * The benchmarks `bench` and the benchmark rooms know, by name, built synchronously (rooms and
 * trainers have them loaded anyway). The names, their options and the on-demand loader the
 * command line uses are in catalog.ts.
 */
import type { Benchmark } from "./benchmark.js";
import { checkBenchmarkOptions, type BenchmarkName, type BenchmarkOptions } from "./catalog.js";
import { FantomBenchmark } from "./fantom.js";
import { HitomBenchmark } from "./hitom.js";
import { TomiBenchmark } from "./tomi.js";

export type { BenchmarkOptions } from "./catalog.js";

/** Each benchmark's constructor by name (the options each takes are in catalog.ts). */
export const BENCHMARKS: Readonly<Record<BenchmarkName, (opts: BenchmarkOptions) => Benchmark>> = {
  tomi: () => new TomiBenchmark() as unknown as Benchmark,
  hitom: (o) => new HitomBenchmark(o) as unknown as Benchmark,
  fantom: (o) => new FantomBenchmark(o) as unknown as Benchmark,
};

export function createBenchmark(name: string, opts: BenchmarkOptions = {}): Benchmark {
  checkBenchmarkOptions(name, opts);
  return BENCHMARKS[name](opts);
}

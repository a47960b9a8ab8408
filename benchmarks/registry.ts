/**
 * The benchmarks `bench` and the benchmark rooms know, by name, built synchronously (rooms and
 * trainers have them loaded anyway). The names, their options and the on-demand loader the
 * command line uses are in catalog.ts.
 */
import type { Benchmark } from "../worlds/question/benchmark.js";
import { checkBenchmarkOptions, type BenchmarkName, type BenchmarkOptions } from "./catalog.js";
import { FantomBenchmark } from "../worlds/fantom/benchmark.js";
import { HitomBenchmark } from "../worlds/hitom/benchmark.js";
import { TomiBenchmark } from "../worlds/tomi/benchmark.js";

export type { BenchmarkOptions } from "./catalog.js";

/** Each benchmark's constructor by name (the options each takes are in catalog.ts). */
export const BENCHMARKS: Readonly<Record<BenchmarkName, (opts: BenchmarkOptions) => Benchmark>> = {
  tomi: () => new TomiBenchmark() as unknown as Benchmark,
  hitom: () => new HitomBenchmark() as unknown as Benchmark,
  fantom: (o) => new FantomBenchmark(o) as unknown as Benchmark,
};

export function createBenchmark(name: string, opts: BenchmarkOptions = {}): Benchmark {
  checkBenchmarkOptions(name, opts);
  return BENCHMARKS[name](opts);
}

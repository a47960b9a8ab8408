/** The benchmarks `bench` and the benchmark rooms know, by name. */
import type { Benchmark } from "./benchmark.js";
import { TomiBenchmark } from "./tomi.js";

export const BENCHMARKS: Readonly<Record<string, () => Benchmark>> = {
  tomi: () => new TomiBenchmark() as unknown as Benchmark,
};

export function createBenchmark(name: string): Benchmark {
  const make = BENCHMARKS[name];
  if (!make) throw new Error(`unknown benchmark "${name}" (known: ${Object.keys(BENCHMARKS).join(", ")})`);
  return make();
}

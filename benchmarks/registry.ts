/** The benchmarks `bench` and the benchmark rooms know, by name, with the options each takes. */
import type { Benchmark } from "./benchmark.js";
import { TomiBenchmark } from "./tomi.js";
import { HitomBenchmark } from "./hitom.js";
import { FantomBenchmark } from "./fantom.js";

/** Benchmark-specific settings (the `bench` command's --context, --embedder, --aggregation). */
export interface BenchmarkOptions {
  /** FANToM: the conversation given with each question, "short" (official default) or "full". */
  readonly context?: "short" | "full";
  /** FANToM: how free-form beliefs are judged, "lexical" or "onnx:DIR". */
  readonly embedder?: string;
  /** FANToM: what ALL* and ALL group by: "set", "part" or "conversation". */
  readonly aggregation?: "set" | "part" | "conversation";
}

interface Entry {
  readonly make: (opts: BenchmarkOptions) => Benchmark;
  /** The options it understands (others are an error, not silently ignored). */
  readonly options: readonly (keyof BenchmarkOptions)[];
}

export const BENCHMARKS: Readonly<Record<string, Entry>> = {
  tomi: { make: () => new TomiBenchmark() as unknown as Benchmark, options: [] },
  hitom: { make: () => new HitomBenchmark() as unknown as Benchmark, options: [] },
  fantom: {
    make: (o) =>
      new FantomBenchmark({
        ...(o.context ? { context: o.context } : {}),
        ...(o.embedder ? { embedder: o.embedder } : {}),
        ...(o.aggregation ? { aggregation: o.aggregation } : {}),
      }) as unknown as Benchmark,
    options: ["context", "embedder", "aggregation"],
  },
};

export function createBenchmark(name: string, opts: BenchmarkOptions = {}): Benchmark {
  const entry = BENCHMARKS[name];
  if (!entry) throw new Error(`unknown benchmark "${name}" (known: ${Object.keys(BENCHMARKS).join(", ")})`);
  for (const key of Object.keys(opts) as (keyof BenchmarkOptions)[]) {
    if (opts[key] !== undefined && !entry.options.includes(key)) {
      throw new BenchmarkOptionError(`--${key} does not apply to ${name} (it applies to ${benchmarksTaking(key).join(", ")})`);
    }
  }
  return entry.make(opts);
}

export class BenchmarkOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchmarkOptionError";
  }
}

function benchmarksTaking(key: keyof BenchmarkOptions): string[] {
  return Object.entries(BENCHMARKS)
    .filter(([, e]) => e.options.includes(key))
    .map(([n]) => n);
}

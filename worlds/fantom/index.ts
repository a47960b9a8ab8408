/**
 * FANToM (Kim et al., EMNLP 2023): multi-party conversations in which characters leave, come back
 * and miss what was said; questions about who knows what.
 * The world's one entry point: what the rest of the program uses of it.
 */
import { BenchmarkOptionError } from "../question/benchmark.js";
import type { WorldEntry } from "../core/world-entry.js";
import { FantomBenchmark } from "./benchmark.js";
import { generateFantom } from "./generator.js";
import { fantomScenarios } from "./scenario.js";
import { fantomSolver } from "./solver.js";
import { fantomFacts } from "./leak-facts.js";

export const world: WorldEntry = {
  name: "fantom",
  title: "FANToM",
  scenario: fantomScenarios,
  generator: {
    describe: "FANToM question sets in the official fantom_v1.json layout; N counts questions as the official evaluator does",
    least: { n: 3, why: "FANToM needs at least 3 questions (a set's fact question and its two list questions)" },
    async generate(n, seed, out, onProgress) {
      const gen = generateFantom(n, seed, onProgress && ((done) => onProgress(Math.min(done, n))));
      return { data: out, files: [{ path: out, text: gen.json }] };
    },
  },
  benchmark: {
    options: ["context", "embedder", "aggregation"],
    async create(opts) {
      const benchmark = new FantomBenchmark(opts);
      // The ONNX embedder's folder is checked and its model loaded now: a bad folder should stop
      // the command before a run exists, not fail the run at its first free-form question.
      try {
        await benchmark.ready();
      } catch (err) {
        const from = opts.embedder !== undefined ? "--embedder" : "$SOCIALWORLD_FANTOM_EMBEDDER";
        throw new BenchmarkOptionError(`${from}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return benchmark;
    },
  },
  solver: fantomSolver,
  facts: fantomFacts,
};

/**
 * Decision points from a world whose training data is its generator's (`trainOn: "generated"`,
 * the social world): `train grpo --world W --episodes N --world-seed S` writes the generator's N
 * items for seed S into OUT (kept: the data of a run is part of its record, and `--resume` checks
 * it is still what the generator writes), then asks them as `--bench W --data` would, scored with
 * the benchmark's own reward. `options` are the benchmark's, as `bench` takes them (the social
 * world's `context`: the rollouts are asked the very prompt `bench --context` asks).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../store/write-atomic.js";
import type { BenchmarkOptions, Mode } from "../../worlds/question/benchmark.js";
import { loadGenerator } from "../../worlds/registry.js";
import { BenchPoints } from "./bench-points.js";

export async function generatedPoints(world: string, episodes: number, seed: number, out: string, opts: { mode?: Mode; system?: string; options?: BenchmarkOptions } = {}): Promise<BenchPoints> {
  const generator = await loadGenerator(world);
  mkdirSync(out, { recursive: true });
  const set = await generator.generate(episodes, seed, join(out, `train-${world}-n${episodes}-seed${seed}.jsonl`));
  for (const f of set.files) {
    if (!existsSync(f.path)) writeFileAtomic(f.path, f.text);
    else if (readFileSync(f.path, "utf8") !== f.text) throw new Error(`${f.path} is not what the ${world} generator writes for ${episodes} ${generator.unit ?? "questions"} of seed ${seed} (edited, or written by another version): move it away to write it again`);
  }
  return BenchPoints.open(world, set.data, opts.mode ?? "vanilla", { ...(opts.system !== undefined ? { system: opts.system } : {}), ...(opts.options ? { options: opts.options } : {}) });
}

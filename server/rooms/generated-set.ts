/**
 * A generated benchmark set for a room, written once under the store (the same n and seed give
 * the same file), in a worker thread (generate-worker.ts): generating 10,000 questions takes
 * seconds, during which the rooms' timesteps must go on. Two rooms asking for the same set at
 * once share one generation.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { startModuleWorker } from "../module-worker.js";
import type { GenerateJob, GenerateResult } from "./generate-worker.js";

const running = new Map<string, Promise<string>>();

/** The set's .txt or .json file, generated first when it is not there yet. */
export function generatedSet(store: string, benchmark: string, n: number, seed: number): Promise<string> {
  const dir = join(store, "generated");
  const out = join(dir, `${benchmark}-n${n}-seed${seed}.txt`);
  if (existsSync(out)) return Promise.resolve(out);
  let p = running.get(out);
  if (p) return p;
  mkdirSync(dir, { recursive: true });
  p = new Promise<string>((resolve, reject) => {
    const job: GenerateJob = { benchmark, n, seed, out };
    const worker = startModuleWorker("server/rooms/generate-worker", { workerData: job, name: `generate ${benchmark}` });
    let settled = false;
    worker.once("message", (r: GenerateResult) => {
      settled = true;
      if (r.ok) resolve(r.data);
      else reject(Object.assign(new Error(r.error), { name: r.name }));
      void worker.terminate();
    });
    worker.once("error", (err) => {
      settled = true;
      reject(err);
    });
    worker.once("exit", (code) => {
      if (!settled) reject(new Error(`the generator's thread exited (${code}) before it wrote ${out}`));
    });
  }).finally(() => running.delete(out));
  running.set(out, p);
  return p;
}

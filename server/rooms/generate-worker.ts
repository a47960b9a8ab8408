/**
 * A worker thread that writes one generated benchmark set (generated-set.ts starts it): a room
 * asked for 10,000 questions would otherwise keep the server's event loop busy for seconds.
 */
import { parentPort, workerData } from "node:worker_threads";
import { GENERATORS } from "../../cli/commands/generate.js";
import { Progress } from "../../cli/progress.js";

export interface GenerateJob {
  readonly benchmark: string;
  readonly n: number;
  readonly seed: number;
  readonly out: string;
}

export type GenerateResult = { readonly ok: true; readonly files: string[] } | { readonly ok: false; readonly error: string; readonly name: string };

const job = workerData as GenerateJob;
const gen = GENERATORS[job.benchmark];
const reply = (r: GenerateResult) => parentPort!.postMessage(r);
if (!gen) reply({ ok: false, error: `the ${job.benchmark} benchmark has no generator`, name: "Error" });
else
  gen.run(job.n, job.seed, job.out, new Progress("generate", job.n, null)).then(
    (files) => reply({ ok: true, files }),
    (err: Error) => reply({ ok: false, error: err.message, name: err.name }),
  );

/**
 * A worker thread that writes one generated benchmark set (generated-set.ts starts it): a room
 * asked for 10,000 questions would otherwise keep the server's event loop busy for seconds.
 */
import { parentPort, workerData } from "node:worker_threads";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { loadGenerator } from "../../worlds/registry.js";

export interface GenerateJob {
  readonly benchmark: string;
  readonly n: number;
  readonly seed: number;
  readonly out: string;
}

/** `data`: the file a benchmark reads (the set's other files are written beside it first). */
export type GenerateResult = { readonly ok: true; readonly data: string } | { readonly ok: false; readonly error: string; readonly name: string };

const job = workerData as GenerateJob;
const reply = (r: GenerateResult) => parentPort!.postMessage(r);
loadGenerator(job.benchmark)
  .then((gen) => gen.generate(job.n, job.seed, job.out))
  .then((set) => {
    // In the set's order (a ToMi .txt after its .trace: the server reuses a set it finds).
    for (const file of set.files) writeFileAtomic(file.path, file.text);
    reply({ ok: true, data: set.data });
  })
  .catch((err: Error) => reply({ ok: false, error: err.message, name: err.name }));

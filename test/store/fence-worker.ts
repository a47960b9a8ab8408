/**
 * A worker thread's write under the server's lease (store/write-fence.ts), for write-fence.test.ts:
 * it fences its writes with the lease it is given, says it is asking, then appends a line to its
 * file unless the write is refused, and says which. Started from the sources (startModuleWorker).
 */
import { appendFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { checkWrite, fenceWithLease } from "../../store/write-fence.js";

const job = workerData as { lease: SharedArrayBuffer; path: string; stop?: SharedArrayBuffer; waitMs?: number };
fenceWithLease(job.lease, { ...(job.stop ? { stop: job.stop } : {}), ...(job.waitMs !== undefined ? { waitMs: job.waitMs } : {}) });
parentPort!.postMessage("asking");
try {
  checkWrite(job.path);
  appendFileSync(job.path, "written\n");
  parentPort!.postMessage("written");
} catch (err) {
  parentPort!.postMessage(`refused: ${(err as Error).name}: ${(err as Error).message}`);
}

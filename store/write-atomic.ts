/**
 * Replacing a file whole: written beside it under a name of this process's own, flushed to disk,
 * then renamed over it. Readers see the old file or the new one, never half of one; two processes
 * replacing the same file never write into each other's temporary file; a failure leaves the old
 * file and no temporary one behind.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";

/** Replaces `path` with what `write` puts in the temporary file it is given. */
export function replaceFile(path: string, write: (tmp: string) => void): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    write(tmp);
    // Without this, a power cut soon after the rename can leave an empty file where the old one was.
    const fd = openSync(tmp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Replaces `path` with `data`. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  replaceFile(path, (tmp) => writeFileSync(tmp, data));
}

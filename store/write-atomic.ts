/**
 * Replacing a file whole: written beside it under a name of this process's own, flushed to disk,
 * then renamed over it. Readers see the old file or the new one, never half of one; two processes
 * replacing the same file never write into each other's temporary file; a failure leaves the old
 * file and no temporary one behind.
 *
 * A symbolic link is followed (the file it names is replaced, the link stays), and a pipe or a
 * device (`--json /dev/stdout`) is written in place: renaming over either would replace it by a
 * plain file.
 */
import { closeSync, fsyncSync, lstatSync, openSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { naming, withPath } from "./io-error.js";
import { checkWrite } from "./write-fence.js";

/**
 * Replaces `path` with what `write` puts in the temporary file it is given. `beforeRename` is a last
 * check before the new file takes the old one's place: throwing there leaves the old file.
 */
export function replaceFile(path: string, write: (tmp: string) => void, beforeRename?: () => void): void {
  const target = writeTarget(path);
  if (target.inPlace) return naming(path, () => (beforeRename?.(), write(target.path)));
  const tmp = `${target.path}.tmp-${process.pid}`;
  try {
    write(tmp);
    // Without this, a power cut soon after the rename can leave an empty file where the old one was.
    const fd = openSync(tmp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    beforeRename?.();
    // The last moment before the file is shared: a process that may have been declared dead by its
    // group since it began this write (paused) leaves the old file (write-fence.ts).
    checkWrite(path);
    renameSync(tmp, target.path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw withPath(err, path, tmp);
  }
}

/** Replaces `path` with `data`. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  replaceFile(path, (tmp) => writeFileSync(tmp, data));
}

/** Where writing `path` goes: the file its links lead to, and whether it is written in place. */
export function writeTarget(path: string): { readonly path: string; readonly inPlace: boolean } {
  // stat follows links, /proc's too (/dev/stdout when it is a pipe names no file at all).
  const st = statSync(path, { throwIfNoEntry: false });
  // A name under /dev or /proc (/dev/stdout redirected to a file) stands for an open file: never
  // put a new file in its place.
  if (st && /^\/(dev|proc)\//.test(resolve(path))) return { path, inPlace: true };
  if (st) return st.isFile() || st.isDirectory() ? { path: realpathSync(path), inPlace: false } : { path, inPlace: true };
  // Nothing there, or a link to a file not made yet: where the links lead.
  let p = path;
  for (let hops = 0; hops <= 40; hops++) {
    if (!lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) return { path: p, inPlace: false };
    p = resolve(dirname(p), readlinkSync(p));
  }
  throw Object.assign(new Error(`ELOOP: too many symbolic links, open '${path}'`), { code: "ELOOP", syscall: "open", path });
}

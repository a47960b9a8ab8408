/**
 * An output file named on the command line, checked before any work is done: its folder is made
 * if missing, and a folder, a folder that cannot be made or written, or a file that another flag
 * of the command also names is a usage error naming the flag. A long run should not end by
 * failing to write what it was run for, or by writing it over its own input.
 */
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { writeTarget } from "../store/write-atomic.js";
import { UsageError } from "./args.js";

export function prepareOutput(flag: string, path: string): void {
  let folder = false;
  try {
    folder = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
    if (!folder) {
      // Where the write really goes (through a link), and what it needs: a file is written beside
      // its target and renamed over it, so the folder must be writable; a pipe or device, itself.
      const target = writeTarget(path);
      mkdirSync(dirname(target.path), { recursive: true });
      accessSync(target.inPlace ? target.path : dirname(target.path), constants.W_OK);
    }
  } catch (err) {
    throw new UsageError(`${flag}: cannot write ${path} (${(err as Error).message})`);
  }
  if (folder) throw new UsageError(`${flag}: ${path} is a folder; give a file name`);
}

/**
 * Throws a usage error when two of `files` (flag and path; inputs first, then outputs) are one
 * file: `bench --json` given the benchmark file would replace it by the report. Pipes and devices
 * (`/dev/stdout`) may be named twice.
 */
export function checkDistinctFiles(files: readonly (readonly [flag: string, path: string | undefined])[]): void {
  const seen = new Map<string, string>();
  for (const [flag, path] of files) {
    if (path === undefined) continue;
    let target: ReturnType<typeof writeTarget>;
    try {
      target = writeTarget(path);
    } catch {
      // A path the machine cannot follow (a loop of links) is reported by what reads or writes it:
      // bad input for --data, naming the file; here it would only be a bare system error.
      continue;
    }
    if (target.inPlace) continue;
    // writeTarget gives an existing file's real path already.
    const key = resolve(target.path);
    const earlier = seen.get(key);
    if (earlier !== undefined) throw new UsageError(`${earlier} and ${flag} name the same file (${path}); give ${flag} another file`);
    seen.set(key, flag);
  }
}

/**
 * An output file named on the command line, checked before any work is done: its folder is made
 * if missing, and a folder, or a folder that cannot be made, is a usage error naming the flag.
 * A long run should not end by failing to write what it was run for.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { UsageError } from "./args.js";

export function prepareOutput(flag: string, path: string): void {
  let folder = false;
  try {
    folder = statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
    if (!folder) mkdirSync(dirname(path), { recursive: true });
  } catch (err) {
    throw new UsageError(`${flag}: cannot write ${path} (${(err as Error).message})`);
  }
  if (folder) throw new UsageError(`${flag}: ${path} is a folder; give a file name`);
}

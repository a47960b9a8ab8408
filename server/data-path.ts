/**
 * The only way a path from a request reaches the file system: a benchmark data file must resolve,
 * after following every symlink, to a regular file inside one of the server's data roots. A
 * relative path is looked up under each root in turn; an absolute one must already be inside one.
 */
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

export class DataPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataPathError";
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

export function resolveDataPath(requested: string, roots: readonly string[]): string {
  if (requested.includes("\0")) throw new DataPathError("data: the path contains a NUL byte");
  const realRoots = roots.map(real).filter((r): r is string => r !== undefined);
  if (realRoots.length === 0) throw new DataPathError("data: this server has no data folder to read benchmark files from (see --data-root)");
  const candidates = isAbsolute(requested) ? [requested] : realRoots.map((root) => resolve(root, requested));
  for (const candidate of candidates) {
    const path = real(candidate);
    if (path === undefined) continue;
    if (!realRoots.some((root) => inside(root, path))) continue;
    if (!statSync(path).isFile()) throw new DataPathError(`data: "${requested}" is not a file`);
    return path;
  }
  throw new DataPathError(`data: no file "${requested}" under the server's data folders`);
}

/**
 * A run as clients may read it (`GET /api/runs...`), and messages as rooms may show them:
 *
 * - no absolute path of the server's: a path under the store or a data folder is shown from
 *   there ("generated/tomi-n12-seed2.txt", "tomi/test.txt"), any other absolute path (a `bench
 *   --data /home/...` run) by its file name only;
 * - while a run is live, nothing that would let a client regenerate or replay what it is still
 *   being asked: its seed, its data file (a generated set's name holds its size and seed) and its
 *   generator settings are withheld until the run ends, and then published for replay.
 */
import { basename, isAbsolute, sep } from "node:path";
import { realpathSync } from "node:fs";
import type { RunRecord } from "../../store/run-store.js";

/** Parameters of a live run that stay on the server until it ends. */
export const LIVE_SECRETS = ["seed", "data", "generate"] as const;

/** Where paths are shown from: the store root and the data folders (as given and as resolved). */
export class PathShower {
  private readonly roots: { abs: string; shown: string }[];

  constructor(store: string, dataRoots: readonly string[]) {
    const all: { abs: string; shown: string }[] = [];
    const add = (abs: string, shown: string) => {
      for (const p of new Set([abs, realOr(abs)])) all.push({ abs: p.endsWith(sep) ? p : p + sep, shown });
    };
    // Data folders first: <store>/datasets is one, and is shown from there, not as "datasets/...".
    for (const root of dataRoots) add(root, "");
    add(store, "");
    // The longest root first, so that a folder inside another is shown from itself.
    this.roots = all.sort((a, b) => b.abs.length - a.abs.length);
  }

  /** A path as a client may see it. */
  path(p: string): string {
    if (!isAbsolute(p)) return p;
    for (const r of this.roots) if (p.startsWith(r.abs)) return r.shown + p.slice(r.abs.length);
    return basename(p);
  }

  /** A message with every server path in it shown as `path` shows it. */
  text(s: string): string {
    if (!s.includes(sep)) return s;
    const out = this.rooted(s);
    // Any other absolute path (a file outside the roots): its name only.
    return out.replace(/(^|[\s"'(])(\/(?:[^\s"':)]+\/)+)([^\s"':/)]+)/g, (_m, pre: string, _dir: string, name: string) => pre + name);
  }

  /**
   * A JSON value (a run record, a report, a log record) with its paths shown: a `file` or `data`
   * field as `path` shows it, an `error` or `note` as `text` does, and in any other string the
   * store's and data folders' paths (the only server paths a story or a context could hold).
   */
  deep<T>(value: T, key = ""): T {
    if (typeof value === "string") {
      if (PATH_KEYS.has(key)) return this.path(value) as T;
      if (MESSAGE_KEYS.has(key)) return this.text(value) as T;
      return this.roots.some((r) => value.includes(r.abs)) ? (this.rooted(value) as T) : value;
    }
    if (Array.isArray(value)) return value.map((v) => this.deep(v, key)) as T;
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.deep(v, k);
      return out as T;
    }
    return value;
  }

  private rooted(s: string): string {
    let out = s;
    for (const r of this.roots) if (out.includes(r.abs)) out = out.split(r.abs).join(r.shown);
    return out;
  }
}

const PATH_KEYS = new Set(["file", "data", "traceFile", "path"]);
const MESSAGE_KEYS = new Set(["error", "note", "message", "reason"]);

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** A run record as the API shows it: paths shown, and a live run's seed and data withheld (but from the admin). */
export function publicRun(run: RunRecord, paths: PathShower, admin = false): RunRecord & { withheld?: string[] } {
  const shown = paths.deep(run);
  if (run.status !== "running" || admin) return shown;
  const params: Record<string, unknown> = {};
  const withheld: string[] = [];
  for (const [k, v] of Object.entries(shown.params)) {
    if ((LIVE_SECRETS as readonly string[]).includes(k) && v !== null && v !== undefined) withheld.push(k);
    else params[k] = v;
  }
  return withheld.length ? { ...shown, params, withheld } : shown;
}

/** A live run's log records as clients may read them: a finished episode's seed would tell the next (seed + 1). */
export function publicRecords<T>(run: RunRecord, records: readonly T[], paths: PathShower, admin = false): T[] {
  const shown = paths.deep(records as T[]);
  if (run.status !== "running" || admin) return shown;
  return shown.map((r) => {
    if (r === null || typeof r !== "object" || !("seed" in r)) return r;
    const { seed: _withheld, ...rest } = r as Record<string, unknown>;
    return rest as T;
  });
}

/**
 * The embedded store: a lowdb JSON file (`<root>/db.json`) that registers every run, and one
 * folder per run (`<root>/runs/<id>/`) holding its append-only episode log and reports.
 * The root is the checkout's `data/` (not the current folder's) unless SOCIALWORLD_DATA or --store
 * says otherwise. Paths a run records (its data file, its output folder) are absolute.
 *
 * Several processes may share a store (the server, and benchmarks run from other terminals).
 * Each change to the registry is made under a lock file (file-lock.ts), on a fresh read of the
 * registry, which is then replaced whole (write-atomic.ts); reads pick up other processes' changes.
 * A change whose lock was taken over before it landed (its process was paused longer than a lock
 * lives, and a process of another machine sharing the store wrote since) is made again on what is
 * there now: its stale copy never replaces the other's, and neither write is lost.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { LowSync, type SyncAdapter } from "lowdb";
import { z } from "zod";
import { FileLockLost, readIfPresent, withFileLock, type FileLockOptions, type HeldLock } from "./file-lock.js";
import { OwnerSchema, ownerGone, thisProcess } from "./owner.js";
import { DataError } from "../worlds/core/errors.js";
import { packageRoot } from "../worlds/question/prompts.js";

export const RunStatusSchema = z.enum(["running", "done", "failed", "interrupted"]);

export const RunRecordSchema = z.object({
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().optional(),
  status: RunStatusSchema,
  /** The run's folder, relative to the store root. */
  dir: z.string(),
  params: z.record(z.string(), z.unknown()),
  summary: z.record(z.string(), z.unknown()).optional(),
  error: z.string().optional(),
  /** The process that started or last resumed the run. */
  owner: OwnerSchema.optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

interface Db {
  version: 1;
  runs: RunRecord[];
}

export const EPISODES_FILE = "episodes.jsonl";

/** How many times a change is made again after its lock was lost (its process paused each time). */
const LOST_LOCK_TRIES = 3;

/** $SOCIALWORLD_DATA, else data/ of the checkout: the same store whichever folder a command runs from. */
export function defaultStoreRoot(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.SOCIALWORLD_DATA || join(packageRoot(), "data"));
}

export interface RunStoreOptions {
  /** How long to wait for another process's lock on the registry, and when to judge it left behind. */
  readonly lock?: FileLockOptions;
  /** The random part of new run ids (6 hex digits by default). */
  readonly suffix?: () => string;
}

const DbSchema = z.object({ runs: z.array(RunRecordSchema) });

/** db.json as lowdb reads and writes it, replaced whole on every write (never half-written). */
class RegistryFile implements SyncAdapter<Db> {
  /** The store's lock while a change is written (RunStore.mutate): the write lands only if it is still held. */
  holding: HeldLock | undefined;

  constructor(readonly path: string) {}

  read(): Db | null {
    const text = readIfPresent(this.path);
    if (text === undefined) return null;
    try {
      return JSON.parse(text) as Db;
    } catch (err) {
      throw new DataError(this.path, {}, `not a socialworld store (not valid JSON: ${(err as Error).message})`);
    }
  }

  write(data: Db): void {
    if (!this.holding) throw new Error(`${this.path}: written only under the store's lock`);
    const text = JSON.stringify(data, null, 2);
    this.holding.replace(this.path, (tmp) => writeFileSync(tmp, text));
  }
}

export class RunStore {
  /** db.json's identity when this process last read or wrote it: a change means another process wrote it. */
  private seen = "";

  private readonly db: LowSync<Db>;

  private constructor(
    readonly root: string,
    private readonly registry: RegistryFile,
    private readonly opts: RunStoreOptions,
  ) {
    this.db = new LowSync<Db>(registry, { version: 1, runs: [] });
  }

  static async open(root = defaultStoreRoot(), opts: RunStoreOptions = {}): Promise<RunStore> {
    mkdirSync(join(root, "runs"), { recursive: true });
    const store = new RunStore(root, new RegistryFile(join(root, "db.json")), opts);
    store.refresh(true);
    return store;
  }

  private get file(): string {
    return join(this.root, "db.json");
  }

  /**
   * The store at `root`, or undefined where there is none: commands that only read (`runs`,
   * `export`) must not create a store because they were given its name, or a mistyped --store
   * would leave an empty store behind and report "no runs" as if that were the answer.
   */
  static async openExisting(root = defaultStoreRoot(), opts: RunStoreOptions = {}): Promise<RunStore | undefined> {
    if (!existsSync(join(root, "db.json")) && !existsSync(join(root, "runs"))) return undefined;
    return RunStore.open(root, opts);
  }

  /** Reads the registry again when it changed on disk (always, with `force`). */
  private refresh(force = false): void {
    const now = identity(this.file);
    if (!force && now === this.seen) return;
    this.db.read();
    const parsed = DbSchema.safeParse(this.db.data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new DataError(this.file, issue ? { field: issue.path.join(".") } : {}, `not a socialworld store (${issue?.message ?? "bad shape"})`);
    }
    this.seen = now;
  }

  /**
   * Changes the registry under the store's lock, starting from what is on disk now. A change whose
   * lock was lost before it landed is made again from a fresh read (`change` may run more than once).
   */
  private async mutate<T>(change: (runs: RunRecord[]) => T): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withFileLock(`${this.file}.lock`, (lock) => this.changeHolding(lock, change), this.opts.lock);
      } catch (err) {
        // Lost again means paused again, each time longer than a lock lives: say so rather than loop.
        if (!(err instanceof FileLockLost) || attempt === LOST_LOCK_TRIES) throw err;
      }
    }
  }

  private changeHolding<T>(lock: HeldLock, change: (runs: RunRecord[]) => T): T {
    this.refresh(true);
    this.registry.holding = lock;
    try {
      const out = change(this.db.data.runs);
      this.db.write();
      this.seen = identity(this.file);
      return out;
    } catch (err) {
      // The copy in memory may hold a change the file does not: read the file again next time.
      this.seen = "";
      throw err;
    } finally {
      this.registry.holding = undefined;
    }
  }

  /** Registers a new run and creates its folder, under an id that no run and no folder has yet. */
  create(kind: string, title: string, params: Record<string, unknown>): Promise<RunRecord> {
    const suffix = this.opts.suffix ?? randomSuffix;
    // The run an attempt whose write was dropped (a lost lock) registered, with the folder it made:
    // the next attempt registers it again rather than leave that folder to nobody.
    let drawn: RunRecord | undefined;
    return this.mutate((runs) => {
      if (drawn && !runs.some((r) => r.id === drawn!.id)) {
        runs.push(drawn);
        return drawn;
      }
      const now = new Date();
      const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
      mkdirSync(join(this.root, "runs"), { recursive: true });
      for (let attempt = 1; attempt <= 100; attempt++) {
        const id = `${stamp}-${kind}-${suffix()}`;
        const dir = join("runs", id);
        if (runs.some((r) => r.id === id) || !makeDir(join(this.root, dir))) continue;
        const run: RunRecord = { id, kind, title, createdAt: now.toISOString(), status: "running", dir, params, owner: thisProcess() };
        runs.push(run);
        drawn = run;
        return run;
      }
      throw new Error(`${join(this.root, "runs")}: no free run id for ${stamp}-${kind} after 100 tries`);
    });
  }

  update(id: string, patch: Partial<Omit<RunRecord, "id" | "dir" | "createdAt">>): Promise<RunRecord> {
    return this.mutate((runs) => {
      const i = runs.findIndex((r) => r.id === id);
      if (i < 0) throw new Error(`no run "${id}" in ${this.root}`);
      // Running again (a resume): this process owns it now.
      const updated = { ...runs[i]!, ...patch, ...(patch.status === "running" ? { owner: thisProcess() } : {}) };
      runs[i] = updated;
      return updated;
    });
  }

  /** Every run, newest first; a run whose process died while running it shows as interrupted. */
  list(): RunRecord[] {
    this.refresh();
    return this.db.data.runs.map(asSeen).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  }

  get(id: string): RunRecord | undefined {
    this.refresh();
    const run = this.db.data.runs.find((r) => r.id === id);
    return run && asSeen(run);
  }

  /** The run's folder (absolute). */
  dirOf(run: RunRecord): string {
    return join(this.root, run.dir);
  }

  episodesPath(run: RunRecord): string {
    return join(this.dirOf(run), EPISODES_FILE);
  }
}

/**
 * A run left "running" by a process that no longer exists (killed, crashed, the machine restarted)
 * is not running: it reads as interrupted, and can be resumed. Only the record read changes.
 */
function asSeen(run: RunRecord): RunRecord {
  return run.status === "running" && run.owner && ownerGone(run.owner) ? { ...run, status: "interrupted" } : run;
}

/** False when the folder exists already. */
function makeDir(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** Changes with every replacement of the file (a new inode) and every write in place. */
function identity(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : "none";
}

/**
 * Six random hex digits for a run id. Not node:crypto: every command registers a run, and loading
 * Node's crypto module costs about 40 million instructions at start-up; an id only has to differ
 * from the others, which `create` checks under the store's lock (a taken id is drawn again).
 */
function randomSuffix(): string {
  return Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, "0");
}

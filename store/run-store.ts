/**
 * The embedded store: a lowdb JSON file (`<root>/db.json`) that registers every run, and one
 * folder per run (`<root>/runs/<id>/`) holding its append-only episode log and reports.
 * The root is `data/` unless SOCIALWORLD_DATA or --store says otherwise.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { JSONFile } from "lowdb/node";
import { Low } from "lowdb";
import { z } from "zod";

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
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

interface Db {
  version: 1;
  runs: RunRecord[];
}

export const EPISODES_FILE = "episodes.jsonl";

export function defaultStoreRoot(): string {
  return resolve(process.env.SOCIALWORLD_DATA ?? "data");
}

export class RunStore {
  private constructor(
    readonly root: string,
    private readonly db: Low<Db>,
  ) {}

  static async open(root = defaultStoreRoot()): Promise<RunStore> {
    mkdirSync(join(root, "runs"), { recursive: true });
    // Not JSONFilePreset: it silently swaps in an in-memory adapter when NODE_ENV=test.
    const db = new Low<Db>(new JSONFile<Db>(join(root, "db.json")), { version: 1, runs: [] });
    await db.read();
    const parsed = z.object({ runs: z.array(RunRecordSchema) }).safeParse(db.data);
    if (!parsed.success) throw new Error(`${join(root, "db.json")}: not a socialworld store (${parsed.error.issues[0]?.message ?? "bad shape"})`);
    return new RunStore(root, db);
  }

  /** Registers a new run and creates its folder. */
  async create(kind: string, title: string, params: Record<string, unknown>): Promise<RunRecord> {
    const now = new Date();
    const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
    const id = `${stamp}-${kind}-${randomBytes(3).toString("hex")}`;
    const dir = join("runs", id);
    mkdirSync(join(this.root, dir), { recursive: true });
    const run: RunRecord = { id, kind, title, createdAt: now.toISOString(), status: "running", dir, params };
    await this.db.update(({ runs }) => {
      runs.push(run);
    });
    return run;
  }

  async update(id: string, patch: Partial<Omit<RunRecord, "id" | "dir" | "createdAt">>): Promise<RunRecord> {
    let updated: RunRecord | undefined;
    await this.db.update(({ runs }) => {
      const i = runs.findIndex((r) => r.id === id);
      if (i < 0) return;
      updated = { ...runs[i]!, ...patch };
      runs[i] = updated;
    });
    if (!updated) throw new Error(`no run "${id}" in ${this.root}`);
    return updated;
  }

  list(): RunRecord[] {
    return this.db.data.runs.slice().sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  }

  get(id: string): RunRecord | undefined {
    return this.db.data.runs.find((r) => r.id === id);
  }

  /** The run's folder (absolute). */
  dirOf(run: RunRecord): string {
    return join(this.root, run.dir);
  }

  episodesPath(run: RunRecord): string {
    return join(this.dirOf(run), EPISODES_FILE);
  }
}

/**
 * `socialworld runs list` · `socialworld runs show RUN_ID` ·
 * `socialworld runs episodes RUN_ID [--offset N] [--limit N]` (JSON lines on stdout)
 */
import { resolve } from "node:path";
import { z } from "zod";
import { readLogPage } from "../../store/log-index.js";
import { defaultStoreRoot, RunStore, type RunRecord } from "../../store/run-store.js";
import { intArg, parseCommand, UsageError } from "../args.js";

export const RUNS_HELP = `socialworld runs list|show|episodes [RUN_ID] [--store DIR]

  runs list                    every run in the store, newest first (a header, then a line a run)
  runs show RUN_ID             one run's record (JSON)
  runs episodes RUN_ID         its logged episodes, one JSON object per line
      [--offset N] [--limit N]
`;

const Args = z.object({
  _: z.union([z.tuple([z.literal("list")]), z.tuple([z.enum(["show", "episodes"]), z.string().min(1)])], {
    error: "expected: list | show RUN_ID | episodes RUN_ID",
  }),
  store: z.string().min(1).optional(),
  offset: intArg(0).default(0),
  limit: intArg(1).optional(),
});

const PAGE = 1000;

export async function runsCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  const store = await RunStore.openExisting(args.store);
  const [verb, id] = args._;
  if (!store) {
    const root = resolve(args.store ?? defaultStoreRoot());
    if (verb !== "list") throw new UsageError(`no store at ${root} (--store names the folder a run was written to)`);
    process.stdout.write(`no runs in ${root}: there is no store there\n`);
    return 0;
  }
  if (verb === "list") {
    const runs = store.list();
    if (runs.length === 0) {
      process.stdout.write(`no runs in ${store.root}\n`);
      return 0;
    }
    process.stdout.write(`runs in ${store.root}, newest first\n\n${runsTable(runs)}`);
    return 0;
  }
  const run = store.get(id!);
  if (!run) throw new UsageError(`no run "${id}" in ${store.root}`);
  if (verb === "show") {
    process.stdout.write(JSON.stringify({ ...run, path: store.dirOf(run) }, null, 2) + "\n");
    return 0;
  }
  // A page at a time: a log of any size goes through in bounded memory.
  const end = args.offset + (args.limit ?? Infinity);
  let torn = false;
  for (let offset = args.offset; offset < end; ) {
    const page = readLogPage(store.episodesPath(run), offset, Math.min(PAGE, end - offset), { resolve: false });
    for (const r of page.records) process.stdout.write(JSON.stringify(r) + "\n");
    torn = page.torn;
    if (page.records.length === 0) break;
    offset += page.records.length;
  }
  if (torn) process.stderr.write("note: the log's last line was cut off mid-write and is skipped\n");
  return 0;
}

/** A graded run (usersim's alignment) shows its mean score as it is, an exact-match run its accuracy in percent. */
function accuracyCell(r: RunRecord): string {
  const a = r.summary?.accuracy;
  if (typeof a !== "number") return "-";
  return typeof r.summary?.graded === "string" ? `${r.summary.graded} ${a.toFixed(3)}` : `${(100 * a).toFixed(1)}%`;
}

/** One line a run under a header, columns aligned; the title, of any length, last. */
export function runsTable(runs: readonly RunRecord[]): string {
  const rows = runs.map((r) => [r.id, r.kind, r.status, accuracyCell(r), r.createdAt.replace("T", " ").replace(/\.\d+Z$|Z$/, ""), r.title]);
  const header = ["RUN ID", "KIND", "STATUS", "ACCURACY", "STARTED (UTC)", "TITLE"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  // Accuracy is a number: right-aligned.
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd() + "\n";
  return line(header) + rows.map(line).join("");
}

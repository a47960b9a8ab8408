/**
 * `socialworld audit --run ID [--world W] [--json OUT.json] [--md OUT.md] [--store DIR] [--quiet]`:
 * the information-leak audit of a logged run (server/run-audit.ts).
 */
import { z } from "zod";
import { readLogPage } from "../../store/log-index.js";
import { RunStore } from "../../store/run-store.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { WORLD_NAMES, worldsWith } from "../../worlds/registry.js";
import { auditRun, renderRunAudit } from "../../server/run-audit.js";
import { parseCommand, UsageError } from "../args.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";

export async function auditHelp(): Promise<string> {
  const audited = (await worldsWith("facts")).map((w) => w.name);
  return `socialworld audit --run RUN_ID [options]

Audits every action of a logged run for information leaks: content (a structured action, the
action as written, a model's raw text) that states a fact the acting agent never perceived. Prints
actions and leaks per agent and per seat controller, and each leak with the fact, the timestep it
became true, and why the agent could not know it.

Options:
  --run RUN_ID        the run (socialworld runs list)
  --world NAME        the world of records that name none (imported contexts; default: the world
                      whose grammar reads them): ${audited.join(", ")}
  --json OUT.json     write the audit as JSON
  --md OUT.md         write it as Markdown
  --store DIR         the embedded store (default: $SOCIALWORLD_DATA, else data/ of the checkout)
  --quiet             no progress bar
`;
}

const Args = z.object({
  run: z.string({ error: "is required" }).min(1),
  // A world without a fact vocabulary is named in each record the audit skips, with why.
  world: z.enum(WORLD_NAMES as [string, ...string[]]).optional(),
  json: z.string().min(1).optional(),
  md: z.string().min(1).optional(),
  store: z.string().min(1).optional(),
  quiet: z.boolean().default(false),
});

export async function auditCommand(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, Args);
  if (a.json) prepareOutput("--json", a.json);
  if (a.md) prepareOutput("--md", a.md);
  checkDistinctFiles([
    ["--json", a.json],
    ["--md", a.md],
  ]);
  const store = await RunStore.openExisting(a.store);
  const run = store?.get(a.run);
  if (!store || !run) throw new UsageError(`--run: no run "${a.run}"${store ? ` in ${store.root}` : " (there is no store: --store names the folder a run was written to)"}`);
  const log = store.episodesPath(run);
  const progress = new Progress(`audit ${run.id}`, readLogPage(log, 0, 0).total, a.quiet ? null : process.stderr);
  const audit = await auditRun(run.id, log, { ...(a.world ? { world: a.world } : {}), onProgress: (done) => progress.update(done) });
  progress.finish();
  const json = JSON.stringify(audit, null, 2) + "\n";
  if (a.json) writeFileAtomic(a.json, json);
  const md = renderRunAudit(audit);
  if (a.md) writeFileAtomic(a.md, md);
  process.stdout.write(md);
  return 0;
}

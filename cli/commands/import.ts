/**
 * `socialworld import sap FILE [--title TEXT] [--store DIR]`
 */
import { z } from "zod";
import { RunStore } from "../../store/run-store.js";
import { importSap } from "../../trainers/data/sap-import.js";
import { parseCommand } from "../args.js";

export const IMPORT_HELP = `socialworld import sap FILE [--title TEXT] [--store DIR]

Loads a socialized context as a run with one episode, which \`runs episodes RUN_ID\`, the REST
API and the web client (#/run/RUN_ID) replay. FILE is ours ({agents_names, socialized_context})
or one the social-world-model project wrote: a bare context, or a result file holding it under
"socialized_context" (its story and question are kept), with observations and actions as
"Name: text" lines or as {"Name": "text"} objects.

Options:
  --title TEXT   the run's title (default: "Imported socialized context: FILE")
  --store DIR    the embedded store (default: $SOCIALWORLD_DATA, else data/ of the checkout)
`;

const Args = z.object({
  _: z.tuple([z.literal("sap", { error: 'expected "sap" (the only import format)' }), z.string().min(1)], { error: "expected: import sap FILE" }),
  title: z.string().min(1).optional(),
  store: z.string().min(1).optional(),
});

export async function importCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  const store = await RunStore.open(args.store);
  const { run, sap } = await importSap(store, args._[1], args.title);
  for (const p of sap.problems) process.stderr.write(`warning: ${args._[1]}: ${p}\n`);
  const ctx = sap.context;
  process.stdout.write(
    `imported ${ctx.agents_names.length} agents, ${ctx.socialized_context.length} timesteps (${sap.layout} layout${sap.path ? `, under ${sap.path}` : ""}) as run ${run.id} in the store ${store.root}\n` +
      `  socialworld runs episodes ${run.id}   ·   web client: #/run/${run.id}\n`,
  );
  return 0;
}

/** `socialworld questions --run ID --out FILE [--types T,...] [--max N] [--seed S] [--store DIR] [--quiet]` */
import { z } from "zod";
import { QuestionsError, questionsOfRun, selectQuestions, writeQuestions } from "../../benchmarks/episode-questions.js";
import { readLogPage } from "../../store/log-index.js";
import { RunStore } from "../../store/run-store.js";
import { loadQuestionMaker, worldsWith } from "../../worlds/registry.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";

export async function questionsHelp(): Promise<string> {
  const worlds = await worldsWith("questions");
  return `socialworld questions --run RUN_ID --out FILE [options]

Writes theory-of-mind questions about every episode of a logged run (a room's episodes, or the
stories of a benchmark run), labelled by the world model, in the world's benchmark format:
\`socialworld bench <world> --data FILE\` runs them like any file. Each episode is asked every
question its world asks (for every object, agent and chain of agents the world model can answer):
${worlds.map((w) => `  ${w.name.padEnd(8)} ${w.questions!.types.join(", ")}`).join("\n")}

Options:
  --run RUN_ID      the run (socialworld runs list)
  --out FILE        where to write (ToMi: FILE.txt and FILE.trace)
  --types T,...     only these question types
  --max N           at most N questions, drawn with --seed (file order kept)
  --seed S          the draw of --max and of shuffled choices (default 0)
  --store DIR       the embedded store (default: data/, or $SOCIALWORLD_DATA)
  --quiet           no progress bar
`;
}

const Args = z.object({
  run: z.string({ error: "is required" }).min(1),
  out: z.string({ error: "is required" }).min(1),
  types: z
    .string()
    .min(1)
    .transform((s) => s.split(",").map((t) => t.trim()).filter(Boolean))
    .optional(),
  max: intArg(1).optional(),
  seed: intArg(0, 2 ** 32 - 1).default(0),
  store: z.string().min(1).optional(),
  quiet: z.boolean().default(false),
});

export async function questionsCommand(argv: readonly string[]): Promise<number> {
  const a = parseCommand(argv, Args);
  prepareOutput("--out", a.out);
  const store = await RunStore.openExisting(a.store);
  const run = store?.get(a.run);
  if (!store || !run) throw new UsageError(`--run: no run "${a.run}"${store ? ` in ${store.root}` : " (there is no store: --store names the folder a run was written to)"}`);
  const progress = new Progress(`questions ${run.id}`, readLogPage(store.episodesPath(run), 0, 0).total, a.quiet ? null : process.stderr);
  try {
    const { world, quizzes, skipped } = await questionsOfRun(store, run, (done) => progress.update(done));
    progress.finish();
    if (skipped.length) {
      process.stderr.write(`left out ${skipped.length} episode${skipped.length === 1 ? "" : "s"} the benchmark's format cannot tell:\n${skipped.map((s) => `  ${s.source}: ${s.reason}\n`).join("")}`);
    }
    const kept = selectQuestions(await loadQuestionMaker(world), quizzes, { ...(a.types ? { types: a.types } : {}), ...(a.max !== undefined ? { max: a.max } : {}), seed: a.seed });
    const written = await writeQuestions(world, kept, a.out, a.seed);
    const files = [written.set.data, ...written.set.files.map((f) => f.path).filter((p) => p !== written.set.data)];
    const types = Object.entries(written.byType).map(([t, n]) => `${t} ${n}`).join(", ");
    process.stdout.write(`wrote ${written.questions} ${world} questions about ${kept.length} episode${kept.length === 1 ? "" : "s"} of run ${run.id}: ${files.join(", ")}\n  ${types}\n`);
    return 0;
  } catch (err) {
    if (err instanceof QuestionsError) throw new UsageError(err.message);
    throw err;
  }
}

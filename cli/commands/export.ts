/**
 * `socialworld export --run RUN_ID --format verl|sft|chat|sap --out PATH [options]`
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { MODES, type Mode } from "../../worlds/question/benchmark.js";
import { defaultStoreRoot, RunStore } from "../../store/run-store.js";
import { replaceFile } from "../../store/write-atomic.js";
import { DataError } from "../../worlds/core/errors.js";
import { examplesFromLog, type QuestionExample, type TurnExample } from "../../trainers/data/examples.js";
import { readRunLog } from "../../trainers/data/run-log.js";
import { writeVerlParquet } from "../../trainers/data/verl-parquet.js";
import { writeSftParquet } from "../../trainers/data/sft-parquet.js";
import { writeChatJsonl } from "../../trainers/data/chat-jsonl.js";
import { exportSap } from "../../trainers/data/sap-export.js";
import { parseCommand, UsageError } from "../args.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";

export const EXPORT_HELP = `socialworld export --run RUN_ID --format verl|sft|chat|sap --out PATH [options]

Writes a run's logged episodes as training or evaluation data. Prompts are rebuilt from the
benchmark's own templates and data file, so each row is exactly what a model is asked.

Formats:
  verl   Parquet in VERL's RL layout: data_source, prompt (list of {role, content}), ability,
         reward_model {style: "rule", ground_truth}, extra_info {split, index, id, question_type,
         official_answer, world_model_answer, choices, reference_answer, file, line, ...}
  sft    Parquet with prompt and response strings (VERL's SFT trainer: data.prompt_key=prompt
         data.response_key=response), plus data_source and extra_info; the response is the
         answer written as the prompt asks for it (checked with the benchmark's own judge)
  chat   JSONL, one {"messages": [{role: "user", ...}, {role: "assistant", ...}]} per line
  sap    a folder with one socialized-context JSON file per episode (per question), named by
         the question's id

Options:
  --run RUN_ID         the run (socialworld runs list)
  --out PATH           the file to write (a folder for sap)
  --labels SOURCE      official (default) or world: the world model's labels where they differ
  --mode MODE          the prompts' mode, vanilla or simulation (default: the run's)
  --split NAME         extra_info.split (default train)
  --data FILE          the benchmark data file, if it moved since the run (default: the run's)
  --turns              sft and chat: also the turns of live rooms' episodes (what each agent
                       observed, what it did); verl rows need a label and leave them out
  --source SOURCE      sap: world (the world model's contexts, default) or agent (the contexts
                       the agent wrote in simulation mode)
  --layout LAYOUT      sap: context (the context alone, as both projects write it; default) or
                       swm (the social-world-model project's result files: story, question,
                       answer, and the context with {"Name": "text"} observations)
  --force              sap: write into a folder that already holds .json files
  --store DIR          the embedded store (default: $SOCIALWORLD_DATA, else data/ of the checkout)
`;

const FORMATS = ["verl", "sft", "chat", "sap"] as const;

const Args = z.object({
  _: z.tuple([], { error: "takes no positional arguments" }),
  run: z.string({ error: "is required" }).min(1),
  format: z.enum(FORMATS, { error: `expected one of ${FORMATS.join(", ")}` }),
  out: z.string({ error: "is required" }).min(1),
  labels: z.enum(["official", "world"]).default("official"),
  mode: z.enum(MODES as [Mode, ...Mode[]]).optional(),
  split: z.string().min(1).default("train"),
  data: z.string().min(1).optional(),
  turns: z.boolean().default(false),
  source: z.enum(["world", "agent"]).default("world"),
  layout: z.enum(["context", "swm"]).default("context"),
  force: z.boolean().default(false),
  store: z.string().min(1).optional(),
});

export async function exportCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  const store = await RunStore.openExisting(args.store);
  if (!store) throw new UsageError(`--store: no store at ${resolve(args.store ?? defaultStoreRoot())}`);
  const run = store.get(args.run);
  if (!run) throw new UsageError(`--run: no run "${args.run}" in ${store.root}`);
  const log = readRunLog(store, run);
  if (log.torn) process.stderr.write("note: the log's last line was cut off mid-write and is left out\n");
  // An unfinished run exports what it logged; the data then holds only part of the benchmark.
  if (run.status !== "done") {
    process.stderr.write(`note: run ${run.id} is ${run.status}: the export holds the ${log.records.length} records it logged, not the whole benchmark\n`);
  }

  if (args.format === "sap") {
    if (statSync(args.out, { throwIfNoEntry: false })?.isFile()) {
      throw new UsageError(`--out: ${args.out} is a file; the sap export writes a folder of JSON files (one per episode)`);
    }
    const { files, skipped } = await exportSap(run, log, args.out, {
      layout: args.layout,
      source: args.source,
      force: args.force,
      ...(args.data ? { data: args.data } : {}),
    });
    report(skipped);
    if (files.length === 0) throw new DataError(log.path, {}, "nothing to export: no record holds a socialized context of that source");
    process.stdout.write(`${files.length} socialized contexts (${args.layout} layout, ${args.source}) written to ${args.out}\n`);
    return 0;
  }

  // Never write over what the export reads: the benchmark file its prompts are rebuilt from, or
  // the run's own episode log.
  checkDistinctFiles([
    ["--data (the run's benchmark file)", args.data ?? (typeof run.params.data === "string" ? run.params.data : undefined)],
    ["the run's episode log", log.path],
    ["--out", args.out],
  ]);
  prepareOutput("--out", args.out);
  const { examples, skipped } = await examplesFromLog(run, log, {
    labels: args.labels,
    turns: args.turns && args.format !== "verl",
    ...(args.mode ? { mode: args.mode } : {}),
    ...(args.data ? { data: args.data } : {}),
  });
  const rows = args.format === "verl" ? examples.filter((e): e is QuestionExample => e.kind === "question") : examples;
  report(skipped);
  if (rows.length === 0) {
    const why = Object.keys(skipped).length ? " (see the skipped counts above)" : log.records.length ? "" : " (the log is empty)";
    throw new DataError(log.path, {}, `nothing to export as ${args.format}: no record gives an example${why}`);
  }
  const metadata = { "socialworld.run": run.id, "socialworld.format": args.format, "socialworld.labels": args.labels, "socialworld.split": args.split };
  replaceFile(args.out, (tmp) => {
    if (args.format === "verl") writeVerlParquet(tmp, rows as QuestionExample[], { split: args.split, metadata });
    else if (args.format === "sft") writeSftParquet(tmp, rows as (QuestionExample | TurnExample)[], { split: args.split, metadata });
    else writeChatJsonl(tmp, rows);
  });
  process.stdout.write(`${rows.length} examples (${args.format}, ${args.labels} labels) written to ${args.out}\n`);
  return 0;
}

function report(skipped: Readonly<Record<string, number>>): void {
  for (const [reason, n] of Object.entries(skipped)) process.stderr.write(`skipped ${n} ${reason}\n`);
}

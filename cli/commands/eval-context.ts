/**
 * `socialworld eval-context --gt DIR --gen DIR` · `socialworld eval-context --run RUN_ID`
 *   [--judge URL --judge-model NAME] [--json OUT.json] [--md OUT.md] [--concurrency N] [--quiet]
 */
import { z } from "zod";
import {
  evaluateContexts,
  pairDirectories,
  renderContextTable,
  type ContextEvalReport,
  type ContextPair,
} from "../../benchmarks/context-eval.js";
import { EndpointJudge } from "../../benchmarks/context-eval/judge.js";
import { RunStore } from "../../store/run-store.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { readRunLog } from "../../trainers/data/run-log.js";
import { fileStem } from "../../trainers/data/sap-export.js";
import { DataError } from "../../worlds/core/errors.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";
import { onStopSignal } from "../stop-signals.js";

export const EVAL_CONTEXT_HELP = `socialworld eval-context --gt DIR --gen DIR [options]
socialworld eval-context --run RUN_ID [options]

Scores generated socialized contexts against the world model's, as the social-world-model
project's context evaluation does: structural score (schema, agent consistency, timesteps;
weight 0.3) and observation accuracy (does each agent observe the right events; weight 0.7).
Observation accuracy is exact: the contexts are aligned by events, not by timestep number, and
every (event, agent) pair is checked against the ground truth. Prints the Markdown table
(| File | Structural | Observation Accuracy | Overall |, a mean row, a final-score row).

Input:
  --gt DIR             ground-truth contexts, one .json per story or question (for example
                       from: socialworld export --run ID --format sap --out DIR)
  --gen DIR            generated contexts with the same file names (our layout or the
                       social-world-model project's result files; lines or dicts)
  --run RUN_ID         instead of folders: a simulation-mode benchmark run, the contexts its agent
                       wrote against the world model's of the same stories
  --store DIR          the store for --run (default: $SOCIALWORLD_DATA, else data/ of the checkout)

Options:
  --judge URL          grade observation accuracy with an LLM judge at an OpenAI-compatible
                       endpoint (e.g. https://api.openai.com/v1) instead; the key is read from
                       $SOCIALWORLD_JUDGE_API_KEY or $OPENAI_API_KEY; busy or failing endpoints are
                       retried up to 4 times with backoff; the exact score stays in --json
  --judge-model NAME   the judge's model (default gpt-4o, as upstream)
  --concurrency N      judge calls at once (default 8)
  --json OUT.json      every file's scores, the event alignment and the schema problems
  --md OUT.md          write the table to a file too
  --quiet              no progress bar
`;

const Args = z
  .object({
    _: z.tuple([], { error: "takes no positional arguments" }),
    gt: z.string().min(1).optional(),
    gen: z.string().min(1).optional(),
    run: z.string().min(1).optional(),
    store: z.string().min(1).optional(),
    judge: z.url({ error: "expected the endpoint's URL (http://host:port/v1)" }).optional(),
    "judge-model": z.string().min(1).default("gpt-4o"),
    concurrency: intArg(1, 256).default(8),
    json: z.string().min(1).optional(),
    md: z.string().min(1).optional(),
    quiet: z.boolean().default(false),
  })
  .refine((a) => (a.run ? !a.gt && !a.gen : !!a.gt && !!a.gen), { error: "give --gt DIR and --gen DIR, or --run RUN_ID", path: ["gt"] });

export async function evalContextCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  if (args.json) prepareOutput("--json", args.json);
  if (args.md) prepareOutput("--md", args.md);
  checkDistinctFiles([
    ["--json", args.json],
    ["--md", args.md],
  ]);
  const { pairs, missing } = args.run ? await pairsFromRun(args.run, args.store) : pairDirectories(args.gt!, args.gen!);
  for (const id of missing) process.stderr.write(`warning: no generated context for ${id} (left out)\n`);
  if (pairs.length === 0) throw new DataError(args.gen ?? args.gt ?? "", {}, "no generated context has a ground truth of the same name");
  const judge = args.judge
    ? new EndpointJudge({
        baseUrl: args.judge,
        model: args["judge-model"],
        ...((process.env.SOCIALWORLD_JUDGE_API_KEY ?? process.env.OPENAI_API_KEY) ? { apiKey: (process.env.SOCIALWORLD_JUDGE_API_KEY ?? process.env.OPENAI_API_KEY)! } : {}),
      })
    : undefined;
  const progress = new Progress("eval-context", pairs.length, args.quiet ? null : process.stderr);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  let report: ContextEvalReport;
  try {
    report = await evaluateContexts(pairs, {
      ...(judge ? { judge } : {}),
      concurrency: args.concurrency,
      missing,
      signal: controller.signal,
      onResult: (_r, done) => progress.update(done),
    });
  } finally {
    signals.dispose();
  }
  progress.finish();
  for (const r of report.results) {
    if (r.error) process.stderr.write(`warning: ${r.fileId}: ${r.error} (scored 0)\n`);
    if (r.judge?.error) process.stderr.write(`warning: ${r.fileId}: judge failed: ${r.judge.error} (scored 0)\n`);
  }
  const table = renderContextTable(report);
  if (args.md) writeFileAtomic(args.md, table + "\n");
  if (args.json) writeFileAtomic(args.json, JSON.stringify(report, null, 2) + "\n");
  process.stdout.write(table + "\n");
  if (controller.signal.aborted) {
    process.stderr.write(`interrupted: ${report.results.length}/${pairs.length} files scored\n`);
    return signals.exitCode;
  }
  return 0;
}

/** A simulation-mode run: each question's agent-written context against the world model's. */
async function pairsFromRun(runId: string, storeDir: string | undefined): Promise<{ pairs: ContextPair[]; missing: string[] }> {
  const store = await RunStore.open(storeDir);
  const run = store.get(runId);
  if (!run) throw new UsageError(`--run: no run "${runId}" in ${store.root}`);
  const log = readRunLog(store, run);
  const pairs: ContextPair[] = [];
  const missing: string[] = [];
  const used = new Set<string>();
  for (const { line, record } of log.records) {
    if (record.kind !== "benchmark_item" || !record.socialized_context) continue;
    let fileId = fileStem(record.result.id);
    if (used.has(fileId)) fileId = `${fileId}-${line}`;
    used.add(fileId);
    const written = record.turns.find((t) => t.info?.socializedContext !== undefined)?.info?.socializedContext;
    if (written === undefined) {
      missing.push(fileId);
      continue;
    }
    const source = `${log.path}:${line}`;
    pairs.push({ fileId, gt: { raw: record.socialized_context, source, meta: { question: record.result.question } }, gen: { json: written, source } });
  }
  if (pairs.length === 0) {
    throw new DataError(log.path, {}, `run ${run.id} holds no context written by its agent (run the benchmark with --mode simulation and an agent that writes one)`);
  }
  return { pairs, missing };
}

/**
 * `socialworld bench <tomi|hitom|fantom> --data FILE --agent NAME [--mode vanilla|simulation]
 *  [--limit N] [--concurrency N] [--json OUT.json] [--md OUT.md] [--timeout MS] [--store DIR]
 *  [--resume RUN_ID] [--quiet]`
 */
import { z } from "zod";
import { AgentSpecError } from "../../agents/agent-spec-error.js";
import { loadAgent } from "../../agents/builtin-agents.js";
import { BENCHMARK_NAMES, BenchmarkOptionError, loadBenchmark } from "../../benchmarks/catalog.js";
import { buildReport, renderReport, type BenchReport } from "../../benchmarks/report.js";
import { RunAborted, runBenchmark, type ItemResult } from "../../benchmarks/runner.js";
import { MODES } from "../../benchmarks/benchmark.js";
import { EpisodeLog, readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { thisProcess } from "../../store/owner.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";
import { DEVICE_HELP, deviceArgs, deviceOptions, useDevice } from "../device.js";
import { onStopSignal } from "../stop-signals.js";

export const BENCH_HELP = `socialworld bench <${BENCHMARK_NAMES.join("|")}> --data FILE [options]

Runs a benchmark file question by question with an agent in the respondent's seat, then prints
accuracy by question type; official labels that disagree with the world model are listed by cause.

Options:
  --data FILE          the benchmark file (ToMi .txt with its .trace beside it; Hi-ToM .json; FANToM .json)
  --agent NAME         simulation (default), random[:SEED], policy:DIR, onnx:DIR, or
                       llm:MODEL[@BASE_URL][?options] (any OpenAI-compatible endpoint; see the README)
  --mode MODE          vanilla (story and question; default) or simulation (socialized context first)
  --limit N            only the first N questions
  --concurrency N      questions answered at once (default 4)
  --timeout MS         per-question deadline; past it the question counts as unanswered
  --json OUT.json      write the report as JSON
  --md OUT.md          write the report as Markdown
  --store DIR          the embedded store (default: data/, or $SOCIALWORLD_DATA)
  --resume RUN_ID      continue an interrupted run: logged questions are not asked again
  --quiet              no progress bar
${DEVICE_HELP}

FANToM only:
  --context MODE       short (the official default) or full: the conversation given with each question
  --embedder SPEC      lexical (default; offline, not the official numbers) or onnx:DIR (a sentence-
                       embedding model folder with tokenizer.json and model.onnx) to judge free-form beliefs
  --aggregation BY     set (default), part or conversation: what ALL* and ALL group by
`;

const Args = z.object({
  _: z.tuple([z.enum(BENCHMARK_NAMES as [string, ...string[]], { error: `expected one of ${BENCHMARK_NAMES.join(", ")}` })], {
    error: `expected the benchmark name: ${BENCHMARK_NAMES.join(", ")}`,
  }),
  data: z.string({ error: "is required" }).min(1),
  agent: z.string().min(1).default("simulation"),
  mode: z.enum(MODES as [string, ...string[]]).default("vanilla"),
  limit: intArg(1).optional(),
  concurrency: intArg(1, 4096).default(4),
  timeout: intArg(1).optional(),
  json: z.string().min(1).optional(),
  md: z.string().min(1).optional(),
  store: z.string().min(1).optional(),
  resume: z.string().min(1).optional(),
  quiet: z.boolean().default(false),
  context: z.enum(["short", "full"]).optional(),
  embedder: z.string().regex(/^(lexical|onnx:.+)$/, "expected lexical or onnx:DIR").optional(),
  aggregation: z.enum(["set", "part", "conversation"]).optional(),
  ...deviceArgs,
});

export async function benchCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(
    argv,
    {
      data: { type: "string" },
      agent: { type: "string" },
      mode: { type: "string" },
      limit: { type: "string" },
      concurrency: { type: "string" },
      timeout: { type: "string" },
      json: { type: "string" },
      md: { type: "string" },
      store: { type: "string" },
      resume: { type: "string" },
      quiet: { type: "boolean" },
      context: { type: "string" },
      embedder: { type: "string" },
      aggregation: { type: "string" },
      ...deviceOptions,
    },
    Args,
  );
  await useDevice(args);
  const name = args._[0];
  if (args.json) prepareOutput("--json", args.json);
  if (args.md) prepareOutput("--md", args.md);
  checkDistinctFiles([
    ["--data", args.data],
    ["--json", args.json],
    ["--md", args.md],
  ]);
  let benchmark;
  try {
    benchmark = await loadBenchmark(name, { context: args.context, embedder: args.embedder, aggregation: args.aggregation });
  } catch (err) {
    if (err instanceof BenchmarkOptionError) throw new UsageError(err.message);
    throw err;
  }
  let agent;
  try {
    agent = await loadAgent(args.agent);
  } catch (err) {
    if (err instanceof AgentSpecError) throw new UsageError(`--agent: ${err.message}`);
    throw err;
  }
  const mode = args.mode as "vanilla" | "simulation";
  // Bad input fails here, before any run or report exists.
  let items = benchmark.load(args.data);
  if (args.limit !== undefined) items = items.slice(0, args.limit);

  const store = await RunStore.open(args.store);
  const options = Object.fromEntries(
    Object.entries({ context: args.context, embedder: args.embedder, aggregation: args.aggregation }).filter(([, v]) => v !== undefined),
  );
  const params = { benchmark: name, data: args.data, agent: agent.id, mode, limit: args.limit ?? null, options };
  let run;
  const done = new Map<string, ItemResult>();
  const loggedContexts = new Set<string>();
  if (args.resume) {
    run = store.get(args.resume);
    if (!run) throw new UsageError(`--resume: no run "${args.resume}" in ${store.root}`);
    // A run another process of this host is still running would get two writers. (The store reads
    // a run whose process died as interrupted; of a process elsewhere, nobody here can tell.)
    if (run.status === "running" && run.owner?.host === thisProcess().host) {
      throw new UsageError(`--resume: run ${run.id} is still running (process ${run.owner.pid}); wait for it to end or stop it first`);
    }
    for (const k of ["benchmark", "data", "agent", "mode", "options"] as const) {
      const was = JSON.stringify(run.params[k] ?? {});
      const now = JSON.stringify(params[k]);
      if (was !== now) throw new UsageError(`--resume: run ${run.id} has ${k}=${was}, not ${now}`);
    }
    const logged = readEpisodeLog<{ result: ItemResult; context_id?: string; socialized_context?: unknown }>(store.episodesPath(run));
    for (const rec of logged.records) {
      done.set(rec.result.id, rec.result);
      if (rec.context_id && rec.socialized_context) loggedContexts.add(rec.context_id);
    }
    run = await store.update(run.id, { status: "running" });
  } else {
    run = await store.create("bench", `${benchmark.title} · ${agent.id} · ${mode}`, params);
  }

  const log = new EpisodeLog(store.episodesPath(run));
  if (log.tornBytes > 0) {
    process.stderr.write(`note: the log ended in a line cut off mid-write; its ${log.tornBytes} bytes are kept in ${log.path}.torn, and that question is asked again\n`);
  }
  const progress = new Progress(`${name} ${agent.id}`, items.length, args.quiet ? null : process.stderr);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  const startedAt = new Date();
  let correct = [...done.values()].filter((r) => r.correct).length;
  let results: ItemResult[];
  try {
    results = await runBenchmark({
      benchmark,
      items,
      agent,
      mode,
      concurrency: args.concurrency,
      ...(args.timeout !== undefined ? { turnTimeoutMs: args.timeout } : {}),
      log,
      runId: run.id,
      done,
      loggedContexts,
      signal: controller.signal,
      onResult: (r, finished) => {
        if (r.correct) correct++;
        progress.update(finished, () => `acc ${((100 * correct) / finished).toFixed(1)}%`);
      },
    });
  } catch (err) {
    log.close();
    progress.finish();
    if (err instanceof RunAborted) {
      await store.update(run.id, { status: "interrupted", finishedAt: new Date().toISOString() });
      process.stderr.write(`interrupted: ${err.finished}/${err.total} questions logged; continue with --resume ${run.id}\n`);
      return signals.exitCode;
    }
    await store.update(run.id, { status: "failed", finishedAt: new Date().toISOString(), error: String(err) });
    throw err;
  } finally {
    signals.dispose();
  }
  log.close();
  progress.finish();
  const report = buildReport({ benchmark, items, results, agent: agent.id, mode, data: args.data, runId: run.id, startedAt, finishedAt: new Date() });
  const reportPath = `${store.dirOf(run)}/report.json`;
  const reportJson = JSON.stringify(report, null, 2) + "\n";
  writeFileAtomic(reportPath, reportJson);
  if (args.json) writeFileAtomic(args.json, reportJson);
  const md = renderReport(report);
  if (args.md) writeFileAtomic(args.md, md);
  await store.update(run.id, { status: "done", finishedAt: report.finishedAt, summary: summaryOf(report) });
  process.stdout.write(md);
  return 0;
}

function summaryOf(r: BenchReport): Record<string, unknown> {
  return { total: r.total, correct: r.correct, accuracy: r.accuracy, disagreements: r.disagreements.total };
}

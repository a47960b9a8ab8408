/**
 * `socialworld bench <tomi|hitom|fantom|social> --data FILE --agent NAME [--mode vanilla|simulation]
 *  [--limit N] [--concurrency N] [--json OUT.json] [--md OUT.md] [--timeout MS] [--store DIR]
 *  [--resume RUN_ID] [--quiet]`
 */
import { z } from "zod";
import { AgentSpecError } from "../../agents/agent-spec-error.js";
import { loadAgent } from "../../agents/registry.js";
import { loadBenchmark, RegistryError, WORLD_NAMES } from "../../worlds/registry.js";
import { renderReport } from "../../benchmarks/report.js";
import { RunAborted, type ItemResult } from "../../benchmarks/runner.js";
import { BenchmarkSession, reportJson, ResumeRefused } from "../../benchmarks/session.js";
import { BenchmarkOptionError, MODES } from "../../worlds/question/benchmark.js";
import { RunStore } from "../../store/run-store.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { intArg, parseCommand, UsageError } from "../args.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";
import { DEVICE_HELP, deviceArgs, deviceOptions, useDevice } from "../device.js";
import { onStopSignal } from "../stop-signals.js";

export const BENCH_HELP = `socialworld bench <${WORLD_NAMES.join("|")}> --data FILE [options]

Runs a benchmark file question by question with an agent in the respondent's seat, then prints
accuracy by question type; official labels that disagree with the world model are listed by cause.

Options:
  --data FILE          the benchmark file (ToMi .txt with its .trace beside it; Hi-ToM .json; FANToM .json;
                       social: interaction trees, .jsonl or a .json array)
  --agent NAME         simulation (default), random[:SEED], majority:FILE (social: fitted on FILE's labels),
                       policy:DIR, onnx:DIR, or llm:MODEL[@BASE_URL][?options] (any OpenAI-compatible
                       endpoint; see the README)
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

Hi-ToM only:
  --vp-labels FROM     cotp (default) or own: score VP entries against the label of the CoTP entry
                       asking the same question (upstream's evaluator reads every label from the
                       CoT files) or against their own label

Social only:
  --depth N            only the tasks at depth N (0: reactions to the post, 1: to a depth-0 comment or repost)
  --embedder onnx:DIR  also BERTScore of the content, with this encoder (a folder with tokenizer.json and
                       model.onnx, exported truncated to the layer BERTScore uses; see docs/worlds/social.md)
`;

const Args = z.object({
  _: z.tuple([z.enum(WORLD_NAMES as [string, ...string[]], { error: `expected one of ${WORLD_NAMES.join(", ")}` })], {
    error: `expected the benchmark name: ${WORLD_NAMES.join(", ")}`,
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
  depth: intArg(0, 1000).optional(),
  "vp-labels": z.enum(["cotp", "own"]).optional(),
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
      depth: { type: "string" },
      "vp-labels": { type: "string" },
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
    benchmark = await loadBenchmark(name, { context: args.context, embedder: args.embedder, aggregation: args.aggregation, depth: args.depth, vpLabels: args["vp-labels"] });
  } catch (err) {
    if (err instanceof BenchmarkOptionError || err instanceof RegistryError) throw new UsageError(err.message);
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
  for (const warning of benchmark.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
  if (args.limit !== undefined) items = items.slice(0, args.limit);

  const options = Object.fromEntries(
    Object.entries({ context: args.context, embedder: args.embedder, aggregation: args.aggregation, depth: args.depth, vpLabels: args["vp-labels"] }).filter(([, v]) => v !== undefined),
  );
  let session;
  try {
    session = await BenchmarkSession.start({
      store: await RunStore.open(args.store),
      benchmark,
      items,
      agentId: agent.id,
      mode,
      data: args.data,
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      params: { options },
      ...(args.resume ? { resume: args.resume } : {}),
    });
  } catch (err) {
    if (err instanceof ResumeRefused) throw new UsageError(`--resume: ${err.message}`);
    throw err;
  }
  const { log, run } = session;
  if (log.tornBytes > 0) {
    process.stderr.write(`note: the log ended in a line cut off mid-write; its ${log.tornBytes} bytes are kept in ${log.path}.torn, and that question is asked again\n`);
  }
  const progress = new Progress(`${name} ${agent.id}`, items.length, args.quiet ? null : process.stderr);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  let correct = [...session.done.values()].filter((r) => r.correct).length;
  let results: ItemResult[];
  try {
    results = await session.ask({
      agent,
      concurrency: args.concurrency,
      ...(args.timeout !== undefined ? { turnTimeoutMs: args.timeout } : {}),
      signal: controller.signal,
      onResult: (r, finished) => {
        if (r.correct) correct++;
        progress.update(finished, () => `acc ${((100 * correct) / finished).toFixed(1)}%`);
      },
    });
  } catch (err) {
    progress.finish();
    if (err instanceof RunAborted) {
      await session.close("interrupted");
      process.stderr.write(`interrupted: ${err.finished}/${err.total} questions logged; continue with --resume ${run.id}\n`);
      return signals.exitCode;
    }
    await session.close("failed", { error: String(err) });
    throw err;
  } finally {
    signals.dispose();
  }
  progress.finish();
  const report = (await session.close("done", { results }))!;
  if (args.json) writeFileAtomic(args.json, reportJson(report));
  const md = renderReport(report);
  if (args.md) writeFileAtomic(args.md, md);
  process.stdout.write(md);
  return 0;
}

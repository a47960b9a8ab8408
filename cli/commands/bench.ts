/**
 * `socialworld bench <world> [--data FILE] [--agent NAME] [--mode vanilla|simulation]
 *  [--limit N] [--concurrency N] [--json OUT.json] [--md OUT.md] [--timeout MS] [--store DIR]
 *  [--resume RUN_ID] [--quiet]`
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { AgentSpecError } from "../../agents/agent-spec-error.js";
import { loadAgent } from "../../agents/registry.js";
import { defaultBenchFile, looksLike } from "../../benchmarks/official-data.js";
import { DataError } from "../../worlds/core/errors.js";
import { loadBenchmark, RegistryError, WORLD_NAMES } from "../../worlds/registry.js";
import { renderReport } from "../../benchmarks/report.js";
import { JudgeFailed, RunAborted, type ItemResult } from "../../benchmarks/runner.js";
import { BenchmarkSession, reportJson, ResumeRefused } from "../../benchmarks/session.js";
import { BenchmarkOptionError, MODES, recordedOptions } from "../../worlds/question/benchmark.js";
import { RunStore } from "../../store/run-store.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { intArg, UsageError } from "../args.js";
import { flagsHelp, parseWithFlags } from "../benchmark-flags.js";
import { judgeModelArg } from "../judge-arg.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";
import { DEVICE_HELP, deviceArgs, useDevice } from "../device.js";
import { onStopSignal } from "../stop-signals.js";

export const BENCH_HELP = `socialworld bench <${WORLD_NAMES.join("|")}> [--data FILE] [--agent NAME] [options]

Runs a benchmark file question by question with an agent in the respondent's seat, then prints
accuracy by question type; official labels that disagree with the world model are listed by cause.

Options:
  --data FILE          the benchmark file (ToMi .txt with its .trace beside it; Hi-ToM .json; FANToM .json;
                       usersim conversation records, .jsonl or .parquet; social: interaction trees, .jsonl
                       or a .json array); default: the official file \`socialworld data get NAME\` downloaded
                       (ToMi's val split, Hi-ToM_data.json, fantom_v1.json under data/benchmarks/ of the checkout)
  --agent NAME         who answers (default: simulation): simulation, random[:SEED], majority:FILE (social:
                       fitted on FILE's labels), policy:DIR, onnx:DIR, or llm:MODEL[@BASE_URL][?options]
                       (any OpenAI-compatible endpoint; see docs/llm-agents.md)
  --mode MODE          vanilla (story and question; default) or simulation (socialized context first)
  --limit N            only the first N questions
  --concurrency N      questions answered at once (default 4)
  --timeout MS         per-question deadline; past it the question counts as unanswered
  --json OUT.json      write the report as JSON
  --md OUT.md          write the report as Markdown
  --store DIR          the embedded store (default: $SOCIALWORLD_DATA, else data/ of the checkout)
  --resume RUN_ID      continue an interrupted run: logged questions are not asked again
  --quiet              no progress bar
  --threads N          CPU threads of a policy's native engine (default: one per core)
${DEVICE_HELP}

usersim only:
  --hierarchy FILE     the hierarchy of the reply (HumanLM's layout; default: stance, emotion, belief,
                       value, goal, communication, then the response)
  --weights SPEC       the judge's weights, TAG=WEIGHT,... (default 1 each, the response included)
  --split NAME         only the records of this split (train, val, test)
  --judge SPEC         judge with a model: llm:MODEL@BASE_URL[?options] (any OpenAI-compatible endpoint;
                       rpm=N paces requests); default: the offline judge (exact on the generator's
                       states, ROUGE-L on free text)
  --embedder SPEC      the offline judge's free text (the response, states outside the vocabulary) by
                       the cosine of sentence embeddings instead of ROUGE-L: onnx:DIR (a sentence-
                       embedding model folder, as FANToM's) or lexical (hashed words, no model); not
                       with --judge

FANToM only:
  --context MODE       short (the official default) or full: the conversation given with each question
  --embedder SPEC      lexical (default; offline, not the official numbers) or onnx:DIR (a sentence-
                       embedding model folder with tokenizer.json and model.onnx) to judge free-form beliefs
  --aggregation BY     set (default), part or conversation: what ALL* and ALL group by

Hi-ToM only:
  --vp-labels FROM     cotp (default) or own: score VP entries against the label of the CoTP entry
                       asking the same question (upstream's evaluator reads every label from the
                       CoT files) or against their own label

rec (the recommendation world) has options of its own: socialworld bench rec --help

Social only:
  --depth N            only the tasks at depth N (0: reactions to the post, 1: to a depth-0 comment or repost)
  --context MODE       full (default) or short: the prompt (short: the profile line, the feed and one
                       line of the facts that decide most reactions; see docs/worlds/social.md)
  --embedder onnx:DIR  also BERTScore of the content, with this encoder (a folder with tokenizer.json and
                       model.onnx, exported truncated to the layer BERTScore uses; see docs/worlds/social.md)
`;

/**
 * The help text, its "Social only" section (the last) ending with the flags the social world's
 * benchmark declares (the prompt's facts): \`bench --help\` loads the social world's folder for them.
 */
export async function benchHelp(): Promise<string> {
  return `${BENCH_HELP}${await flagsHelp("social")}`;
}

const Args = z.object({
  _: z.tuple([z.enum(WORLD_NAMES as [string, ...string[]], { error: `expected one of ${WORLD_NAMES.join(", ")}` })], {
    error: `expected the benchmark name: ${WORLD_NAMES.join(", ")}`,
  }),
  data: z.string().min(1).optional(),
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
  hierarchy: z.string().min(1).optional(),
  weights: z.string().min(1).optional(),
  split: z.string().min(1).optional(),
  judge: z.string().min(1).optional(),
  "vp-labels": z.enum(["cotp", "own"]).optional(),
  threads: intArg(1, 1024).optional(),
  ...deviceArgs,
});

export async function benchCommand(argv: readonly string[]): Promise<number> {
  // The recommendation world ranks items with recallers, not questions with an agent: its own options and table.
  if (argv[0] === "rec") return (await import("./bench-rec.js")).benchRecCommand(argv.slice(1));
  // The world's own flags (the social prompt's facts) are declared by the world: read from the one named.
  const { args, flags: factFlags } = await parseWithFlags(argv, Args);
  await useDevice(args);
  // Loaded only when asked, as simulate does: imported at the top, it made every command start Node's ES module loader (test/cli/bundle.test.ts).
  if (args.threads !== undefined) (await import("../../models/native.js")).loadNative().setThreads(args.threads);
  const name = args._[0];
  const data = args.data ?? defaultBenchFile(name);
  if (data === undefined) throw new UsageError(`--data: is required (${name} has no official download)`);
  if (args.data === undefined) {
    if (!existsSync(data)) throw new UsageError(`--data: not given, and ${data} is not there: run 'socialworld data get ${name}' first, or give --data FILE`);
    process.stderr.write(`data: ${data}\n`);
  }
  if (args.json) prepareOutput("--json", args.json);
  if (args.md) prepareOutput("--md", args.md);
  checkDistinctFiles([
    ["--data", data],
    ["--json", args.json],
    ["--md", args.md],
  ]);
  const given = { context: args.context, flags: factFlags, embedder: args.embedder, aggregation: args.aggregation, depth: args.depth, vpLabels: args["vp-labels"], hierarchy: args.hierarchy, weights: args.weights, split: args.split };
  let benchmark;
  try {
    benchmark = await loadBenchmark(name, { ...given, judgeModel: args.judge !== undefined ? await judgeModelArg(args.judge) : undefined });
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
  if (benchmark.modes && !benchmark.modes.includes(mode)) throw new UsageError(`--mode: ${name} is asked in ${benchmark.modes.join(" or ")} mode only`);
  const refusal = await agent.refusal?.(name, mode);
  if (refusal) throw new UsageError(`--agent: ${refusal}`);
  // Bad input fails here, before any run or report exists.
  let items;
  try {
    items = await benchmark.load(data);
  } catch (err) {
    // A file of another benchmark fails on its first line or field: say which benchmark it is.
    const other = err instanceof DataError ? looksLike(data) : undefined;
    if (!(err instanceof DataError) || !other || other.name === name) throw err;
    throw new DataError(err.file, { ...(err.line !== undefined ? { line: err.line } : {}), ...(err.field !== undefined ? { field: err.field } : {}) }, `${err.reason}; it looks like a ${other.title.replace(/ \(.*$/, "")} file: run 'socialworld bench ${other.name} --data ${data}'`);
  }
  for (const warning of benchmark.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
  if (args.limit !== undefined) items = items.slice(0, args.limit);

  const options = Object.fromEntries(Object.entries({ ...recordedOptions(given), judge: args.judge }).filter(([, v]) => v !== undefined));
  const store = await RunStore.open(args.store);
  let session;
  try {
    session = await BenchmarkSession.start({
      store,
      benchmark,
      items,
      agentId: agent.id,
      mode,
      data: resolve(data),
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      params: { options },
      ...(args.resume ? { resume: args.resume } : {}),
    });
  } catch (err) {
    if (err instanceof ResumeRefused) throw new UsageError(`--resume: ${err.message}`);
    throw err;
  }
  const { log, run } = session;
  process.stderr.write(`run ${run.id} in the store ${store.root}\n`);
  if (log.tornBytes > 0) {
    process.stderr.write(`note: the log ended in a line cut off mid-write; its ${log.tornBytes} bytes are kept in ${log.path}.torn, and that question is asked again\n`);
  }
  const progress = new Progress(`${name} ${agent.id}`, items.length, args.quiet ? null : process.stderr);
  const controller = new AbortController();
  const signals = onStopSignal(() => controller.abort());
  // The running figure: the share answered right, or a graded benchmark's mean score.
  const value = (r: ItemResult) => (benchmark.graded ? (r.score ?? 0) : r.correct ? 1 : 0);
  let sum = [...session.done.values()].reduce((a, r) => a + value(r), 0);
  const label = benchmark.graded ? benchmark.graded.score.slice(0, 5) : "acc";
  let results: ItemResult[];
  try {
    results = await session.ask({
      agent,
      concurrency: args.concurrency,
      ...(args.timeout !== undefined ? { turnTimeoutMs: args.timeout } : {}),
      signal: controller.signal,
      onResult: (r, finished) => {
        sum += value(r);
        progress.update(finished, () => (benchmark.graded ? `${label} ${(sum / finished).toFixed(3)}` : `${label} ${((100 * sum) / finished).toFixed(1)}%`));
      },
    });
  } catch (err) {
    progress.finish();
    if (err instanceof RunAborted) {
      await session.close("interrupted");
      process.stderr.write(`interrupted: ${err.finished}/${err.total} questions logged; continue with --resume ${run.id}\n`);
      return signals.exitCode;
    }
    if (err instanceof JudgeFailed) {
      await session.close("interrupted");
      process.stderr.write(`${err.message}\n${err.finished}/${err.total} questions logged; continue with --resume ${run.id}\n`);
      return 1;
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


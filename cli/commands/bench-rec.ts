/**
 * `socialworld bench rec (--data DIR | --generate N) [--agent A] [options]`: the recommendation
 * world's benchmark (benchmarks/recommendation.ts), a table of NDCG@k and HR@k on the test items.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { parseRecAgent, RecAgentError, REC_AGENTS, runRecBench, type RecBenchRow } from "../../benchmarks/recommendation.js";
import { PolicyNotForRec } from "../../benchmarks/rec-policy.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { SASREC_DEFAULTS, SasrecError } from "../../trainers/rec/sasrec.js";
import { BPR_DEFAULTS, generateRec, leaveLastOut, OracleMismatch, PREFERENCES_FILE, readMovieLens, readPreferences, splitStats, type Preferences, type RecSplit } from "../../worlds/rec/index.js";
import { intArg, numArg, parseCommand, UsageError } from "../args.js";
import { checkDistinctFiles, prepareOutput } from "../output-path.js";
import { Progress } from "../progress.js";

export const BENCH_REC_HELP = `socialworld bench rec (--data DIR | --generate N) [--agent A] [options]

Fits recallers on a leave-last-out split (RecBole's: each user's last item is the test item, the one
before it the valid item) and prints NDCG@k and HR@k of each on the test items, ranked over every
item with the user's history masked, with the time each took to fit and to evaluate.

Data (one of):
  --data DIR           a MovieLens-1M folder (ratings.dat, movies.dat); a preferences.json beside them
                       (what \`generate rec\` writes) lets the oracle run
  --generate N         N generated users with latent preferences (seeded by --seed)
  --items N            items of the generated catalogue (default 400)
  --seed S             the generator's, BPR's and SASRec's seed (default 0)

Options:
  --agent A            ${REC_AGENTS} (default all):
                       pop, itemknn, bpr: one recaller; sasrec: a small SASRec-style transformer on
                       the native engine, trained on the training sequences by next-item
                       cross-entropy; mix:pop=0.2,sasrec=0.8: a fixed mixture of their
                       standardised scores; best: the best fixed mixture, chosen on the valid items;
                       oracle: ranks by the generator's true preferences (generated data only);
                       policy:DIR[?options]: a trained policy (\`train grpo --world rec\`) weighs
                       the four recallers for each user, shown what it was trained on; options as
                       every policy agent takes them (temperature, seed, constrain, ...), and
                       soft_thinking=K&tau=X to think in K soft tokens first, as SofT-GRPO trains
  --k K                the cut-off of NDCG@K and HR@K (default 10)
  --epochs N           BPR's epochs (default ${BPR_DEFAULTS.epochs})
  --dim D              BPR's embedding size (default ${BPR_DEFAULTS.dim})
  --lr X               BPR's SGD step (default ${BPR_DEFAULTS.lr})
  --sasrec-epochs N    SASRec's epochs (default ${SASREC_DEFAULTS.epochs})
  --sasrec-dim D       SASRec's hidden size (default ${SASREC_DEFAULTS.dim}; ${SASREC_DEFAULTS.layers} layers, ${SASREC_DEFAULTS.heads} heads, the last ${SASREC_DEFAULTS.maxLen} items)
  --neighbours N       item-kNN's neighbours per item (default 100)
  --sample N           validation users the mixture search uses at most (default 2000)
  --concurrency N      users a policy is asked at once, one batch of the engine (default 32)
  --json OUT.json      write the table as JSON
  --md OUT.md          write the table as Markdown
  --quiet              no progress bars
`;

const Args = z
  .object({
    _: z.tuple([]),
    data: z.string().min(1).optional(),
    generate: intArg(1, 1_000_000).optional(),
    items: intArg(20, 100_000).optional(),
    seed: intArg(0, 2 ** 32 - 1).default(0),
    agent: z.string().min(1).default("all"),
    k: intArg(1, 1000).default(10),
    epochs: intArg(0, 100_000).optional(),
    dim: intArg(1, 1024).optional(),
    lr: numArg().positive().optional(),
    "sasrec-epochs": intArg(1, 100_000).optional(),
    "sasrec-dim": intArg(2, 4096).optional(),
    neighbours: intArg(1, 100_000).optional(),
    sample: intArg(1).optional(),
    concurrency: intArg(1, 4096).optional(),
    json: z.string().min(1).optional(),
    md: z.string().min(1).optional(),
    quiet: z.boolean().default(false),
  })
  .refine((a) => (a.data === undefined) !== (a.generate === undefined), { message: "give either --data DIR or --generate N", path: ["data"] })
  .refine((a) => a.generate !== undefined || a.items === undefined, { message: "--items applies to --generate", path: ["items"] });

export async function benchRecCommand(argv: readonly string[]): Promise<number> {
  const args = parseCommand(argv, Args);
  let agent;
  try {
    agent = parseRecAgent(args.agent);
  } catch (err) {
    if (err instanceof RecAgentError) throw new UsageError(`--agent: ${err.message}`);
    throw err;
  }
  if (args.json) prepareOutput("--json", args.json);
  if (args.md) prepareOutput("--md", args.md);
  checkDistinctFiles([
    ["--json", args.json],
    ["--md", args.md],
  ]);
  const stream = args.quiet ? null : process.stderr;
  let split: RecSplit;
  let preferences: Preferences | undefined;
  if (args.generate !== undefined) {
    const progress = new Progress("generate users", args.generate, stream);
    const gen = generateRec({ users: args.generate, ...(args.items !== undefined ? { items: args.items } : {}) }, args.seed, (done) => progress.update(done));
    progress.finish();
    split = leaveLastOut(gen.dataset);
    preferences = gen.preferences;
  } else {
    split = leaveLastOut(readMovieLens(args.data!));
    const truth = join(args.data!, PREFERENCES_FILE);
    if (existsSync(truth)) preferences = readPreferences(truth);
  }
  const bpr = { ...(args.epochs !== undefined ? { epochs: args.epochs } : {}), ...(args.dim !== undefined ? { dim: args.dim } : {}), ...(args.lr !== undefined ? { lr: args.lr } : {}), seed: args.seed };
  const sasrec = { ...(args["sasrec-epochs"] !== undefined ? { epochs: args["sasrec-epochs"] } : {}), ...(args["sasrec-dim"] !== undefined ? { dim: args["sasrec-dim"] } : {}), seed: args.seed };
  let rows: RecBenchRow[];
  let bar: Progress | undefined;
  try {
    rows = await runRecBench(
      split,
      agent,
      {
        k: args.k,
        bpr,
        sasrec,
        ...(args.neighbours !== undefined ? { knn: args.neighbours } : {}),
        ...(args.sample !== undefined ? { mixtureSample: args.sample } : {}),
        ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
        ...(preferences ? { preferences } : {}),
      },
      (stage, total) => {
        bar?.finish();
        const mine = (bar = new Progress(stage, total, stream));
        return (done) => mine.update(done);
      },
    );
  } catch (err) {
    if (err instanceof RecAgentError) throw new UsageError(`--agent: ${err.message}`);
    if (err instanceof SasrecError) throw new UsageError(err.message);
    if (err instanceof PolicyNotForRec) throw new UsageError(`--agent: ${err.message}`);
    if (err instanceof OracleMismatch) throw new UsageError(`--agent: ${err.message} (${PREFERENCES_FILE} beside the data was written for other data)`);
    throw err;
  } finally {
    bar?.finish();
  }
  const stats = splitStats(split);
  const source = args.generate !== undefined ? `generated (seed ${args.seed})` : args.data!;
  const md = renderRecTable(source, stats, args.k, rows);
  if (args.json) writeFileAtomic(args.json, JSON.stringify({ data: source, ...stats, k: args.k, rows }, null, 2) + "\n");
  if (args.md) writeFileAtomic(args.md, md);
  process.stdout.write(md);
  return 0;
}

export function renderRecTable(source: string, stats: ReturnType<typeof splitStats>, k: number, rows: readonly RecBenchRow[]): string {
  const lines = [
    `# rec: ${source}`,
    "",
    `${stats.users} users, ${stats.items} items, ${stats.interactions} interactions; ${stats.test} test users (leave-last-out, full ranking)`,
    "",
    `| agent | NDCG@${k} | s.e. | HR@${k} | fit s | eval s | weights |`,
    "|---|---:|---:|---:|---:|---:|---|",
    ...rows.map((r) => `| ${r.agent}${r.failures ? ` (${r.failures} replies not weights, scored 0)` : ""} | ${r.ndcg.toFixed(4)} | ${r.ndcgError.toFixed(4)} | ${r.hr.toFixed(4)} | ${r.fitSeconds.toFixed(2)} | ${r.evalSeconds.toFixed(2)} | ${r.weights ? Object.entries(r.weights).map(([n, w]) => `${n} ${+w.toFixed(3)}`).join(", ") : ""} |`),
    "",
  ];
  return lines.join("\n");
}

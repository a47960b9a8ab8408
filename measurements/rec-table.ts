/**
 * The recommendation table: NDCG@10 and HR@10 of each recaller alone (pop, itemknn, bpr, sasrec), the best fixed mixture
 * (weights chosen on the valid items) and the oracle (the generator's latent truth), on generated
 * users of several shapes, and on MovieLens-1M where its folder is found; with the wall time of
 * each row (fit + evaluation) and each NDCG as a share of the oracle's, the peer of the same run.
 *
 *   node dist/measurements/rec-table.js [--shapes small,medium,large] [--movielens DIR] [--md OUT.md]
 *
 * Not a test: it runs as `bench rec` does (benchmarks/recommendation.ts).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../store/write-atomic.js";
import { parseRecAgent, runRecBench, type RecBenchRow } from "../benchmarks/recommendation.js";
import { generateRec, leaveLastOut, readMovieLens, splitStats, type Preferences, type RecSplit } from "../worlds/rec/index.js";
import { intArg } from "../cli/args.js";
import { scriptArgs } from "./script-args.js";

const SHAPES = {
  small: { users: 500, items: 200, meanLength: 20 },
  medium: { users: 2000, items: 1000, meanLength: 30 },
  large: { users: 6040, items: 3706, meanLength: 40 },
} as const;
type Shape = keyof typeof SHAPES;

const USAGE = `node dist/measurements/rec-table.js [options]   (or: npm run table:rec -- [options])

Prints NDCG@10, HR@10 and wall time of pop, itemknn, bpr, sasrec, the best fixed mixture and the oracle on
generated users of each shape, and on MovieLens-1M when its folder is there (no oracle: no truth).

Options:
  --shapes LIST     generated shapes, from ${Object.entries(SHAPES)
    .map(([n, s]) => `${n} (${s.users} users, ${s.items} items, ${s.meanLength} per user)`)
    .join(", ")}; default small,medium
  --seed S          the generator's and BPR's seed (default 0)
  --epochs N        BPR's epochs (default 30)
  --movielens DIR   MovieLens-1M's folder (default: ../shared/data/ml-1m when it exists)
  --md FILE         also write the table there
  --help            this text`;

const values = scriptArgs({
  name: "rec-table",
  usage: USAGE,
  options: { shapes: { type: "string" }, seed: { type: "string" }, epochs: { type: "string" }, movielens: { type: "string" }, md: { type: "string" } },
  schema: z.object({
    shapes: z
      .string()
      .regex(new RegExp(`^(${Object.keys(SHAPES).join("|")})(,(${Object.keys(SHAPES).join("|")}))*$`), `expected shapes from ${Object.keys(SHAPES).join(", ")}, separated by commas`)
      .default("small,medium"),
    seed: intArg(0, 2 ** 32 - 1).default(0),
    epochs: intArg(1, 10_000).default(30),
    movielens: z.string().min(1).optional(),
    md: z.string().min(1).optional(),
  }),
});

const lines = ["| data | users | items | interactions | agent | NDCG@10 | HR@10 | NDCG / oracle | fit s | eval s |", "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"];

function table(label: string, split: RecSplit, preferences: Preferences | undefined): void {
  const t0 = performance.now();
  const stats = splitStats(split);
  const rows: RecBenchRow[] = runRecBench(split, parseRecAgent("all"), { bpr: { epochs: values.epochs, seed: values.seed }, ...(preferences ? { preferences } : {}) }, (stage) => {
    process.stderr.write(`${label}: ${stage}\n`);
    return () => {};
  });
  const oracle = rows.find((r) => r.agent === "oracle")?.ndcg;
  for (const r of rows) {
    const share = oracle ? (r.ndcg / oracle).toFixed(2) : "n/a";
    const agent = r.weights ? `${r.agent} (${Object.entries(r.weights).map(([n, w]) => `${n} ${+w.toFixed(2)}`).join(", ")})` : r.agent;
    lines.push(`| ${label} | ${stats.users} | ${stats.items} | ${stats.interactions} | ${agent} | ${r.ndcg.toFixed(4)} | ${r.hr.toFixed(4)} | ${share} | ${r.fitSeconds.toFixed(2)} | ${r.evalSeconds.toFixed(2)} |`);
  }
  process.stderr.write(`${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}

const started = performance.now();
for (const name of values.shapes.split(",") as Shape[]) {
  const t0 = performance.now();
  const gen = generateRec(SHAPES[name], values.seed);
  process.stderr.write(`generated ${name} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  table(`generated ${name}`, leaveLastOut(gen.dataset), gen.preferences);
}

const ml = values.movielens ?? join("..", "shared", "data", "ml-1m");
const notes: string[] = [];
if (existsSync(join(ml, "ratings.dat"))) table("MovieLens-1M", leaveLastOut(readMovieLens(ml)), undefined);
else notes.push(`MovieLens-1M: no ratings.dat under ${ml}, so no MovieLens row (give --movielens DIR)`);

const out = [...lines, "", ...notes.map((n) => `${n}  `), `wall time ${((performance.now() - started) / 1000).toFixed(1)} s (seed ${values.seed}, BPR ${values.epochs} epochs)`, ""].join("\n");
process.stdout.write(out);
if (values.md) writeFileAtomic(values.md, out);

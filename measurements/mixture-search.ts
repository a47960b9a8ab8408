/**
 * The best-mixture search's speed (`bench rec --agent best`, table:rec's best mixture): the 286
 * mixtures of pop, item-kNN, BPR and SASRec on the 1/10 simplex grid, searched on the valid users
 * by merging and ranking the whole catalogue per mixture (gridNdcgsByRanking, the reference) and
 * by counting the items above the held-out one (gridNdcgs, the default), in the same run on the
 * same fitted recallers: seconds of each (and of the recallers scoring the users once, which both
 * include), their ratio, and whether both chose the same mixture with the same NDCG@10.
 *
 *   node dist/measurements/mixture-search.js [--shapes small,medium] [--sample N] [--seed S]
 */
import { z } from "zod";
import { bestMixture, casesOf, fitRecaller, generateRec, gridBuffers, gridNdcgs, gridNdcgsByRanking, leaveLastOut, RECALLERS, standardisedScores, trainSetOf, type GridScorer } from "../worlds/rec/index.js";
import { fitSasrec } from "../trainers/rec/sasrec.js";
import { intArg } from "../cli/args.js";
import { REC_SHAPES, recShapesPattern, type RecShape } from "./rec-shapes.js";
import { scriptArgs } from "./script-args.js";

const values = scriptArgs({
  name: "mixture-search",
  usage: `node dist/measurements/mixture-search.js [options]   (or: npm run speed:mixture -- [options])

Times the best-mixture search over pop, itemknn, bpr and sasrec (286 mixtures) by ranking the
catalogue per mixture and by counting the items above the held-out one, on the same recallers.

Options:
  --shapes LIST   generated shapes, from ${Object.keys(REC_SHAPES).join(", ")} (default small)
  --sample N      valid users searched at most, as bench rec's --sample (default 2000)
  --seed S        the generator's, BPR's and SASRec's seed (default 0)
  --help          this text`,
  schema: z.object({
    shapes: z.string().regex(recShapesPattern, `expected shapes from ${Object.keys(REC_SHAPES).join(", ")}, separated by commas`).default("small"),
    sample: intArg(1).default(2000),
    seed: intArg(0, 2 ** 32 - 1).default(0),
  }),
});

const lines = [
  "| shape | items | valid users searched | mixtures | scoring them once s | by ranking s | by counting s | ratio | same best mixture | its valid NDCG@10 |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
];
for (const shape of values.shapes.split(",") as RecShape[]) {
  const split = leaveLastOut(generateRec(REC_SHAPES[shape], values.seed).dataset);
  const train = trainSetOf(split);
  process.stderr.write(`${shape}: fitting ${[...RECALLERS, "sasrec"].join(", ")}\n`);
  const recallers = [...RECALLERS.map((name) => fitRecaller(name, train, { bpr: { seed: values.seed } })), fitSasrec(train, { seed: values.seed })];
  const valid = casesOf(split, "valid");
  const items = split.items.length;
  const timed = (scorer: GridScorer) => {
    const t0 = performance.now();
    const best = bestMixture(recallers, valid, items, 10, { sample: values.sample, scorer });
    return { best, seconds: (performance.now() - t0) / 1000 };
  };
  // The floor of both: each recaller scores each searched user once (standardised).
  const t0 = performance.now();
  const z = gridBuffers(recallers.length, items).z;
  for (const c of valid.slice(0, values.sample)) standardisedScores(recallers, c, z);
  const scoring = (performance.now() - t0) / 1000;
  process.stderr.write(`${shape}: searching by ranking\n`);
  const ranking = timed(gridNdcgsByRanking);
  process.stderr.write(`${shape}: searching by counting\n`);
  const counting = timed(gridNdcgs);
  const same = JSON.stringify(ranking.best) === JSON.stringify(counting.best);
  const weights = Object.entries(counting.best.weights).map(([n, w]) => `${n} ${w}`).join(", ");
  lines.push(
    `| ${shape} | ${items} | ${counting.best.searched} | ${counting.best.mixtures} | ${scoring.toFixed(2)} | ${ranking.seconds.toFixed(2)} | ${counting.seconds.toFixed(2)} | ${(ranking.seconds / counting.seconds).toFixed(1)}x | ${same ? `yes (${weights})` : `NO: ranking ${JSON.stringify(ranking.best)}, counting ${JSON.stringify(counting.best)}`} | ${counting.best.validNdcg.toFixed(4)} |`,
  );
  if (!same) process.exitCode = 1;
}
process.stdout.write(lines.join("\n") + "\n");

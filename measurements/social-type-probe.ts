/**
 * Does a social policy read its prompt for the interaction type? For each question of a test
 * file, the policy's distribution over the four types at the answer's type token: the log-prob of
 * the reply `{"action":"TYPE","target":ITEM}` through its type's tokens (teacher-forced, in the
 * tokenization SFT trains on), normalized over the four types. Prints, per checkpoint:
 *
 *   - the mean distribution, its standard deviation across questions (near 0: the policy answers
 *     every question alike, whatever the prompt says), and the mean distribution by true label;
 *   - the type's loss: -log of the true type's share of the four, against the prior's (the
 *     training split's type mix, or the test's own, predicted for every question) and ln 4; and
 *     -log p of the true type's tokens themselves (what SFT's loss sees at that token);
 *   - type accuracy (the most likely type) and macro-F1 per depth, against the majority type's.
 *
 * With --context short, a first row: the same figures for a table of the training split's type
 * mix per facts line (what reading the facts line perfectly is worth, and no more).
 *
 *   node dist/measurements/social-type-probe.js --model DIR[,DIR...] --data TEST.jsonl
 *       [--train TRAIN.jsonl] [--context full|short] [--FACT ...] [--questions N] [--seed S] [--threads N]
 *                                                    (or: npm run probe:social -- ...)
 *
 * A measurement, not a test: it reads the policy the way `bench social` asks it (the same prompt),
 * but at the decision alone, so a policy whose greedy answers are all one type still shows whether
 * its decision moves with the prompt.
 */
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { loadCheckpoint } from "../models/checkpoint.js";
import { loadNative } from "../models/native.js";
import { encodeExamples } from "../trainers/sft/batches.js";
import { DataError } from "../worlds/core/errors.js";
import { Rng } from "../worlds/core/rng.js";
import { readTextInput } from "../worlds/core/text-input.js";
import { loadBenchmark } from "../worlds/registry.js";
import { factsLine, factsTitle, macroF1, REACTION_TYPES, TOPICS, type ReactionType, type SocialBenchItem } from "../worlds/social/index.js";
import { scriptArgs } from "./script-args.js";
import { factsFields, factsNeedShort, factsOf, factsUsage } from "./social-facts-args.js";
import { percentCell as pct } from "./cli-process.js";

const USAGE = `node dist/measurements/social-type-probe.js --model DIR[,DIR...] --data TEST.jsonl [options]
                                                   (or: npm run probe:social -- [options])

Probes social policies at the answer's type token: the distribution over comment, repost, like
and ignore for each test question, its spread across questions, the type's loss against the
prior's, and type accuracy against the majority type, per depth. With --context short, the same
for a table of the --train split's type mix per facts line (reading that line perfectly).

Options:
  --model DIRS       checkpoints (a trained model folder or a checkpoint-STEP folder), comma-separated
  --data FILE        the test split (social trees, as \`generate social\` writes them)
  --train FILE       the training split: its type mix is the prior and its most frequent type
                     the majority answer (default: the test split's own)
  --context MODE     the benchmark's prompt: full (default) or short (bench social --context)
${factsUsage(21)}
  --prompts FILE     a JSONL with a "prompt" per question of --data, in order (what a policy
                     trained on rewritten prompts was given), asked instead of the benchmark's
  --questions N      probe N questions drawn with the seed (default 0: every question)
  --seed S           the draw's seed (default 1)
  --threads N        CPU threads (default: all)
  --help             this text`;

const values = scriptArgs({
  name: "social-type-probe",
  usage: USAGE,
  schema: z.object({
    model: z.string({ error: "is required" }).min(1),
    data: z.string({ error: "is required" }).min(1),
    train: z.string().min(1).optional(),
    context: z.enum(["short", "full"]).default("full"),
    ...factsFields,
    prompts: z.string().min(1).optional(),
    questions: intArg(0).default(0),
    seed: intArg(0).default(1),
    threads: intArg(1, 1024).optional(),
  }).superRefine(factsNeedShort),
});
if (values.threads) loadNative().setThreads(values.threads);

type Type = ReactionType;
const TYPES = REACTION_TYPES;
const facts = factsOf(values);
const bench = await loadBenchmark("social", { context: values.context, flags: facts });
const load = async (file: string) => (await bench.load(file)) as SocialBenchItem[];
let items = await load(values.data);
const prompts = values.prompts ? readPrompts(values.prompts, items.length) : undefined;
if (values.questions > 0 && values.questions < items.length)
  items = Rng.seeded(`social-type-probe:${values.seed}`).shuffle([...items]).slice(0, values.questions).sort((a, b) => a.index - b.index);
/** The "prompt" of each line of FILE, one per question. */
function readPrompts(file: string, n: number): string[] {
  const lines = readTextInput(file).split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== n) throw new DataError(file, {}, `${lines.length} prompts for the ${n} questions of ${values.data}`);
  return lines.map((l, i) => {
    let json: unknown;
    try {
      json = JSON.parse(l);
    } catch {
      throw new DataError(file, { line: i + 1 }, "not valid JSON");
    }
    const r = z.object({ prompt: z.string() }).loose().safeParse(json);
    if (!r.success) throw new DataError(file, { line: i + 1 }, 'expected {"prompt": "..."}');
    return r.data.prompt;
  });
}
const reference = values.train ? await load(values.train) : items;

/** The type mix of `xs`, in TYPES' order. */
function mix(xs: readonly SocialBenchItem[]): number[] {
  return TYPES.map((t) => xs.filter((x) => x.type === t).length / xs.length);
}
const prior = mix(reference);
const majority = TYPES[prior.indexOf(Math.max(...prior))]!;

interface Probe {
  /** P(type), normalized over the four, in TYPES' order. */
  readonly dist: number[];
  /** -log p of the true type's tokens (unnormalized: SFT's loss there). */
  readonly tokenLoss: number;
}

/** log p of the reply through its type's tokens, for each type. */
function probe(ck: ReturnType<typeof loadCheckpoint>, item: SocialBenchItem): Probe {
  const prompt = prompts?.[item.index] ?? bench.task(item, "vanilla").prompt;
  const logps = TYPES.map((type) => {
    const reply = JSON.stringify({ action: type, target: item.task.parent });
    const messages = [{ role: "user" as const, content: prompt }, { role: "assistant" as const, content: reply }];
    // Weight 2 marks the type's tokens; SFT's own encoding, so the tokens are the ones it trains.
    const [ex] = encodeExamples(ck.tokenizer, [{ messages, line: 1 }], Number.MAX_SAFE_INTEGER, { fieldWeights: { action: 2 } }).examples;
    const last = ex!.weights.lastIndexOf(2);
    const first = ex!.weights.indexOf(1); // the reply's first trained token
    const logits = ck.model.logits(Array.from(ex!.tokens.subarray(0, last + 1)));
    const vocab = ck.model.vocabSize;
    let sum = 0;
    let typeOnly = 0;
    for (let i = first; i <= last; i++) {
      const row = logits.subarray(i * vocab, (i + 1) * vocab);
      let max = -Infinity;
      for (const v of row) max = Math.max(max, v);
      let z = 0;
      for (const v of row) z += Math.exp(v - max);
      const lp = row[ex!.targets[i]!]! - max - Math.log(z);
      sum += lp;
      if (ex!.weights[i] === 2) typeOnly += lp;
    }
    return { sum, typeOnly };
  });
  const top = Math.max(...logps.map((l) => l.sum));
  const e = logps.map((l) => Math.exp(l.sum - top));
  const z = e.reduce((a, b) => a + b, 0);
  return { dist: e.map((x) => x / z), tokenLoss: -logps[TYPES.indexOf(item.type as Type)]!.typeOnly };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: readonly number[]) => {
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
};
const f3 = (x: number) => x.toFixed(3);
const labelIndex = (x: SocialBenchItem) => TYPES.indexOf(x.type as Type);
const priorLoss = mean(items.map((x) => -Math.log(prior[labelIndex(x)]!)));
const depthOf = (x: SocialBenchItem) => String(x.task.depth);
const depths = [...new Set(items.map(depthOf))].sort();

const out: string[] = [
  `Social type probe: ${items.length} questions of ${values.data}, ${values.prompts ? `prompts from ${values.prompts}` : `${values.context} prompts${factsTitle(facts)}`}; prior and majority (${majority}) from ${values.train ?? "the same file"}: ` +
    TYPES.map((t, i) => `${t} ${f3(prior[i]!)}`).join(", ") + `; ln 4 = ${f3(Math.log(4))}`,
  "",
];
const summary = [
  `| model | type loss (nats) | prior's | true type's tokens (nats) | max sd across questions | accuracy | majority | macro-F1 | majority's macro-F1 |${depths.map((d) => ` accuracy depth ${d} | majority depth ${d} |`).join("")}`,
  `|:--|--:|--:|--:|--:|--:|--:|--:|--:|${depths.map(() => "--:|--:|").join("")}`,
];
const details: string[] = [];
const truth = items.map((x) => x.type);
/** A summary row from each question's distribution over the types: loss, spread, accuracy and macro-F1, per depth. */
function summaryRow(name: string, dists: readonly number[][], tokenLoss: string): string[] {
  const predicted = dists.map((d) => TYPES[d.indexOf(Math.max(...d))]!);
  const loss = mean(dists.map((d, i) => -Math.log(d[labelIndex(items[i]!)]!)));
  const sds = TYPES.map((_, k) => sd(dists.map((d) => d[k]!)));
  const acc = (keep: (i: number) => boolean, pred: (i: number) => string) => {
    const idx = items.map((_, i) => i).filter(keep);
    return idx.filter((i) => pred(i) === truth[i]).length / idx.length;
  };
  const all = () => true;
  const byDepth = depths.map((d) => {
    const at = (i: number) => depthOf(items[i]!) === d;
    return ` ${pct(acc(at, (i) => predicted[i]!))} | ${pct(acc(at, () => majority))} |`;
  });
  summary.push(
    `| ${name} | ${f3(loss)} | ${f3(priorLoss)} | ${tokenLoss} | ${f3(Math.max(...sds))} | ${pct(acc(all, (i) => predicted[i]!))} | ${pct(acc(all, () => majority))} | ` +
      `${pct(macroF1(truth, predicted))} | ${pct(macroF1(truth, truth.map(() => majority)))} |${byDepth.join("")}`,
  );
  return predicted;
}

/**
 * What reading the short prompt's facts line perfectly is worth: each question's type mix among
 * the reference split's questions at its depth with the same facts line (item ids and the topic's
 * name masked), smoothed toward the prior by 4 questions' weight. Names, the feed's texts and the
 * profile line are left out: a policy whose type loss is at or below this row's reads more than
 * the facts line.
 */
function factsTable(): number[][] {
  const key = (x: SocialBenchItem) => {
    const topic = TOPICS.find((t) => t.key === x.task.tree.post.topic)?.name;
    const line = (factsLine(x.task, facts) ?? "").replace(/\[[^\]]*\]/g, "[item]");
    return `${x.task.depth}|${topic ? line.split(topic).join("TOPIC") : line}`;
  };
  const counts = new Map<string, number[]>();
  for (const x of reference) {
    const k = key(x);
    const c = counts.get(k) ?? TYPES.map(() => 0);
    c[labelIndex(x)]!++;
    counts.set(k, c);
  }
  return items.map((x) => {
    const c = counts.get(key(x)) ?? TYPES.map(() => 0);
    const n = c.reduce((a, b) => a + b, 0);
    return TYPES.map((_, k) => (c[k]! + 4 * prior[k]!) / (n + 4));
  });
}
if (values.context === "short" && !prompts) summaryRow(`facts-line table (from ${values.train ?? "the same file"})`, factsTable(), "–");

for (const dir of values.model.split(",").map((d) => d.trim()).filter(Boolean)) {
  const t0 = performance.now();
  const ck = loadCheckpoint(dir);
  const probes = items.map((x) => probe(ck, x));
  const predicted = summaryRow(dir, probes.map((p) => p.dist), f3(mean(probes.map((p) => p.tokenLoss))));
  const sds = TYPES.map((_, k) => sd(probes.map((p) => p.dist[k]!)));
  details.push(`${dir} (${((performance.now() - t0) / 1000).toFixed(1)} s): P(type) at the type token`, "", `| questions | n | ${TYPES.join(" | ")} | predicted ${TYPES.join(" / ")} |`, `|:--|--:|${TYPES.map(() => "--:|").join("")}--:|`);
  const row = (name: string, idx: number[]) => {
    if (idx.length === 0) return;
    const counts = TYPES.map((t) => idx.filter((i) => predicted[i] === t).length).join(" / ");
    details.push(`| ${name} | ${idx.length} | ${TYPES.map((_, k) => f3(mean(idx.map((i) => probes[i]!.dist[k]!)))).join(" | ")} | ${counts} |`);
  };
  const every = items.map((_, i) => i);
  row("all (mean)", every);
  details.push(`| all (sd across questions) | ${items.length} | ${sds.map(f3).join(" | ")} | |`);
  for (const t of TYPES) row(`label ${t}`, every.filter((i) => truth[i] === t));
  details.push("");
}
out.push(...summary, "", ...details);
process.stdout.write(out.join("\n") + "\n");

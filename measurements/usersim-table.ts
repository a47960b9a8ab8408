/**
 * The user-simulation table: per-dimension alignment, response similarity, format rate and the
 * mean alignment (bench usersim's `accuracy`) of agents on a generated test split, judged by the
 * offline judge (exact on the generator's states, ROUGE-L on the response).
 *
 *   node dist/measurements/usersim-table.js [--n N] [--seed S] [--split NAME] [--hierarchy FILE]
 *       [--policies LABEL=SPEC,...] [--md OUT.md]
 *
 * Rows: the world's baselines (random: a random latent written as a reply; heuristic: the states
 * read off the profile and the thread; simulation: the generator's latent states, the ceiling),
 * then each of --policies, run as `bench usersim --agent SPEC` runs it (the base, SFT and GRPO
 * checkpoints: policy:DIR). Not a test.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { loadAgent } from "../agents/registry.js";
import { runBenchmark } from "../benchmarks/runner.js";
import { Rng } from "../worlds/core/rng.js";
import { loadBenchmark } from "../worlds/registry.js";
import {
  DEFAULT_HIERARCHY,
  generateUsersim,
  heuristicReply,
  judgeReply,
  parseConversationsJsonl,
  randomReply,
  readHierarchyFile,
  referenceOf,
  simulationReply,
  stateOfRecord,
  summarizeJudgements,
  tags,
  type ConversationRecord,
  type Hierarchy,
  type Judgement,
  type Reply,
} from "../worlds/usersim/index.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/usersim-table.js [options]   (or: npm run table:usersim -- [options])

Scores agents on a generated usersim split with the offline judge and prints one row per agent:
each state's mean alignment, the response's ROUGE-L, the format rate and the mean alignment.

Options:
  --n N                 records to generate (default 1000; the split is about a tenth of them)
  --seed S              the generator's seed (default 0)
  --split NAME          train, val or test (default test)
  --hierarchy FILE      the hierarchy (HumanLM's layout; default: the six states, then the response)
  --policies LIST       more rows, LABEL=SPEC separated by commas (base=policy:DIR,sft=policy:DIR2):
                        run as \`bench usersim --agent SPEC\` runs them
  --md FILE             also write the table there
  --help                this text`;

const values = scriptArgs({
  name: "usersim-table",
  usage: USAGE,
  options: { n: { type: "string" }, seed: { type: "string" }, split: { type: "string" }, hierarchy: { type: "string" }, policies: { type: "string" }, md: { type: "string" } },
  schema: z.object({
    n: intArg(10, 1_000_000).default(1000),
    seed: intArg(0, 2 ** 32 - 1).default(0),
    split: z.string().min(1).default("test"),
    hierarchy: z.string().min(1).optional(),
    policies: z
      .string()
      .regex(/^[^=,]+=[^,]+(,[^=,]+=[^,]+)*$/, "expected LABEL=SPEC pairs separated by commas")
      .optional(),
    md: z.string().min(1).optional(),
  }),
});

const h: Hierarchy = values.hierarchy ? readHierarchyFile(values.hierarchy) : DEFAULT_HIERARCHY;
const gen = generateUsersim(values.n, values.seed);
const records = parseConversationsJsonl(gen.jsonl, `generated n=${values.n} seed=${values.seed}`).filter((r) => r.split === values.split);
if (records.length === 0) {
  process.stderr.write(`usersim-table: no record of split "${values.split}" in ${values.n} generated records\n`);
  process.exit(2);
}

interface Row {
  readonly agent: string;
  readonly judgements: readonly Judgement[];
}

/** A baseline's reply to every record, judged offline. */
function baseline(agent: string, reply: (r: ConversationRecord) => Reply): Row {
  return { agent, judgements: records.map((r) => judgeReply(reply(r), referenceOf(r), h)) };
}

const view = (r: ConversationRecord) => {
  const s = stateOfRecord(r, h);
  return { user: s.user, profile: s.profile, thread: s.thread };
};
const rng = Rng.seeded(`usersim-table:${values.seed}`);
const rows: Row[] = [
  baseline("random", (r) => randomReply(view(r), h, rng)),
  baseline("heuristic", (r) => heuristicReply(view(r), h)),
  baseline("simulation (ceiling)", (r) => simulationReply(r.latent!, h, r.states)),
];

if (values.policies) {
  const file = join(mkdtempSync(join(tmpdir(), "usersim-table-")), "generated.jsonl");
  writeFileSync(file, gen.jsonl);
  const benchmark = await loadBenchmark("usersim", { split: values.split, ...(values.hierarchy ? { hierarchy: values.hierarchy } : {}) });
  const items = await benchmark.load(file);
  for (const pair of values.policies.split(",")) {
    const [label, spec] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
    const t0 = performance.now();
    const agent = await loadAgent(spec);
    const results = await runBenchmark({ benchmark, items, agent, mode: "vanilla" });
    process.stderr.write(`${label}: ${items.length} records in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    rows.push({ agent: label, judgements: results.map((r) => benchmark.judge(items[r.index]!, r.answer).detail as unknown as Judgement) });
  }
}

const header = ["agent", ...tags(h), "format", "alignment"];
const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`];
for (const row of rows) {
  const s = summarizeJudgements(row.judgements, h);
  const cell = (x: number | null | undefined) => (x === null || x === undefined ? "-" : x.toFixed(3));
  const dims = tags(h).map((t) => cell(t === h.response.name ? s.response : s.states[t]?.mean));
  lines.push(`| ${[row.agent, ...dims, cell(s.formatRate), cell(s.accuracy)].join(" | ")} |`);
}
const table = `usersim, ${records.length} ${values.split} records (n=${values.n}, seed ${values.seed}), offline judge\n\n${lines.join("\n")}\n`;
process.stdout.write(table);
if (values.md) writeFileSync(values.md, table);

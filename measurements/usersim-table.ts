/**
 * The user-simulation table: per-dimension alignment, response similarity, format rate and the
 * mean alignment (bench usersim's `accuracy`) of agents on a generated test split, judged by the
 * offline judge (exact on the generator's states, ROUGE-L on the response).
 *
 *   node dist/measurements/usersim-table.js [--n N] [--seed S] [--split NAME] [--limit N]
 *       [--hierarchy FILE] [--policies LABEL=SPEC,...] [--hierarchies LABEL=FILE,...] [--md OUT.md]
 *
 * Rows: the world's baselines (random: a random latent written as a reply; heuristic: the states
 * read off the profile and the thread; simulation: the generator's latent states, the ceiling),
 * then each of --policies, run as `bench usersim --agent SPEC` runs it (the base, SFT and GRPO
 * checkpoints: policy:DIR). A policy asked with another hierarchy (--hierarchies: a response-only
 * policy) has cells only for its own tags, and its alignment is over those. Not a test.
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
  --limit N             only the split's first N records (every row)
  --hierarchy FILE      the hierarchy (HumanLM's layout; default: the six states, then the response)
  --policies LIST       more rows, LABEL=SPEC separated by commas (base=policy:DIR,sft=policy:DIR2):
                        run as \`bench usersim --agent SPEC\` runs them, 16 records at a time
  --hierarchies LIST    LABEL=FILE: ask that policy row with this hierarchy instead (a response-only
                        policy: worlds/usersim/hierarchies/response-only.json)
  --md FILE             also write the table there
  --help                this text`;

const values = scriptArgs({
  name: "usersim-table",
  usage: USAGE,
  schema: z.object({
    n: intArg(10, 1_000_000).default(1000),
    seed: intArg(0, 2 ** 32 - 1).default(0),
    split: z.string().min(1).default("test"),
    limit: intArg(1).optional(),
    hierarchy: z.string().min(1).optional(),
    policies: pairs("LABEL=SPEC").optional(),
    hierarchies: pairs("LABEL=FILE").optional(),
    md: z.string().min(1).optional(),
  }),
});

function pairs(what: string) {
  return z.string().regex(/^[^=,]+=[^,]+(,[^=,]+=[^,]+)*$/, `expected ${what} pairs separated by commas`);
}

/** LABEL=VALUE,... in order. */
function pairList(text: string | undefined): [string, string][] {
  return (text ?? "").split(",").filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]);
}

const h: Hierarchy = values.hierarchy ? readHierarchyFile(values.hierarchy) : DEFAULT_HIERARCHY;
const policies = pairList(values.policies);
const ownHierarchies = new Map(pairList(values.hierarchies));
for (const label of ownHierarchies.keys()) {
  if (!policies.some(([l]) => l === label)) {
    process.stderr.write(`usersim-table: --hierarchies names "${label}", which is not a label of --policies\n`);
    process.exit(2);
  }
}
const gen = generateUsersim(values.n, values.seed);
const records = parseConversationsJsonl(gen.jsonl, `generated n=${values.n} seed=${values.seed}`)
  .filter((r) => r.split === values.split)
  .slice(0, values.limit);
if (records.length === 0) {
  process.stderr.write(`usersim-table: no record of split "${values.split}" in ${values.n} generated records\n`);
  process.exit(2);
}

interface Row {
  readonly agent: string;
  readonly judgements: readonly Judgement[];
  /** The hierarchy the row was asked with (the table's, unless --hierarchies says otherwise). */
  readonly hierarchy: Hierarchy;
}

/** A baseline's reply to every record, judged offline. */
function baseline(agent: string, reply: (r: ConversationRecord) => Reply): Row {
  return { agent, judgements: records.map((r) => judgeReply(reply(r), referenceOf(r), h)), hierarchy: h };
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

if (policies.length) {
  const file = join(mkdtempSync(join(tmpdir(), "usersim-table-")), "generated.jsonl");
  writeFileSync(file, gen.jsonl);
  for (const [label, spec] of policies) {
    const own = ownHierarchies.get(label) ?? values.hierarchy;
    const benchmark = await loadBenchmark("usersim", { split: values.split, ...(own ? { hierarchy: own } : {}) });
    const items = (await benchmark.load(file)).slice(0, values.limit);
    const t0 = performance.now();
    const agent = await loadAgent(spec);
    const results = await runBenchmark({ benchmark, items, agent, mode: "vanilla", concurrency: 16 });
    process.stderr.write(`${label}: ${items.length} records in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    const judgements = results.map((r) => benchmark.judge(items[r.index]!, r.answer).detail as unknown as Judgement);
    rows.push({ agent: label, judgements, hierarchy: own ? readHierarchyFile(own) : h });
  }
}

const header = ["agent", ...tags(h), "format", "alignment"];
const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`];
for (const row of rows) {
  const rh = row.hierarchy;
  const s = summarizeJudgements(row.judgements, rh);
  const cell = (x: number | null | undefined) => (x === null || x === undefined ? "-" : x.toFixed(3));
  const dims = tags(h).map((t) => cell(t === rh.response.name ? s.response : s.states[t]?.mean));
  lines.push(`| ${[row.agent, ...dims, cell(s.formatRate), cell(s.accuracy)].join(" | ")} |`);
}
const table = `usersim, ${records.length} ${values.split} records (n=${values.n}, seed ${values.seed}), offline judge\n\n${lines.join("\n")}\n`;
process.stdout.write(table);
if (values.md) writeFileSync(values.md, table);

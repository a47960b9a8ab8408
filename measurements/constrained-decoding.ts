/**
 * What constrained decoding costs per generated token (a script, not a test):
 *   npm run measure:constrained      (or: npm run build && node dist/measurements/constrained-decoding.js [--quick])
 *
 * For the `tiny` and `10m` presets (untrained, seeded; the 10m tokenizer is learned from generated
 * ToMi stories and the project's own sources, so its vocabulary is full and holds JSON-like
 * pieces), and several grammars (a world's action, FANToM's free-text action, a /v1 schema,
 * json_object, a choice list, usersim's tagged reply with its bounded states), the native engine
 * decodes a batch of short prompts at temperature 1 with and without the grammar, alternating
 * runs; the table gives decode throughput (prefill excluded) and the grammar's overhead per token,
 * with the grammar's compile time and size.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { grammarVocabulary } from "../agents/policy/action-grammar.js";
import { createFromScratch, defaultCorpus } from "../models/from-scratch.js";
import { compileConstraint, type ConstraintSpec, type TokenAutomaton } from "../models/grammar/index.js";
import { loadNative, nativeConstraint } from "../models/native.js";
import { loadScenario } from "../worlds/registry.js";
import { DEFAULT_HIERARCHY, replyTextPattern } from "../worlds/usersim/index.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/constrained-decoding.js [--quick]   (or: npm run measure:constrained)

Prints the per-token overhead of constrained decoding: native-engine decode throughput with and
without a grammar, at the tiny and 10m presets, for several grammars.

Options:
  --quick   fewer and shorter runs (a smoke run, not for reporting)
  --help    this text`;
const { quick } = scriptArgs({ name: "constrained-decoding", usage: USAGE, schema: z.object({ quick: z.boolean().default(false) }) });

const BATCH = 8;
const NEW_TOKENS = quick ? 32 : 96;
const RUNS = quick ? 2 : 7;

/** The project's TypeScript sources, line by line: code and JSON-like text for the 10m tokenizer. */
function sourceLines(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceLines(path, out);
    else if (name.endsWith(".ts")) out.push(...readFileSync(path, "utf8").split("\n"));
  }
  return out;
}

async function grammars(): Promise<{ name: string; spec: ConstraintSpec }[]> {
  const tomi = await (await loadScenario("tomi")).create(1);
  const fantom = await (await loadScenario("fantom")).create(1);
  const actionOf = async (sc: typeof tomi) => z.toJSONSchema(sc.world.actionSchema(sc.initialState, sc.world.agents(sc.initialState)[0]!) as z.ZodType);
  return [
    { name: "ToMi action", spec: { type: "json_schema", schema: await actionOf(tomi) } },
    { name: "FANToM action (free text)", spec: { type: "json_schema", schema: await actionOf(fantom) } },
    {
      name: "/v1 schema (nested, arrays, bounds)",
      spec: {
        type: "json_schema",
        whitespace: "flexible",
        schema: z.toJSONSchema(z.object({ items: z.array(z.object({ sku: z.string().regex(/^[A-Z]{3}-\d{4}$/), quantity: z.int().min(1).max(99), price: z.number().min(0).max(10000) })).max(4), note: z.string().max(80).nullable() })),
      },
    },
    { name: "json_object", spec: { type: "json_object", whitespace: "flexible", depth: 3 } },
    { name: "choice (4 answers)", spec: { type: "choice", choices: ["box", "basket", "crate", "green_bucket"] } },
    { name: "usersim reply (six states of 384 and a response of 4,096 counted)", spec: { type: "regex", pattern: replyTextPattern(DEFAULT_HIERARCHY) } },
  ];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const native = loadNative();
  const rows: string[][] = [];
  const specs = await grammars();
  for (const preset of ["tiny", "10m"]) {
    const corpus = preset === "10m" ? [...(await defaultCorpus(1)), ...sourceLines(join(process.cwd(), "agents")), ...sourceLines(join(process.cwd(), "models")), ...sourceLines(join(process.cwd(), "worlds"))] : undefined;
    const m = await createFromScratch({ preset, seed: 1, ...(corpus ? { corpus } : {}) });
    const vocab = grammarVocabulary(m.tokenizer);
    const prompt = Int32Array.from(m.tokenizer.encode(m.tokenizer.applyChatTemplate([{ role: "user", content: "Act now." }], { addGenerationPrompt: true })));
    const stops = [...m.tokenizer.stopTokenIds];
    process.stderr.write(`${preset}: vocabulary ${vocab.size}, ${m.model.numParams} parameters\n`);
    for (const { name, spec } of specs) {
      const t0 = performance.now();
      const automaton: TokenAutomaton = compileConstraint(spec, vocab);
      const compileMs = performance.now() - t0;
      const budget = Math.max(NEW_TOKENS, automaton.minBudget);
      // Decode seconds per generated token over `steps` steps after the prefill, or, with steps
      // undefined, over the steps in which the whole batch still runs (a grammar ends sequences
      // sooner); the unconstrained run then decodes as many steps, at the same positions.
      const decode = (constrained: boolean, run: number, steps?: number): { perToken: number; steps: number } => {
        const seeds = Array.from({ length: BATCH }, (_, i) => 1000 * run + i);
        const g = new native.Generation(m.model.native, seeds.map(() => prompt), {
          maxNewTokens: budget,
          temperature: 1,
          seeds,
          stopTokenIds: stops,
          ...(constrained ? { constraints: seeds.map(() => nativeConstraint(automaton)) } : {}),
        });
        g.step(1);
        let seconds = 0;
        let done = 0;
        while (steps === undefined ? g.running === BATCH : done < steps && g.running > 0) {
          const t = performance.now();
          g.step(1);
          seconds += (performance.now() - t) / 1000;
          done++;
        }
        return { perToken: done ? seconds / (done * BATCH) : NaN, steps: done };
      };
      decode(true, 0);
      const free: number[] = [];
      const held: number[] = [];
      for (let r = 1; r <= RUNS; r++) {
        const c = decode(true, r);
        if (c.steps === 0) continue;
        held.push(c.perToken);
        free.push(decode(false, r, c.steps).perToken);
      }
      const f = median(free);
      const h = median(held);
      rows.push([preset, String(vocab.size), name, (1 / f).toFixed(0), (1 / h).toFixed(0), `${(((h - f) / f) * 100).toFixed(1)}%`, compileMs.toFixed(0), String(automaton.numStates), String(automaton.numEntries)]);
      process.stderr.write(`  ${name}: done\n`);
    }
  }
  const head = ["preset", "vocab", "grammar", "tokens/s free", "tokens/s constrained", "overhead per token", "compile ms", "states", "row entries"];
  const line = (r: string[]) => `| ${r.join(" | ")} |`;
  process.stdout.write(
    `## Constrained decoding: overhead per generated token\n\n` +
      `Native engine, ${native.threads()} threads, batch ${BATCH}, temperature 1, up to ${NEW_TOKENS} new tokens; time per token over the decoding steps in which the whole constrained batch still runs, and over as many steps from the same positions without the grammar (prefill excluded); median of ${RUNS} alternating runs.\n\n` +
      [line(head), `|${head.map((_, i) => (i < 3 ? ":---" : "---:")).join("|")}|`, ...rows.map(line)].join("\n") +
      "\n",
  );
}

void main();

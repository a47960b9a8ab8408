/**
 * How long the examples of `context=self` are in tokens: each question of a file as SFT teaches it
 * in simulation mode (the story and question, then the world model's written context and answer
 * line, as learn-recipe.ts's sftExample writes them, for the world model's label), encoded as the trainer encodes it (the chat template, user
 * then assistant) with a word tokenizer built from the examples themselves at the preset's
 * vocabulary, as `demo:learn` builds its policy's (`model init --tokenizer word --corpus`). Prints
 * the distribution of the prompt's, the reply's and the whole example's lengths, and of the
 * trace's lines, against the preset's window.
 *
 *   node dist/measurements/written-lengths.js --world hitom [--data FILE | --generate N --seed S]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { askedQuestion, replyFor } from "../agents/policy/question-prompt.js";
import { CONTEXT_SOURCES, writtenOrder } from "../agents/policy/options.js";
import { createFromScratch } from "../models/from-scratch.js";
import { preset, PRESETS } from "../models/presets.js";
import { DataError } from "../worlds/core/errors.js";
import { loadWorld } from "../worlds/registry.js";
import { RECIPE_PRESET } from "./learn-recipe.js";
import { intArg } from "../cli/args.js";
import { scriptArgs } from "./script-args.js";

const USAGE = `node dist/measurements/written-lengths.js --world W [--data FILE | --generate N] [--seed S] [--context self|self-latest] [--preset P]

Prints the token lengths of the simulation-mode examples a policy that writes its own context is
taught (prompt, reply, both under the chat template), with a word tokenizer built from them.

Options:
  --world W       tomi or hitom
  --data FILE     the questions (a benchmark file of the world)
  --generate N    or N questions of the world's generator (default 600)
  --seed S        the generator's seed (default 1)
  --context C     self (default) or self-latest
  --preset P      the policy preset whose vocabulary and window apply (default ${RECIPE_PRESET})
  --help          this text`;

const values = scriptArgs({
  name: "written-lengths",
  usage: USAGE,
  schema: z.object({
    world: z.enum(["tomi", "hitom"]),
    data: z.string().optional(),
    generate: intArg(1).optional(),
    seed: intArg(0, 2 ** 32 - 1).default(1),
    context: z.enum(CONTEXT_SOURCES).default("self"),
    preset: z.enum(Object.keys(PRESETS) as [string, ...string[]]).default(RECIPE_PRESET),
  }),
});
if (values.data !== undefined && values.generate !== undefined) {
  process.stderr.write("written-lengths: --data and --generate: one or the other\n");
  process.exit(2);
}
if (!writtenOrder(values.context)) {
  process.stderr.write("written-lengths: --context: self or self-latest (the policy writes the context)\n");
  process.exit(2);
}

const world = await loadWorld(values.world);
let file = values.data;
let scratch: string | undefined;
if (file === undefined) {
  scratch = mkdtempSync(join(tmpdir(), "written-lengths-"));
  const gen = await world.generator!.generate(values.generate ?? 600, values.seed, join(scratch, "questions"));
  for (const f of gen.files) writeFileSync(f.path, f.text);
  file = gen.data;
}
try {
  const bench = await world.benchmark!.create({});
  const examples = [];
  const lines: number[] = [];
  for (const item of await loaded(() => bench.load(file))) {
    // The world model's label, which the trace gives (a file's own label may be another: Hi-ToM's hand edits).
    const asked = await askedQuestion(bench.task(item, "simulation"), values.context);
    const response = replyFor(asked, item.question, String((await bench.groundTruth(item)).label));
    if (response === undefined) throw new Error(`${item.id}: the world model's trace gives no answer`);
    examples.push({ prompt: asked.text, response });
    lines.push(asked.written!.trace.length);
  }
  const p = preset(values.preset);
  const { tokenizer } = await createFromScratch({ preset: values.preset, seed: 0, corpus: examples.flatMap((e) => [e.prompt, e.response]), tokenizerKind: "word" });
  const prompt: number[] = [];
  const reply: number[] = [];
  const total: number[] = [];
  for (const e of examples) {
    const whole = tokenizer.encodeChat([{ role: "user", content: e.prompt }, { role: "assistant", content: e.response }]);
    const asked = tokenizer.encodeChat([{ role: "user", content: e.prompt }]).ids.length;
    prompt.push(asked);
    reply.push(whole.ids.length - asked);
    total.push(whole.ids.length);
  }
  const over = total.filter((n) => n > p.maxPositionEmbeddings).length;
  process.stdout.write(
    [
      `${examples.length} ${values.world} questions from ${values.data ?? `the generator (${values.generate ?? 600}, seed ${values.seed})`}, context=${values.context}, word tokenizer of ${tokenizer.vocabSize} tokens (preset ${values.preset}, window ${p.maxPositionEmbeddings}):`,
      `  prompt   ${spread(prompt)}`,
      `  reply    ${spread(reply)}`,
      `  both     ${spread(total)}; over the window: ${over}`,
      `  trace lines ${spread(lines)}`,
    ].join("\n") + "\n",
  );
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}

/** The file's questions, or the script stops with one line naming the file and the line or field at fault. */
async function loaded<T>(load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!(err instanceof DataError)) throw err;
    process.stderr.write(`written-lengths: ${err.message}\n`);
    process.exit(2);
  }
}

/** min / median / mean / 90th percentile / max. */
function spread(xs: readonly number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return `min ${s[0]}, median ${at(0.5)}, mean ${mean.toFixed(1)}, p90 ${at(0.9)}, max ${s.at(-1)}`;
}

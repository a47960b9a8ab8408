/**
 * The learning recipe's supervised stage (docs/learning.md), shared by the scripts that start from
 * it: `npm run demo:learn` (its SFT, before GRPO) and `npm run demo:selfplay` (its starting policy).
 *
 * 1. data: N questions of new ToMi stories (the world's generator, seeded), varied beyond ToMi's
 *    own file so that the policy learns the task and not the file: half the stories name their
 *    containers plainly, a third say where a container stands. Balanced by question type (on
 *    request): as many of each of ToMi's six types (false and true belief apart), drawn from three
 *    times as many generated questions. In ToMi's own mix a tenth of the first-order questions are
 *    false belief, and a policy trained on that mix answers every first-order question with the
 *    object's real place: right nine times in ten, and a third of the time on false belief. The
 *    kept questions stay in the generator's order, and each type fills its quota at its own pace
 *    (the rare first-order false belief last): the whole file is balanced, its first N questions
 *    are not (what `train grpo --limit N` reads; the SFT examples are shuffled). Each
 *    question is written in the prompt modes asked for (each mode for a share of the questions),
 *    with the world model's label, in a seeded order.
 * 2. base: `model init --preset 1m --tokenizer word` on those prompts (every word one token, so a
 *    container's name is the same tokens in the story and in the answer).
 * 3. SFT: `train sft` with the prompts' tokens in the loss at a tenth of the answer's weight
 *    (`--prompt-loss 0.1`: a policy from scratch learns to read from every token of its prompts),
 *    on the device the caller's `device` arguments name (`--device cuda`, `--precision bf16`).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { askedQuestion, replyFor } from "../agents/policy/question-prompt.js";
import type { ContextSource } from "../agents/policy/options.js";
import { Rng } from "../worlds/core/rng.js";
import type { Benchmark, BenchItem, Mode } from "../worlds/question/benchmark.js";
import { loadBenchmark } from "../worlds/registry.js";
import { generateTomi, questionSubset } from "../worlds/tomi/index.js";
import { generateHitom } from "../worlds/hitom/index.js";
import { balancedByType, countByType } from "../trainers/data/balanced-types.js";
import type { StageTiming } from "./cli-process.js";
import { keptStage, trainStage } from "./stage-record.js";

export interface SftData {
  /** The generated questions, as a ToMi file (what GRPO and evaluations read). */
  readonly trainFile: string;
  /** The SFT examples: `{prompt, response}` lines, each question in its modes. */
  readonly sftFile: string;
  readonly questions: number;
  readonly examples: number;
}

/** The worlds the recipe trains on: ToMi's stories, or Hi-ToM's (orders 0 to 4, lies and trust). */
export type RecipeWorld = "tomi" | "hitom";

export interface SftDataOptions {
  /** Whose generator writes the questions (default tomi). */
  readonly world?: RecipeWorld;
  readonly questions: number;
  readonly seed: number;
  readonly modes: readonly Mode[];
  /** The share of questions also written in a mode (default 1: every question in every mode). */
  readonly shares?: Partial<Record<Mode, number>>;
  /**
   * Who writes the simulation-mode context (default world): the world model, which the policy
   * reads and cites; or the policy itself (`self`: the story, then who saw the asked object where,
   * then the answer line; agents/policy/question-prompt.ts), as `policy:DIR?context=self` is asked.
   */
  readonly context?: ContextSource;
  /** The share of ToMi's sentences whose wording is drawn from other everyday ones (default 0; worlds/tomi/rewording.ts). */
  readonly reworded?: number;
  /** As many questions of each type (default: the generator's own mix; Hi-ToM's generator asks every order of every story already). */
  readonly balance?: boolean;
  readonly timings: StageTiming[];
}

/** Writes OUT/train.txt (and .trace; Hi-ToM: OUT/train.json) and OUT/sft.jsonl; the stage's wall time goes to `timings` as "data". */
export async function recipeSftData(out: string, o: SftDataOptions): Promise<SftData> {
  const t0 = performance.now();
  const world = o.world ?? "tomi";
  const sftFile = join(out, "sft.jsonl");
  if (world === "hitom") {
    const trainFile = join(out, "train.json");
    writeFileSync(trainFile, (await generateHitom(o.questions, o.seed)).json);
    const bench = await loadBenchmark("hitom");
    return sftExamples(bench, await bench.load(trainFile), trainFile, sftFile, o, t0);
  }
  const trainFile = join(out, "train.txt");
  const files = await generateTomi(o.balance ? 3 * o.questions : o.questions, o.seed, undefined, { plainContainers: 0.5, placedContainers: 0.3, reworded: o.reworded ?? 0 });
  const pool = join(out, o.balance ? "generated.txt" : "train.txt");
  writeFileSync(pool, files.txt);
  writeFileSync(pool.replace(/\.txt$/, ".trace"), files.trace);
  const bench = await loadBenchmark("tomi");
  let items = await bench.load(pool);
  if (o.balance) {
    const types = items.map((item) => String((item as { type?: unknown }).type));
    const kept = balancedByType(types, o.questions);
    items = kept.map((i) => items[i]!);
    const { txt, trace } = questionSubset(files.txt, files.trace, kept);
    writeFileSync(trainFile, txt);
    writeFileSync(join(out, "train.trace"), trace);
    process.stderr.write(`[data] kept by type: ${JSON.stringify(countByType(types, kept))} of ${files.questions} generated\n`);
  }
  return sftExamples(bench, items, trainFile, sftFile, o, t0);
}

/** The questions (those of `trainFile`) as SFT examples in the modes asked for, in a seeded order, to `sftFile`. */
async function sftExamples(bench: Benchmark, items: readonly BenchItem[], trainFile: string, sftFile: string, o: SftDataOptions, t0: number): Promise<SftData> {
  const rng = Rng.seeded(`learn-demo:${o.seed}`);
  const lines: string[] = [];
  const written = new Map<Mode, number>();
  for (const item of items) {
    for (const mode of o.modes) {
      const share = o.shares?.[mode] ?? 1;
      if (share < 1 && !rng.chance(share)) continue;
      written.set(mode, (written.get(mode) ?? 0) + 1);
      lines.push(JSON.stringify(await sftExample(bench, item, mode, o.context)));
    }
  }
  writeFileSync(sftFile, rng.shuffle(lines).join("\n") + "\n");
  o.timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
  const counts = [...written].map(([mode, n]) => `${n} ${mode}`).join(", ");
  process.stderr.write(`[data] ${items.length} ${bench.name} questions, ${lines.length} examples (${counts}) -> ${sftFile}\n`);
  return { trainFile, sftFile, questions: items.length, examples: lines.length };
}

/**
 * A question as an SFT example: the prompt a policy is asked in `mode`, and the reply that answers
 * its label (over a compact context, the citation of its line; with `context` self, the world
 * model's written context, then that citation).
 */
export async function sftExample(bench: Benchmark, item: BenchItem, mode: Mode, context: ContextSource = "world"): Promise<{ prompt: string; response: string }> {
  const task = bench.task(item, mode);
  const asked = await askedQuestion(task, context);
  const response = replyFor(asked, task.question, String(item.answer));
  if (response === undefined) throw new Error(`${item.id}: no line of the compact context gives the label ${String(item.answer)}`);
  return { prompt: asked.text, response };
}

/** The recipe's policy size, SFT batch and peak learning rate, where a script asks for no other. */
export const RECIPE_PRESET = "1m";
export const RECIPE_BATCH = 32;
export const RECIPE_LR = "3e-3";

/**
 * `model init` then `train sft` of the recipe: OUT/base and OUT/sft, through `run` (the command line
 * in a child process). With `reuse`, policies a finished run trained from the same data (the SFT
 * file's digest: the questions, seed, modes and balance that wrote it), steps and seed are kept;
 * `trained` says whether they were trained now. The device is left out of the record: it changes
 * where the stage runs, not what it trains.
 */
export async function recipeSft(
  run: (stage: string, args: string[]) => Promise<unknown>,
  out: string,
  o: { sftFile: string; steps: number; seed: number; reuse?: boolean; device?: readonly string[]; preset?: string; lr?: number; batch?: number },
): Promise<{ base: string; sft: string; trained: boolean }> {
  const base = join(out, "base");
  const sft = join(out, "sft");
  const s = String(o.seed);
  const baseArgs = ["model", "init", "--preset", o.preset ?? RECIPE_PRESET, "--corpus", o.sftFile, "--tokenizer", "word", "--seed", s, "--out", base, "--force"];
  const sftArgs = [
    "train", "sft", "--model", base, "--data", o.sftFile, "--out", sft, "--steps", String(o.steps), "--batch", String(o.batch ?? RECIPE_BATCH),
    // The recipe's rate given as a number (`--lr 3e-3`, written 0.003) is recorded as the default is, so that --reuse keeps its policy.
    "--lr", o.lr === undefined || o.lr === Number(RECIPE_LR) ? RECIPE_LR : String(o.lr), "--min-lr", "1e-4", "--warmup", "50", "--weight-decay", "0.01", "--prompt-loss", "0.1", "--seed", s, "--save-every", "100000",
  ];
  const record = { base: baseArgs, sft: sftArgs, data: createHash("sha256").update(readFileSync(o.sftFile)).digest("hex") };
  if (o.reuse) {
    const kept = existsSync(join(base, "config.json")) ? keptStage(sft, record) : "none";
    if (kept === "kept") {
      process.stderr.write(`[sft] kept ${base} and ${sft} (--reuse)\n`);
      return { base, sft, trained: false };
    }
    if (kept === "other") process.stderr.write(`[sft] ${sft} was trained on other data or with other settings than this run's (or before the recipe recorded them): training it again\n`);
  }
  await trainStage(sft, record, async () => {
    await run("base", baseArgs);
    await run("sft", [...sftArgs, ...(o.device ?? [])]);
  });
  return { base, sft, trained: true };
}

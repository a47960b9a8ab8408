/**
 * The learning recipe's supervised stage (docs/learning.md), shared by the scripts that start from
 * it: `npm run demo:learn` (its SFT, before GRPO) and `npm run demo:selfplay` (its starting policy).
 *
 * 1. data: N questions of new ToMi stories (the world's generator, seeded), varied beyond ToMi's
 *    own file so that the policy learns the task and not the file: half the stories name their
 *    containers plainly, a third say where a container stands; each question written in the
 *    prompt modes asked for, with the world model's label, in a seeded order.
 * 2. base: `model init --preset 1m --tokenizer word` on those prompts (every word one token, so a
 *    container's name is the same tokens in the story and in the answer).
 * 3. SFT: `train sft` with the prompts' tokens in the loss at a tenth of the answer's weight
 *    (`--prompt-loss 0.1`: a policy from scratch learns to read from every token of its prompts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { questionText } from "../agents/policy/question-prompt.js";
import { Rng } from "../worlds/core/rng.js";
import type { Mode } from "../worlds/question/benchmark.js";
import { loadBenchmark } from "../worlds/registry.js";
import { generateTomi } from "../worlds/tomi/index.js";
import type { StageTiming } from "./cli-process.js";

export interface SftData {
  /** The generated questions, as a ToMi file (what GRPO and evaluations read). */
  readonly trainFile: string;
  /** The SFT examples: `{prompt, response}` lines, every question in every mode. */
  readonly sftFile: string;
  readonly questions: number;
  readonly examples: number;
}

/** Writes OUT/train.txt (and .trace) and OUT/sft.jsonl; the stage's wall time goes to `timings` as "data". */
export async function recipeSftData(out: string, o: { questions: number; seed: number; modes: readonly Mode[]; timings: StageTiming[] }): Promise<SftData> {
  const t0 = performance.now();
  const trainFile = join(out, "train.txt");
  const sftFile = join(out, "sft.jsonl");
  const files = await generateTomi(o.questions, o.seed, undefined, { plainContainers: 0.5, placedContainers: 0.3 });
  writeFileSync(trainFile, files.txt);
  writeFileSync(join(out, "train.trace"), files.trace);
  const bench = await loadBenchmark("tomi");
  const lines: string[] = [];
  for (const item of await bench.load(trainFile)) {
    for (const mode of o.modes) lines.push(JSON.stringify({ prompt: await questionText(bench.task(item, mode)), response: item.answer }));
  }
  writeFileSync(sftFile, Rng.seeded(`learn-demo:${o.seed}`).shuffle(lines).join("\n") + "\n");
  o.timings.push({ stage: "data", seconds: (performance.now() - t0) / 1000 });
  process.stderr.write(`[data] ${files.questions} generated questions, ${lines.length} examples (${o.modes.join(" and ")}) -> ${sftFile}\n`);
  return { trainFile, sftFile, questions: files.questions, examples: lines.length };
}

/** `model init` then `train sft` of the recipe: OUT/base and OUT/sft, through `run` (the command line in a child process). */
export async function recipeSft(
  run: (stage: string, args: string[]) => Promise<unknown>,
  out: string,
  o: { sftFile: string; steps: number; seed: number },
): Promise<{ base: string; sft: string }> {
  const base = join(out, "base");
  const sft = join(out, "sft");
  const s = String(o.seed);
  await run("base", ["model", "init", "--preset", "1m", "--corpus", o.sftFile, "--tokenizer", "word", "--seed", s, "--out", base, "--force"]);
  await run("sft", [
    "train", "sft", "--model", base, "--data", o.sftFile, "--out", sft, "--steps", String(o.steps), "--batch", "32",
    "--lr", "3e-3", "--min-lr", "1e-4", "--warmup", "50", "--weight-decay", "0.01", "--prompt-loss", "0.1", "--seed", s, "--save-every", "100000",
  ]);
  return { base, sft };
}

/**
 * The user-simulation recipe's supervised data (`npm run demo:usersim`, usersim-demo.ts): the
 * training split's records written as SFT examples on their ground-truth hierarchies, each
 * record's prompt exactly as `bench usersim` asks a policy (agents/policy/question-prompt.ts) and
 * its answer the true states and the real reply in the text form (`referenceText`, what
 * `bench usersim --agent simulation` then `export --format sft` writes). A share of the records
 * is also written with the response-only hierarchy (the reply alone), so that response-only GRPO
 * starts from a policy that has seen its prompt: both GRPO modes then start from one SFT.
 *
 * Per-level examples (`generation: "per-level"`) are the same records asked as per-level
 * generation asks them (agents/policy/level-decoding.ts): one example per level, its prompt the
 * level's (levelPromptText: the level's prompt, the true texts of the levels before it, the
 * user's view) and its answer that level's block of the reference (replyLevels), so that a policy
 * asked level by level is trained on the prompts it is asked.
 */
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { intArg } from "../cli/args.js";
import { questionText } from "../agents/policy/question-prompt.js";
import { Rng } from "../worlds/core/rng.js";
import { levelPromptText, type QuestionTask } from "../worlds/question/world.js";
import { parseReply, replyLevels, RESPONSE_ONLY_HIERARCHY, UsersimBenchmark, type Hierarchy, type UsersimBenchItem } from "../worlds/usersim/index.js";

export interface UsersimSftOptions {
  /** The hierarchy of the full replies (its tags, in order, then the response). */
  readonly hierarchy: Hierarchy;
  /** The records' split (default train). */
  readonly split?: string;
  /** The share of records also written response-only (default 0.5). */
  readonly responseOnlyShare?: number;
  /** Joint (default): one example a record, the whole reply after the joint prompt; per-level: one a level. */
  readonly generation?: "joint" | "per-level";
  readonly seed: number;
}

export interface UsersimSftData {
  readonly records: number;
  readonly hierarchical: number;
  readonly responseOnly: number;
}

/** `{prompt, response}` lines of the split's records, in a seeded order. */
export async function usersimSftLines(file: string, o: UsersimSftOptions): Promise<{ lines: string[] } & UsersimSftData> {
  const split = o.split ?? "train";
  const share = o.responseOnlyShare ?? 0.5;
  if (!(share >= 0 && share <= 1)) throw new Error(`responseOnlyShare: expected a share in [0, 1] (got ${share})`);
  const full = new UsersimBenchmark({ hierarchy: o.hierarchy, split });
  const alone = new UsersimBenchmark({ hierarchy: RESPONSE_ONLY_HIERARCHY, split });
  const items = await full.load(file);
  const aloneItems = await alone.load(file);
  const rng = Rng.seeded(`usersim-sft:${o.seed}`);
  const lines: string[] = [];
  let responseOnly = 0;
  const examples = o.generation === "per-level" ? levelExamples : jointExample;
  for (let i = 0; i < items.length; i++) {
    for (const e of await examples(full, items[i]!)) lines.push(JSON.stringify(e));
    if (share > 0 && rng.chance(share)) {
      for (const e of await examples(alone, aloneItems[i]!)) lines.push(JSON.stringify(e));
      responseOnly++;
    }
  }
  return { lines: rng.shuffle(lines), records: items.length, hierarchical: items.length, responseOnly };
}

interface SftExample {
  readonly prompt: string;
  readonly response: string;
}

/** The record as `bench usersim` asks it jointly, answered with its whole reference. */
async function jointExample(b: UsersimBenchmark, item: UsersimBenchItem): Promise<SftExample[]> {
  return [{ prompt: await questionText(b.task(item, "vanilla")), response: String(item.answer) }];
}

/** The record as per-level generation asks it: each level's prompt after the true levels before it, answered with its block. */
async function levelExamples(b: UsersimBenchmark, item: UsersimBenchItem): Promise<SftExample[]> {
  const task: QuestionTask = b.task(item, "vanilla");
  const levels = task.answerForm?.type === "pattern" ? task.answerForm.levels : undefined;
  if (!levels) throw new Error(`${item.id}: the task has no levels`);
  const reply = parseReply(String(item.answer), b.hierarchy);
  if (!reply.ok) throw new Error(`${item.id}: the reference is not a reply of the hierarchy (${reply.error})`);
  const parts = replyLevels(reply.action, b.hierarchy);
  return parts.map((response, k) => ({ prompt: levelPromptText(levels, k, parts.slice(0, k)), response }));
}

/** Writes usersimSftLines to `out` (one JSON object a line). */
export async function writeUsersimSft(file: string, out: string, o: UsersimSftOptions): Promise<UsersimSftData> {
  const { lines, ...counts } = await usersimSftLines(file, o);
  writeFileSync(out, lines.join("\n") + "\n");
  return counts;
}

/** The --help lines of the GRPO and evaluation options both usersim scripts take (USERSIM_RECIPE_OPTIONS). */
export const USERSIM_RECIPE_HELP = `  --prompts N        records a GRPO step (default 4)
  --group-size G     replies per record (default 4)
  --lr X             GRPO learning rate (default 1e-4)
  --eval N           the test split's first N records (default 60)`;

/** The recipe's options that usersim-demo.ts and usersim-generation.ts share (their usage texts list them). */
export const USERSIM_RECIPE_OPTIONS = {
  n: intArg(20, 1_000_000).default(2000),
  "data-seed": intArg(0, 2 ** 32 - 1).default(0),
  seed: intArg(0, 2 ** 32 - 1).default(1),
  prompts: intArg(1).default(4),
  "group-size": intArg(2).default(4),
  lr: z.coerce.number().positive().default(1e-4),
  eval: intArg(1).default(60),
  threads: intArg(1).default(1),
};

/** The policy's context: prompts reach about 830 tokens and hierarchical replies about 230. */
export const USERSIM_CONTEXT = 1280;

/** `model init`: the recipe's base, its word tokenizer built from `corpus`. */
export function usersimBaseArgs(corpus: string, out: string, seed: number): string[] {
  return ["model", "init", "--preset", "1m", "--corpus", corpus, "--tokenizer", "word", "--context", String(USERSIM_CONTEXT), "--seed", String(seed), "--out", out, "--force"];
}

/** `train sft`: batch 8, lr 3e-3 to 1e-4 (warmup 20 steps, or a tenth of a shorter run), the prompt's tokens at a tenth of the reply's weight. */
export function usersimSftArgs(base: string, data: string, out: string, steps: number, seed: number, threads: number): string[] {
  return [
    "train", "sft", "--model", base, "--data", data, "--out", out, "--steps", String(steps), "--batch", "8", "--max-len", String(USERSIM_CONTEXT),
    "--lr", "3e-3", "--min-lr", "1e-4", "--warmup", String(Math.min(20, Math.ceil(steps / 10))), "--weight-decay", "0.01", "--prompt-loss", "0.1", "--seed", String(seed), "--save-every", "100000", "--threads", String(threads),
  ];
}

export interface UsersimGrpoRun {
  readonly model: string;
  readonly data: string;
  readonly hierarchy: string;
  readonly out: string;
  readonly store: string;
  readonly steps: number;
  readonly prompts: number;
  readonly groupSize: number;
  readonly maxNewTokens: number;
  readonly lr: number;
  readonly seed: number;
  readonly threads: number;
  /** Per-level rollouts (default: joint, the option left out). */
  readonly generation?: "joint" | "per-level";
  /** Per-level credit (default: the reply's, the option left out). */
  readonly credit?: "reply" | "level";
}

/** `train grpo` on the train split: temperature 1, KL 0.01, clip 0.2/0.28, token-mean, rollouts under the reply's grammar. */
export function usersimGrpoArgs(r: UsersimGrpoRun): string[] {
  return [
    "train", "grpo", "--model", r.model, "--bench", "usersim", "--data", r.data, "--split", "train", "--hierarchy", r.hierarchy,
    "--out", r.out, "--store", r.store, "--steps", String(r.steps), "--prompts", String(r.prompts), "--group-size", String(r.groupSize),
    "--max-new-tokens", String(r.maxNewTokens), "--temperature", "1", "--lr", String(r.lr), "--kl", "0.01", "--clip-high", "0.28", "--loss-agg", "token-mean",
    "--micro-batch", "8", "--seed", String(r.seed), "--save-every", "100000", "--threads", String(r.threads), "--quiet",
    ...(r.generation ? ["--generation", r.generation] : []),
    ...(r.credit ? ["--credit", r.credit] : []),
  ];
}

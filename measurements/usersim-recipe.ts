/**
 * The user-simulation recipe's supervised data (`npm run demo:usersim`, usersim-demo.ts): the
 * training split's records written as SFT examples on their ground-truth hierarchies, each
 * record's prompt exactly as `bench usersim` asks a policy (agents/policy/question-prompt.ts) and
 * its answer the true states and the real reply in the text form (`referenceText`, what
 * `bench usersim --agent simulation` then `export --format sft` writes). A share of the records
 * is also written with the response-only hierarchy (the reply alone), so that response-only GRPO
 * starts from a policy that has seen its prompt: both GRPO modes then start from one SFT.
 */
import { writeFileSync } from "node:fs";
import { questionText } from "../agents/policy/question-prompt.js";
import { Rng } from "../worlds/core/rng.js";
import { RESPONSE_ONLY_HIERARCHY, UsersimBenchmark, type Hierarchy } from "../worlds/usersim/index.js";

export interface UsersimSftOptions {
  /** The hierarchy of the full replies (its tags, in order, then the response). */
  readonly hierarchy: Hierarchy;
  /** The records' split (default train). */
  readonly split?: string;
  /** The share of records also written response-only (default 0.5). */
  readonly responseOnlyShare?: number;
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
  for (let i = 0; i < items.length; i++) {
    lines.push(JSON.stringify({ prompt: await questionText(full.task(items[i]!, "vanilla")), response: items[i]!.answer }));
    if (share > 0 && rng.chance(share)) {
      lines.push(JSON.stringify({ prompt: await questionText(alone.task(aloneItems[i]!, "vanilla")), response: aloneItems[i]!.answer }));
      responseOnly++;
    }
  }
  return { lines: rng.shuffle(lines), records: items.length, hierarchical: items.length, responseOnly };
}

/** Writes usersimSftLines to `out` (one JSON object a line). */
export async function writeUsersimSft(file: string, out: string, o: UsersimSftOptions): Promise<UsersimSftData> {
  const { lines, ...counts } = await usersimSftLines(file, o);
  writeFileSync(out, lines.join("\n") + "\n");
  return counts;
}

/** Tiny seeded models and data for the policy, native and trainer tests (made here, never downloaded). */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch, type ScratchModel } from "../../models/from-scratch.js";

export const CORPUS = [
  "Ella entered the garage. Avery entered the garage. The spinach is in the green_crate.",
  "Ella moved the spinach to the blue_box. Avery exited the garage. Where is the spinach?",
  "Where will Avery look for the spinach? The green_crate. Where does Ella think Avery looks?",
  "Liam likes the red apple. Mia likes the yellow banana. Noah found the toy in the basket.",
  "Numbers 0 1 2 3 4 5 6 7 8 9 and punctuation: commas, periods. Quotes \"like this\" and (parentheses)!",
];

export const PAIRS = [
  { prompt: "Where is the spinach?", response: "green_crate" },
  { prompt: "Who entered the garage first?", response: "Ella" },
  { prompt: "What does Liam like?", response: "the red apple" },
  { prompt: "Where did Noah find the toy?", response: "in the basket" },
  { prompt: "What does Mia like?", response: "the yellow banana" },
  { prompt: "Who exited the garage?", response: "Avery" },
];

export function tempDir(prefix = "sw-policy-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function tinyModel(seed = 1): Promise<ScratchModel> {
  return createFromScratch({ preset: "tiny", seed, corpus: [...CORPUS, ...PAIRS.flatMap((p) => [p.prompt, p.response])] });
}

/** A tiny checkpoint folder on disk. */
export async function tinyCheckpoint(seed = 1): Promise<{ dir: string } & ScratchModel> {
  const m = await tinyModel(seed);
  const dir = tempDir();
  saveCheckpoint(dir, m.model, m.files);
  return { dir, ...m };
}

/**
 * Chat transcripts as JSONL, one `{"messages": [{role, content}, ...]}` per line: the layout of
 * OpenAI's and Together's fine-tuning files, TRL's conversational datasets and this project's own
 * SFT trainer (trainers/sft/examples.ts). Only `messages`, because the hosted fine-tuning APIs
 * reject lines with other keys; the Parquet exports carry the provenance.
 */
import { writeFileSync } from "node:fs";
import type { QuestionExample, TurnExample } from "./examples.js";
import { responseOf } from "./sft-parquet.js";

export function chatLine(ex: QuestionExample | TurnExample): string {
  return JSON.stringify({
    messages: [
      { role: "user", content: ex.prompt },
      { role: "assistant", content: responseOf(ex) },
    ],
  });
}

export function writeChatJsonl(file: string, examples: readonly (QuestionExample | TurnExample)[]): void {
  writeFileSync(file, examples.map((e) => chatLine(e) + "\n").join(""));
}

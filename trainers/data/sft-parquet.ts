/**
 * Parquet for supervised fine-tuning: a `prompt` and a `response` string per row, the columns
 * VERL's SFT trainer reads by default (`data.prompt_key=prompt data.response_key=response`, as
 * the social-world-model project's `finetune_verl_sft.py` writes them), plus `data_source` and the
 * same `extra_info` struct as the RL layout. The response is the reference answer, written as the
 * prompt asks for it; for a live room's turn, what the agent or person did.
 */
import { parquetWriteFile } from "hyparquet-writer";
import type { SchemaElement } from "hyparquet";
import type { QuestionExample, TurnExample } from "./examples.js";
import { extraInfo, extraInfoSchema, type ParquetOptions } from "./verl-parquet.js";

const text = (name: string): SchemaElement => ({ name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" });

export const SFT_SCHEMA: SchemaElement[] = [{ name: "root", num_children: 4 }, text("data_source"), text("prompt"), text("response"), ...extraInfoSchema()];

export function responseOf(ex: QuestionExample | TurnExample): string {
  return ex.kind === "question" ? ex.reference : ex.response;
}

export function writeSftParquet(file: string, examples: readonly (QuestionExample | TurnExample)[], opts: ParquetOptions): void {
  parquetWriteFile({
    filename: file,
    schema: SFT_SCHEMA,
    columnData: [
      { name: "data_source", data: examples.map((e) => e.dataSource) },
      { name: "prompt", data: examples.map((e) => e.prompt) },
      { name: "response", data: examples.map(responseOf) },
      { name: "extra_info", data: examples.map((e, i) => extraInfo(e, opts.split, i)) },
    ],
    kvMetadata: Object.entries(opts.metadata ?? {}).map(([key, value]) => ({ key, value })),
  });
}

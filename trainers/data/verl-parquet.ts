/**
 * Parquet in VERL's RL data layout (what `verl.trainer.main_ppo` and TRL read):
 *
 *   data_source   string                         "socialworld/tomi": picks the reward function
 *   prompt        list<struct<content, role>>    the chat messages: one user message, the prompt
 *   ability       string                         "theory_of_mind"
 *   reward_model  struct<ground_truth, style>    style "rule"; the label as text (lists as JSON)
 *   extra_info    struct<split, index, ...>      index is the row; the rest says where it came from
 *
 * Nested columns are real Parquet LIST and struct groups, laid out the way pyarrow writes a pandas
 * frame of dicts and lists (3-level lists: `list` / `element`), so pandas and `datasets` read them
 * back as lists of dicts and dicts.
 */
import { parquetWriteFile } from "hyparquet-writer";
import type { SchemaElement } from "hyparquet";
import type { QuestionExample, TurnExample } from "./examples.js";

type Leaf = "string" | "int64" | "bool";

const leaf = (name: string, type: Leaf): SchemaElement =>
  type === "string"
    ? { name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" }
    : type === "int64"
      ? { name, type: "INT64", repetition_type: "OPTIONAL" }
      : { name, type: "BOOLEAN", repetition_type: "OPTIONAL" };

const stringList = (name: string): SchemaElement[] => [
  { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  leaf("element", "string"),
];

/** extra_info: one struct for every row kind (fields that do not apply are null). */
const EXTRA_FIELDS: readonly (readonly [string, Leaf | "list"])[] = [
  ["split", "string"],
  ["index", "int64"],
  ["id", "string"],
  ["benchmark", "string"],
  ["question_type", "string"],
  ["mode", "string"],
  ["question", "string"],
  ["label_source", "string"],
  ["official_answer", "string"],
  ["world_model_answer", "string"],
  ["agrees", "bool"],
  ["cause", "string"],
  ["choices", "list"],
  ["reference_answer", "string"],
  ["item_index", "int64"],
  ["context_id", "string"],
  ["file", "string"],
  ["line", "int64"],
  ["field", "string"],
  ["world", "string"],
  ["agent", "string"],
  ["timestep", "int64"],
  ["source", "string"],
  ["run", "string"],
  ["log_line", "int64"],
];

export function extraInfoSchema(): SchemaElement[] {
  return [
    { name: "extra_info", repetition_type: "OPTIONAL", num_children: EXTRA_FIELDS.length },
    ...EXTRA_FIELDS.flatMap(([name, type]) => (type === "list" ? stringList(name) : [leaf(name, type)])),
  ];
}

export type ExtraInfo = Record<string, string | bigint | boolean | readonly string[] | null>;

export function extraInfo(ex: QuestionExample | TurnExample, split: string, row: number): ExtraInfo {
  const out: ExtraInfo = Object.fromEntries(EXTRA_FIELDS.map(([k]) => [k, null]));
  out.split = split;
  out.index = BigInt(row);
  const m = ex.meta;
  out.run = m.run;
  out.log_line = BigInt(m.logLine);
  if (ex.kind === "question") {
    const q = ex.meta;
    Object.assign(out, {
      id: q.id,
      benchmark: q.benchmark,
      question_type: q.type,
      mode: q.mode,
      question: q.question,
      label_source: q.labelSource,
      official_answer: q.official,
      world_model_answer: q.worldModel,
      agrees: q.agrees,
      cause: q.cause,
      choices: q.choices,
      reference_answer: ex.reference,
      item_index: BigInt(q.index),
      context_id: q.contextId,
      file: q.file,
      line: q.line === null ? null : BigInt(q.line),
      field: q.field,
    });
  } else {
    const t = ex.meta;
    Object.assign(out, { world: t.world, agent: t.agent, timestep: t.timestep === null ? null : BigInt(t.timestep), source: t.source });
  }
  return out;
}

export const VERL_SCHEMA: SchemaElement[] = [
  { name: "root", num_children: 5 },
  leaf("data_source", "string"),
  { name: "prompt", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  { name: "element", repetition_type: "OPTIONAL", num_children: 2 },
  leaf("content", "string"),
  leaf("role", "string"),
  leaf("ability", "string"),
  { name: "reward_model", repetition_type: "OPTIONAL", num_children: 2 },
  leaf("ground_truth", "string"),
  leaf("style", "string"),
  ...extraInfoSchema(),
];

export interface ParquetOptions {
  readonly split: string;
  /** Key-value metadata stored in the file footer (what was exported, from which run). */
  readonly metadata?: Readonly<Record<string, string>>;
}

export function writeVerlParquet(file: string, examples: readonly QuestionExample[], opts: ParquetOptions): void {
  parquetWriteFile({
    filename: file,
    schema: VERL_SCHEMA,
    columnData: [
      { name: "data_source", data: examples.map((e) => e.dataSource) },
      { name: "prompt", data: examples.map((e) => [{ content: e.prompt, role: "user" }]) },
      { name: "ability", data: examples.map((e) => e.ability) },
      { name: "reward_model", data: examples.map((e) => ({ ground_truth: e.groundTruth, style: "rule" })) },
      { name: "extra_info", data: examples.map((e, i) => extraInfo(e, opts.split, i)) },
    ],
    kvMetadata: Object.entries(opts.metadata ?? {}).map(([key, value]) => ({ key, value })),
  });
}

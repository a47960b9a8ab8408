/**
 * The official FANToM file layout (`fantom_v1.json`: a JSON array, one object per question set),
 * as the official loader and evaluator read it, and its reader. Every problem is a DataError
 * naming the file and the field (`[12].beliefQAs[0].tom_type`); fields the evaluator does not
 * read are kept as they are.
 */
import { z } from "zod";
import { DataError } from "../core/errors.js";
import { readTextInput } from "../core/text-input.js";

const Accessibility = z.enum(["inaccessible", "accessible"]);
const YesNo = z.enum(["yes", "no", "no:long"]);
const Text = z.string().min(1, "is empty");

export const FactQASchema = z.looseObject({
  question: Text,
  correct_answer: Text,
  wrong_answer: z.string().optional(),
  question_type: z.string().regex(/^fact/, 'expected a type starting with "fact"').optional(),
  missed_info_accessibility: Accessibility.optional(),
});

// Both answers are the options of the multiple-choice question and the poles of the free-form
// comparison: equal, every answer would be right and wrong at once.
export const BeliefQASchema = z
  .looseObject({
    question: Text,
    question_type: z.enum(["tom:belief:inaccessible", "tom:belief:accessible"]),
    // The official file's three values; the report splits belief accuracy by them.
    tom_type: z.enum(["first-order", "second-order:cyclic", "second-order:acyclic"], {
      error: 'expected "first-order", "second-order:cyclic" or "second-order:acyclic"',
    }),
    correct_answer: Text,
    wrong_answer: Text,
    missed_info_accessibility: Accessibility,
  })
  .refine((q) => q.correct_answer.trim() !== q.wrong_answer.trim(), { message: "the same text as correct_answer", path: ["wrong_answer"] });

// A list answer is right when it names every correct character and no wrong one: a name in both
// lists could never be answered right.
const listQA = (type: string) =>
  z
    .looseObject({
      question: Text,
      question_type: z.literal(type).optional(),
      correct_answer: z.array(z.string()),
      wrong_answer: z.array(z.string()),
      missed_info_accessibility: Accessibility,
    })
    .superRefine((q, ctx) => {
      const both = q.wrong_answer.find((name) => q.correct_answer.includes(name));
      if (both !== undefined) ctx.addIssue({ code: "custom", message: `"${both}" is also in correct_answer`, path: ["wrong_answer"] });
    });

const binaryQA = (type: string) =>
  z.looseObject({
    question: Text,
    question_type: z.literal(type).optional(),
    correct_answer: YesNo,
    missed_info_accessibility: Accessibility,
  });

export const FantomSetSchema = z.looseObject({
  set_id: z.union([z.string(), z.number()]).transform(String).pipe(z.string().regex(/^[^-\s]+-[^-\s]+-[^-\s]+$/, 'expected "<conversation>-<part>-<k>"')),
  part_id: z.union([z.string(), z.number()]).transform(String).optional(),
  conv_id: z.union([z.string(), z.number()]).optional(),
  short_context: Text,
  full_context: Text,
  joining_speaker: z.string().optional(),
  missed_info: z.string().optional(),
  missed_info_accessibility: Accessibility.optional(),
  factQA: FactQASchema,
  beliefQAs: z.array(BeliefQASchema),
  answerabilityQA_list: listQA("tom:answerability:list"),
  answerabilityQAs_binary: z.array(binaryQA("tom:answerability:binary")),
  infoAccessibilityQA_list: listQA("tom:info_accessibility:list"),
  infoAccessibilityQAs_binary: z.array(binaryQA("tom:info_accessibility:binary")),
});

export const FantomFileSchema = z.array(FantomSetSchema);

export type FantomSet = z.infer<typeof FantomSetSchema>;
export type FactQA = z.infer<typeof FactQASchema>;
export type BeliefQA = z.infer<typeof BeliefQASchema>;
export type ListQA = FantomSet["answerabilityQA_list"];
export type BinaryQA = FantomSet["answerabilityQAs_binary"][number];

/** A zod issue path as the error names it: `[12].beliefQAs[0].tom_type`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}

/** Reads and validates a FANToM file. */
export function readFantomFile(path: string): FantomSet[] {
  return parseFantom(readTextInput(path), path);
}

export function parseFantom(text: string, file: string): FantomSet[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw jsonError(text, file, err as Error);
  }
  if (!Array.isArray(json)) throw new DataError(file, { field: "top level" }, `expected a JSON array of question sets, got ${json === null ? "null" : typeof json}`);
  const parsed = FantomFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const missing = /^Invalid input: expected (.+), received undefined$/.exec(issue.message);
    throw new DataError(file, { field: fieldPath(issue.path) || "top level" }, missing ? `missing (expected ${missing[1]})` : issue.message);
  }
  if (parsed.data.length === 0) throw new DataError(file, { field: "top level" }, "no question sets");
  const seen = new Map<string, number>();
  parsed.data.forEach((s, i) => {
    const before = seen.get(s.set_id);
    if (before !== undefined) throw new DataError(file, { field: `[${i}].set_id` }, `set_id "${s.set_id}" already used by [${before}]`);
    seen.set(s.set_id, i);
  });
  return parsed.data;
}

function jsonError(text: string, file: string, err: Error): DataError {
  const m = /position (\d+)/.exec(err.message);
  const end = text.replace(/\s+$/, "").length;
  if (m && Number(m[1]) < end) {
    const pos = Number(m[1]);
    const line = text.slice(0, pos).split("\n").length;
    return new DataError(file, { line }, `invalid JSON: ${err.message.replace(/ in JSON at position \d+.*$/, "").replace(/ \(line \d+ column \d+\)$/, "")}`);
  }
  const line = text.replace(/\s+$/, "").split("\n").length;
  if (m || /end of JSON|Unterminated|Unexpected end/i.test(err.message)) {
    return new DataError(file, { line }, "the file ends before the JSON does: truncated file?");
  }
  return new DataError(file, { line }, `invalid JSON: ${err.message}`);
}

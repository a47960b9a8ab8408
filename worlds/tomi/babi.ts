/**
 * Reads ToMi's bAbI files: `X.txt` (numbered story lines; a question line
 * `N <question>\t<answer>\t<support>` ends each block) and its `X.trace` (one comma-separated
 * line per question: story events, question type, story type). Accepts the original files and
 * the corrected variant (container and agent location sentences). Every problem is a DataError
 * naming the file and line.
 */
import { readFileSync, existsSync } from "node:fs";
import { basename } from "node:path";
import { DataError } from "../core/errors.js";
import { parseQuestion, parseSentence, type TomiQuestion, type TomiSentence } from "./sentences.js";

export const TOMI_QUESTION_TYPES = [
  "first_order_tom",
  "first_order_no_tom",
  "second_order_tom",
  "second_order_no_tom",
  "memory",
  "reality",
] as const;
export type TomiQuestionType = (typeof TOMI_QUESTION_TYPES)[number];

export const TOMI_STORY_TYPES = ["true_belief", "false_belief", "second_order_false_belief"] as const;
export type TomiStoryType = (typeof TOMI_STORY_TYPES)[number];

export interface StoryLine {
  /** The bAbI line number ("1", "2", ...). */
  readonly n: number;
  readonly text: string;
  readonly sentence: TomiSentence;
  /** 1-based line in the file. */
  readonly fileLine: number;
}

export interface TomiTrace {
  readonly events: readonly string[];
  /** As written, with the agent digit ("first_order_0_tom"). */
  readonly rawQuestionType: string;
  readonly questionType: TomiQuestionType;
  readonly storyType: TomiStoryType;
  readonly line: number;
}

export interface TomiItem {
  /** "<file name>#<question index>". */
  readonly id: string;
  /** 0-based position among the file's questions. */
  readonly index: number;
  readonly file: string;
  /** 1-based line of the question in the .txt file. */
  readonly line: number;
  readonly story: readonly StoryLine[];
  readonly question: string;
  readonly parsedQuestion: TomiQuestion;
  readonly answer: string;
  readonly trace?: TomiTrace;
}

export interface TomiFile {
  readonly file: string;
  readonly traceFile?: string;
  readonly items: readonly TomiItem[];
}

/** Reads `path` and, when present, the `.trace` beside it (or `tracePath`). */
export function readTomiFile(path: string, opts: { tracePath?: string | null } = {}): TomiFile {
  if (!existsSync(path)) throw new DataError(path, {}, "file not found");
  const text = readFileSync(path, "utf8");
  let tracePath = opts.tracePath === undefined ? path.replace(/\.txt$/, "") + ".trace" : opts.tracePath;
  if (tracePath !== null && (tracePath === path || !existsSync(tracePath))) {
    if (opts.tracePath) throw new DataError(tracePath, {}, "trace file not found");
    tracePath = null;
  }
  const traceText = tracePath ? readFileSync(tracePath, "utf8") : undefined;
  return parseTomi(text, path, traceText, tracePath ?? undefined);
}

export function parseTomi(text: string, file: string, traceText?: string, traceFile?: string): TomiFile {
  const items: TomiItem[] = [];
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  let story: StoryLine[] = [];
  // Questions of one block share one frozen copy of its story lines.
  let shared: readonly StoryLine[] | undefined;
  let expected = 1;
  const name = basename(file);
  // ToMi repeats each story once per question: parse each distinct sentence once.
  const parsedSentences = new Map<string, TomiSentence | undefined>();
  lines.forEach((raw, i) => {
    const fileLine = i + 1;
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") throw new DataError(file, { line: fileLine }, "empty line inside the file");
    const m = /^(\d+) (.*)$/.exec(line);
    if (!m) throw new DataError(file, { line: fileLine }, `expected "<number> <sentence>", got "${clip(line)}"`);
    const n = Number(m[1]);
    if (n === 1) {
      story = [];
      shared = undefined;
    } else if (n !== expected) {
      throw new DataError(file, { line: fileLine }, `line number ${n} follows ${expected - 1} (expected ${expected} or 1)`);
    }
    expected = n + 1;
    const body = m[2]!;
    if (body.includes("\t") || body.trimEnd().endsWith("?")) {
      const parts = body.split("\t");
      const question = parts[0]!.trim();
      const answer = (parts[1] ?? "").trim();
      if (parts.length < 2 || answer === "") {
        throw new DataError(file, { line: fileLine }, `question without an answer: "${clip(question)}" (expected "<question>\\t<answer>\\t<support>")`);
      }
      const parsed = parseQuestion(question);
      if (!parsed) throw new DataError(file, { line: fileLine }, `unknown question: "${clip(question)}"`);
      if (story.length === 0) throw new DataError(file, { line: fileLine }, "question without a story before it");
      items.push({
        id: `${name}#${items.length}`,
        index: items.length,
        file,
        line: fileLine,
        story: (shared ??= story.slice()),
        question,
        parsedQuestion: parsed,
        answer,
      });
      return;
    }
    let sentence = parsedSentences.get(body);
    if (sentence === undefined && !parsedSentences.has(body)) {
      sentence = parseSentence(body);
      parsedSentences.set(body, sentence);
    }
    if (!sentence) throw new DataError(file, { line: fileLine }, `unknown sentence: "${clip(body)}"`);
    story.push({ n, text: body.trim(), sentence, fileLine });
    shared = undefined;
  });
  const lastItem = items[items.length - 1];
  const lastStory = story[story.length - 1];
  if (lastStory && (!lastItem || lastStory.fileLine > lastItem.line)) {
    throw new DataError(file, { line: lastStory.fileLine }, "the file ends inside a story (no question after this line): truncated file?");
  }
  if (items.length === 0) throw new DataError(file, {}, "no questions found");
  if (traceText === undefined || traceFile === undefined) return { file, items };
  const traces = parseTrace(traceText, traceFile);
  if (traces.length !== items.length) {
    const at = Math.min(traces.length, items.length) + 1;
    throw new DataError(traceFile, { line: at }, `${traces.length} trace lines for ${items.length} questions in ${basename(file)}`);
  }
  return { file, traceFile, items: items.map((item, i) => ({ ...item, trace: traces[i]! })) };
}

function parseTrace(text: string, file: string): TomiTrace[] {
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines.map((raw, i) => {
    const line = i + 1;
    const fields = raw.replace(/\r$/, "").split(",").map((f) => f.trim());
    if (fields.length < 3) throw new DataError(file, { line }, `expected "<events>,<question type>,<story type>", got "${clip(raw)}"`);
    const storyType = fields[fields.length - 1]!;
    const rawQuestionType = fields[fields.length - 2]!;
    if (!(TOMI_STORY_TYPES as readonly string[]).includes(storyType)) {
      throw new DataError(file, { line }, `unknown story type "${storyType}" (expected ${TOMI_STORY_TYPES.join(", ")})`);
    }
    const questionType = mergeQuestionType(rawQuestionType);
    if (!questionType) throw new DataError(file, { line }, `unknown question type "${rawQuestionType}"`);
    return { events: fields.slice(0, -2), rawQuestionType, questionType, storyType: storyType as TomiStoryType, line };
  });
}

/** "first_order_0_tom" -> "first_order_tom" (the agent digit merged). */
export function mergeQuestionType(raw: string): TomiQuestionType | undefined {
  const merged = raw.replace(/^(first_order|second_order)_\d+_/, "$1_");
  return (TOMI_QUESTION_TYPES as readonly string[]).includes(merged) ? (merged as TomiQuestionType) : undefined;
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

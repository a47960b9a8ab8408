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
  // ToMi repeats each story once per question, in consecutive blocks: a block that repeats the
  // previous one reuses its lines (their fileLine then points at the first copy, which reads the same).
  let previous: readonly StoryLine[] = [];
  let expected = 1;
  const name = basename(file);
  const parsedSentences = new Map<string, TomiSentence | undefined>();
  // The file line of the last story sentence read after the last question (a truncated file).
  let dangling = 0;
  for (let i = 0; i < lines.length; i++) {
    const fileLine = i + 1;
    let line = lines[i]!;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const space = line.indexOf(" ");
    const n = space > 0 ? leadingNumber(line, space) : -1;
    if (n < 0) {
      if (line.trim() === "") throw new DataError(file, { line: fileLine }, "empty line inside the file");
      throw new DataError(file, { line: fileLine }, `expected "<number> <sentence>", got "${clip(line)}"`);
    }
    if (n === 1) {
      if (story.length && shared === undefined) previous = story;
      else if (shared) previous = shared;
      story = [];
      shared = undefined;
    } else if (n !== expected) {
      throw new DataError(file, { line: fileLine }, `line number ${n} follows ${expected - 1} (expected ${expected} or 1)`);
    }
    expected = n + 1;
    const body = line.slice(space + 1);
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
      if (shared === undefined) {
        shared = story.length === previous.length && story.every((l, k) => l === previous[k]) ? previous : story.slice();
      }
      items.push({
        id: `${name}#${items.length}`,
        index: items.length,
        file,
        line: fileLine,
        story: shared,
        question,
        parsedQuestion: parsed,
        answer,
      });
      dangling = 0;
      continue;
    }
    dangling = fileLine;
    const again = previous[story.length];
    if (again !== undefined && again.n === n && again.text === body) {
      story.push(again);
      shared = undefined;
      continue;
    }
    let sentence = parsedSentences.get(body);
    if (sentence === undefined && !parsedSentences.has(body)) {
      sentence = parseSentence(body);
      parsedSentences.set(body, sentence);
    }
    if (!sentence) throw new DataError(file, { line: fileLine }, `unknown sentence: "${clip(body)}"`);
    story.push({ n, text: body.trim(), sentence, fileLine });
    shared = undefined;
  }
  if (dangling) throw new DataError(file, { line: dangling }, "the file ends inside a story (no question after this line): truncated file?");
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

/** The number before the first space, or -1 when it is not all digits. */
function leadingNumber(line: string, space: number): number {
  let n = 0;
  for (let i = 0; i < space; i++) {
    const c = line.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

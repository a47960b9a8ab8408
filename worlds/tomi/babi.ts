/**
 * Reads ToMi's bAbI files: `X.txt` (numbered story lines; a question line
 * `N <question>\t<answer>\t<support>` ends each block) and its `X.trace` (one comma-separated
 * line per question: story events, question type, story type). Accepts the original files and
 * the corrected variant (container and agent location sentences). Every problem is a DataError
 * naming the file and line.
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { clip, DataError } from "../core/errors.js";
import type { TomiQuestion, TomiSentence } from "./sentence.js";
import { parseQuestion, parseSentence } from "./sentences.js";
import { readTextInput } from "../core/text-input.js";
import { placeKey } from "../core/place-name.js";

export const TOMI_QUESTION_TYPES = [
  "first_order_tom",
  "first_order_no_tom",
  "second_order_tom",
  "second_order_no_tom",
  "memory",
  "reality",
] as const;
export type TomiQuestionType = (typeof TOMI_QUESTION_TYPES)[number];

/** The longest line a ToMi file may have: sentences are short, and a file of one huge line is something else. */
const MAX_LINE = 64 * 1024;

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
  const { text, tracePath, traceText } = readFiles(path, opts);
  return parseTomi(text, path, traceText, tracePath);
}

function readFiles(path: string, opts: { tracePath?: string | null }): { text: string; tracePath?: string; traceText?: string } {
  const text = readTextInput(path);
  let tracePath = opts.tracePath === undefined ? path.replace(/\.txt$/, "") + ".trace" : opts.tracePath;
  if (tracePath !== null && (tracePath === path || !existsSync(tracePath))) {
    if (opts.tracePath) throw new DataError(tracePath, {}, "trace file not found");
    tracePath = null;
  }
  return tracePath ? { text, tracePath, traceText: readTextInput(tracePath) } : { text };
}

export function parseTomi(text: string, file: string, traceText?: string, traceFile?: string): TomiFile {
  const reading = startReading(text, file, traceText, traceFile);
  const { reader } = reading;
  // Lines are cut out of the text one at a time (no array of every line up front: at 40,000
  // lines, that array and its strings were most of the reading's garbage).
  for (let start = 0; start < text.length; ) start = reader.line(start);
  return reading.finish();
}

/**
 * parseTomi a slice at a time, giving the event loop back between slices of about `sliceMs`: a
 * server reading a large set (a room's 10,000 generated questions take a few hundred
 * milliseconds) keeps its rooms' timesteps on time meanwhile. The same items, the same errors.
 */
export async function parseTomiInSlices(text: string, file: string, traceText?: string, traceFile?: string, sliceMs = 10): Promise<TomiFile> {
  // The trace a slice at a time too (the slices only read: its errors are raised in order below).
  let traces: readonly TomiTrace[] | undefined;
  let traceError: unknown;
  if (traceText !== undefined && traceFile !== undefined) {
    const t = new TraceReader(traceText, traceFile);
    try {
      for (let i = 0; i < t.lines.length; ) {
        const until = performance.now() + sliceMs;
        for (; i < t.lines.length && ((i & 63) !== 63 || performance.now() < until); i++) t.line(i);
        await nextTurn();
      }
      traces = t.out;
    } catch (err) {
      traceError = err;
    }
  }
  const reading = startReading(text, file, traceText, traceFile, () => {
    if (traceError !== undefined) throw traceError;
    return traces!;
  });
  const { reader } = reading;
  for (let start = 0; start < text.length; ) {
    const until = performance.now() + sliceMs;
    for (let n = 0; start < text.length; n++) {
      start = reader.line(start);
      if ((n & 63) === 63 && performance.now() >= until) break;
    }
    await nextTurn();
  }
  return reading.finish();
}

/** Gives the event loop back (what is waiting runs) before going on. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** readTomiFile, parsed in slices (parseTomiInSlices). */
export function readTomiFileInSlices(path: string): Promise<TomiFile> {
  const { text, tracePath, traceText } = readFiles(path, {});
  return parseTomiInSlices(text, path, traceText, tracePath);
}

/** A file being read: its reader, and the checks made once every line is read. */
function startReading(
  text: string,
  file: string,
  traceText?: string,
  traceFile?: string,
  read: (text: string, file: string) => readonly TomiTrace[] = parseTrace,
): { reader: BabiReader; finish(): TomiFile } {
  // The trace is read first so that each item is made whole; its errors wait until the text has
  // been checked (what is wrong with the text is said first).
  let traces: readonly TomiTrace[] = [];
  let traceError: unknown;
  if (traceText !== undefined && traceFile !== undefined) {
    try {
      traces = read(traceText, traceFile);
    } catch (err) {
      traceError = err;
    }
  }
  const reader = new BabiReader(text, file, traces);
  return { reader, finish: () => finishReading(reader, file, traces, traceText, traceFile, traceError) };
}

function finishReading(reader: BabiReader, file: string, traces: readonly TomiTrace[], traceText: string | undefined, traceFile: string | undefined, traceError: unknown): TomiFile {
  const { items } = reader;
  if (reader.dangling) throw new DataError(file, { line: reader.dangling }, "the file ends inside a story (no question after this line): truncated file?");
  if (items.length === 0) throw new DataError(file, {}, "no questions found");
  if (traceText === undefined || traceFile === undefined) return { file, items };
  if (traceError !== undefined) throw traceError;
  if (traces.length !== items.length) {
    const at = Math.min(traces.length, items.length) + 1;
    throw new DataError(traceFile, { line: at }, `${traces.length} trace lines for ${items.length} questions in ${basename(file)}`);
  }
  // Each trace line types its question: a line moved, repeated or edited would count the question
  // under another kind's row. (Whether it is a "tom" question only the story decides; that stays the trace's.)
  for (const item of items) {
    const t = item.trace!;
    const kind = kindOfType(t.questionType);
    if (kind !== item.parsedQuestion.kind) {
      throw new DataError(
        traceFile,
        { line: t.line },
        `question type "${t.rawQuestionType}", but ${basename(file)}:${item.line} asks "${clip(item.question)}" (a ${item.parsedQuestion.kind.replace("_", "-")} question)`,
      );
    }
  }
  return { file, traceFile, items };
}

/** The state of reading one bAbI file, a line at a time. */
class BabiReader {
  readonly items: TomiItem[] = [];
  /** The file line of the last story sentence read after the last question (a truncated file). */
  dangling = 0;
  private story: StoryLine[] = [];
  /** Questions of one block share one frozen copy of its story lines. */
  private shared: readonly StoryLine[] | undefined;
  /** The names the story of the last question uses, and that story. */
  private named: StoryNames | undefined;
  private namedFor: readonly StoryLine[] | undefined;
  /**
   * ToMi repeats each story once per question, in consecutive blocks: a block that repeats the
   * previous one reuses its lines (their fileLine then points at the first copy, which reads the same).
   */
  private previous: readonly StoryLine[] = [];
  private expected = 1;
  private fileLine = 0;
  /**
   * The story lines of the last block whose first question ended them, and their text: a block
   * that repeats it word for word is taken whole (ToMi writes each story once per question, so
   * five blocks in six are repeats) instead of line by line.
   */
  private spanLines: readonly StoryLine[] | undefined;
  private spanText = "";
  private blockStart = 0;
  private blockAsked = false;
  /** "<file name>#", the start of every item id (one string, not one more per id). */
  private readonly idPrefix: string;
  /** Each distinct question, read once, with the first line's string for it (which every item asking it keeps). */
  private readonly parsedQuestions = new Map<string, { readonly text: string; readonly parsed: TomiQuestion | undefined }>();

  constructor(
    private readonly text: string,
    private readonly file: string,
    private readonly traces: readonly TomiTrace[],
  ) {
    this.idPrefix = `${basename(file)}#`;
  }

  /** Reads the line (or the repeated block) that starts at `from`; returns where the next one starts. */
  line(from: number): number {
    const { text, file } = this;
    let end = text.indexOf("\n", from);
    if (end < 0) end = text.length;
    if (end - from > MAX_LINE) throw new DataError(file, { line: this.fileLine + 1 }, `a line of ${end - from} characters (a ToMi line is one sentence or question, at most ${MAX_LINE}): not a ToMi file?`);
    let stop = end;
    if (stop > from && text.charCodeAt(stop - 1) === 13) stop--;
    const fileLine = ++this.fileLine;
    const space = text.indexOf(" ", from);
    const n = space > from && space < stop ? leadingNumber(text, from, space) : -1;
    if (n < 0) {
      const line = text.slice(from, stop);
      if (line.trim() === "") throw new DataError(file, { line: fileLine }, "empty line inside the file");
      throw new DataError(file, { line: fileLine }, `expected "<number> <sentence>", got "${clip(line)}"`);
    }
    if (n === 1) {
      // Each story ends with its question: story lines after the last question, then a new story,
      // mean a question line was lost (the end of the file says the same of the last story).
      if (this.dangling) {
        throw new DataError(file, { line: this.dangling }, `the story ends without a question (line ${fileLine} starts a new story): a question line missing?`);
      }
      if (this.story.length && this.shared === undefined) this.previous = this.story;
      else if (this.shared) this.previous = this.shared;
      this.story = [];
      this.shared = undefined;
      this.blockStart = from;
      this.blockAsked = false;
      const previous = this.previous;
      if (previous === this.spanLines && textAt(text, from, this.spanText)) {
        this.story = previous.slice();
        this.fileLine += previous.length - 1;
        this.expected = previous[previous.length - 1]!.n + 1;
        this.dangling = this.fileLine;
        return from + this.spanText.length;
      }
    } else if (n !== this.expected) {
      throw new DataError(file, { line: fileLine }, `line number ${n} follows ${this.expected - 1} (expected ${this.expected} or 1)`);
    }
    this.expected = n + 1;
    // A story line that repeats the previous block's is recognized in place, without a copy.
    const story = this.story;
    const again = this.previous[story.length];
    const bodyLength = stop - space - 1;
    if (again !== undefined && again.n === n && again.text.length === bodyLength && textAt(text, space + 1, again.text)) {
      story.push(again);
      this.shared = undefined;
      this.dangling = fileLine;
      return end + 1;
    }
    const body = text.slice(space + 1, stop);
    if (body.includes("\t") || body.trimEnd().endsWith("?")) {
      this.question(body, from, fileLine);
      return end + 1;
    }
    this.dangling = fileLine;
    const sentence = parseSentence(body);
    if (!sentence) throw new DataError(file, { line: fileLine }, `unknown sentence: "${clip(body)}"`);
    story.push({ n, text: body.trim(), sentence, fileLine });
    this.shared = undefined;
    return end + 1;
  }

  /** A question line ("<question>\t<answer>\t<support>"): the item that asks it about the story so far. */
  private question(body: string, from: number, fileLine: number): void {
    const { file, story, previous } = this;
    const tab = body.indexOf("\t");
    const asked = (tab < 0 ? body : body.slice(0, tab)).trim();
    const next = tab < 0 ? -1 : body.indexOf("\t", tab + 1);
    const answer = tab < 0 ? "" : (next < 0 ? body.slice(tab + 1) : body.slice(tab + 1, next)).trim();
    if (tab < 0 || answer === "") {
      throw new DataError(file, { line: fileLine }, `question without an answer: "${clip(asked)}" (expected "<question>\\t<answer>\\t<support>")`);
    }
    let known = this.parsedQuestions.get(asked);
    if (known === undefined) {
      known = { text: asked, parsed: parseQuestion(asked) };
      this.parsedQuestions.set(asked, known);
    }
    const { text: question, parsed } = known;
    if (!parsed) throw new DataError(file, { line: fileLine }, `unknown question: "${clip(question)}"`);
    if (story.length === 0) throw new DataError(file, { line: fileLine }, "question without a story before it");
    let shared = this.shared;
    if (shared === undefined) {
      shared = sameLines(story, previous) ? previous : story.slice();
      this.shared = shared;
    }
    // What the question asks about and its answer must be of the story: an answer cut short (a
    // truncated file) or garbled would otherwise be scored against.
    if (this.namedFor !== shared) {
      this.named = namesOf(shared);
      this.namedFor = shared;
    }
    const named = this.named!;
    if (!named.objects.has(parsed.object)) throw new DataError(file, { line: fileLine }, `the story never mentions the ${clip(parsed.object)}`);
    if (parsed.kind === "first_order" || parsed.kind === "second_order") {
      if (!named.agents.has(parsed.agent)) throw new DataError(file, { line: fileLine }, `the story never mentions ${clip(parsed.agent)}`);
      if (parsed.kind === "second_order" && !named.agents.has(parsed.other)) throw new DataError(file, { line: fileLine }, `the story never mentions ${clip(parsed.other)}`);
    }
    // The common case, the answer written as the story writes it, needs no normalizing.
    if (!named.places.has(answer) && !anyPlace(named.places, placeKey(answer))) {
      throw new DataError(file, { line: fileLine }, `answer "${clip(answer)}" is not a container of the story`);
    }
    if (!this.blockAsked) {
      this.spanLines = shared;
      this.spanText = this.text.slice(this.blockStart, from);
      this.blockAsked = true;
    }
    const items = this.items;
    items.push({
      id: this.idPrefix + items.length,
      index: items.length,
      file,
      line: fileLine,
      story: shared,
      question,
      parsedQuestion: parsed,
      answer,
      trace: this.traces[items.length],
    });
    this.dangling = 0;
  }
}

interface StoryNames {
  readonly agents: ReadonlySet<string>;
  readonly objects: ReadonlySet<string>;
  /** Where an answer may point (containers, and what "The A is in the B." names), as the story writes them. */
  readonly places: ReadonlySet<string>;
}

/** The same line objects, in the same order (a block read as a repeat of the one before). */
function sameLines(a: readonly StoryLine[], b: readonly StoryLine[]): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

function anyPlace(places: ReadonlySet<string>, key: string): boolean {
  for (const p of places) if (placeKey(p) === key) return true;
  return false;
}

/** The names a story uses (once per story: its questions share one array of lines). */
function namesOf(story: readonly StoryLine[]): StoryNames {
  const agents = new Set<string>();
  const objects = new Set<string>();
  const places = new Set<string>();
  const rooms = new Set<string>();
  for (const { sentence: s } of story) {
    switch (s.kind) {
      case "enter":
      case "exit":
        agents.add(s.agent);
        rooms.add(s.room);
        break;
      case "remark":
        agents.add(s.agent);
        break;
      case "agents_at":
        for (const a of s.agents) agents.add(a);
        rooms.add(s.room);
        break;
      case "move":
        agents.add(s.agent);
        objects.add(s.object);
        places.add(s.container);
        break;
    }
  }
  // "The A is in the B.": a container in a room when B is a room of the story and A is no object it
  // moves (as buildScenario reads it), else an object in a container.
  for (const { sentence: s } of story) {
    if (s.kind !== "located") continue;
    if (rooms.has(s.place) && !objects.has(s.subject)) places.add(s.subject);
    else {
      objects.add(s.subject);
      places.add(s.place);
    }
  }
  return { agents, objects, places };
}

function parseTrace(text: string, file: string): TomiTrace[] {
  const reader = new TraceReader(text, file);
  for (let i = 0; i < reader.lines.length; i++) reader.line(i);
  return reader.out;
}

/** The state of reading a .trace file, a line at a time. */
class TraceReader {
  readonly lines: string[];
  readonly out: TomiTrace[] = [];
  // The six questions of a story differ only in their question type: its events are read once.
  private lastEvents = "";
  private events: readonly string[] = [];
  // A file has a dozen distinct question types over thousands of lines: each is merged once, and
  // every line keeps the first line's string for its type (the items live for the whole run, and
  // each string cut out of the file is one more object for the garbage collector to copy).
  private readonly merged = new Map<string, { readonly raw: string; readonly type: TomiQuestionType | undefined }>();

  constructor(
    text: string,
    private readonly file: string,
  ) {
    this.lines = text.split("\n");
    if (this.lines.length && this.lines[this.lines.length - 1] === "") this.lines.pop();
  }

  line(i: number): void {
    const { file } = this;
    const line = i + 1;
    let raw = this.lines[i]!;
    if (raw.endsWith("\r")) raw = raw.slice(0, -1);
    const last = raw.lastIndexOf(",");
    const before = last > 0 ? raw.lastIndexOf(",", last - 1) : -1;
    if (before < 0) throw new DataError(file, { line }, `expected "<events>,<question type>,<story type>", got "${clip(raw)}"`);
    const storyTypeText = raw.slice(last + 1).trim();
    const typeIndex = (TOMI_STORY_TYPES as readonly string[]).indexOf(storyTypeText);
    if (typeIndex < 0) {
      throw new DataError(file, { line }, `unknown story type "${storyTypeText}" (expected ${TOMI_STORY_TYPES.join(", ")})`);
    }
    const storyType = TOMI_STORY_TYPES[typeIndex]!;
    const rawText = raw.slice(before + 1, last).trim();
    let known = this.merged.get(rawText);
    if (known === undefined) {
      known = { raw: rawText, type: mergeQuestionType(rawText) };
      this.merged.set(rawText, known);
    }
    const rawQuestionType = known.raw;
    const questionType = known.type;
    if (!questionType) throw new DataError(file, { line }, `unknown question type "${rawQuestionType}"`);
    const eventText = raw.slice(0, before);
    if (eventText !== this.lastEvents || i === 0) {
      this.events = eventText.split(",").map((f) => f.trim());
      this.lastEvents = eventText;
    }
    this.out.push({ events: this.events, rawQuestionType, questionType, storyType, line });
  }
}

/** The question kind a (merged) question type belongs to. */
function kindOfType(t: TomiQuestionType): TomiQuestion["kind"] {
  return t.startsWith("first_order") ? "first_order" : t.startsWith("second_order") ? "second_order" : (t as "memory" | "reality");
}

/** "first_order_0_tom" -> "first_order_tom" (the agent digit merged). */
export function mergeQuestionType(raw: string): TomiQuestionType | undefined {
  const merged = raw.replace(/^(first_order|second_order)_\d+_/, "$1_");
  return (TOMI_QUESTION_TYPES as readonly string[]).includes(merged) ? (merged as TomiQuestionType) : undefined;
}

/** The number in text[from, space), or -1 when it is not all digits. */
function leadingNumber(text: string, from: number, space: number): number {
  let n = 0;
  for (let i = from; i < space; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * Whether `text` holds `part` at `at`. A slice compared with `===` is one memory comparison, where
 * `startsWith` compares a character at a time: a file repeats each story for each of its questions.
 */
function textAt(text: string, at: number, part: string): boolean {
  return text.slice(at, at + part.length) === part;
}

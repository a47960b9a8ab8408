/**
 * How much of an evaluation file's wording a training file already holds: for each kind of ToMi
 * sentence (as the reader reads it), the share of the evaluation file's distinct sentences whose
 * wording (the sentence with its names taken out: "_ walked into the _.") is one the training file
 * has, and the share whose every word is one the training file has. Per question, the same of its
 * whole story. A policy from scratch with a word tokenizer reads a word it never trained on as
 * pieces it never saw in that place; this says how much of ParaphrasedToMi is that, for a
 * training file in ToMi's wording and for one in other words (`demo:learn --reword`).
 *
 *   node dist/measurements/wording-coverage.js --train OUT/train.txt [--eval FILE]
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { DataError } from "../worlds/core/errors.js";
import { escapeRegExp } from "../worlds/core/escape-reg-exp.js";
import { readTextInput } from "../worlds/core/text-input.js";
import { parseSentence, type TomiSentence } from "../worlds/tomi/index.js";
import { scriptArgs } from "./script-args.js";
import { tomDataPath } from "./tom-data.js";

const USAGE = `node dist/measurements/wording-coverage.js --train FILE [--eval FILE]

Prints how much of an evaluation file's wording (by sentence kind) a ToMi training file holds.

Options:
  --train FILE   the training file (ToMi's format: what demo:learn writes as OUT/train.txt)
  --eval FILE    the evaluation file (default: the shared ParaphrasedToMi val_600.txt)
  --help         this text`;

const values = scriptArgs({
  name: "wording-coverage",
  usage: USAGE,
  schema: z.object({
    train: z.string(),
    eval: z.string().optional(),
  }),
});

interface Question {
  /** The story's sentences, without their numbers. */
  readonly story: readonly string[];
  readonly question: string;
}

/** The file's questions, each with its story (ToMi's format: numbered lines, a question line with tabs). */
function questions(file: string): Question[] {
  const out: Question[] = [];
  let story: string[] = [];
  readTextInput(file)
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      const m = /^(\d+) (.*)$/.exec(line);
      if (!m) throw new DataError(file, { line: i + 1 }, "not a numbered line");
      if (m[1] === "1") story = [];
      if (m[2]!.includes("\t")) out.push({ story: [...story], question: m[2]!.split("\t")[0]! });
      else story.push(m[2]!);
    });
  // An empty table would read as a measurement of nothing.
  if (out.length === 0) throw new DataError(file, {}, 'no questions (ToMi\'s format: a story\'s numbered lines, then a question line "N question<TAB>answer<TAB>1")');
  return out;
}

function words(text: string): string[] {
  return text.toLowerCase().replace(/[.,?]/g, " ").split(/\s+/).filter((w) => w !== "");
}

/** The sentence with the names it reads taken out ("_ walked into the _."), and articles as one. */
function shape(text: string, s: TomiSentence): string {
  const names = Object.entries(s)
    .filter(([key, v]) => key !== "kind" && key !== "verb" && typeof v === "string")
    .map(([, v]) => v as string);
  if (s.kind === "agents_at") names.push(...s.agents);
  let out = ` ${text} `;
  for (const n of names.sort((x, y) => y.length - x.length)) {
    for (const written of [n, n.replace(/_/g, " ")]) out = out.replace(new RegExp(`(?<=[\\s'])${escapeRegExp(written)}(?=[\\s.,'])`, "gi"), "_");
  }
  return out.trim().replace(/\b(an|a)\b/gi, "a");
}

const trainFile = resolve(values.train);
const evalFile = resolve(values.eval ?? tomDataPath("tomi", "paraphrased_symbolictom", "val_600.txt"));
for (const f of [trainFile, evalFile]) {
  if (!existsSync(f)) {
    process.stderr.write(`wording-coverage: ${f} not found\n`);
    process.exit(2);
  }
}

/** The file's questions, or the script stops with the line that is not ToMi's format. */
function read(file: string): Question[] {
  try {
    return questions(file);
  } catch (e) {
    if (!(e instanceof DataError)) throw e;
    process.stderr.write(`wording-coverage: ${e.message}\n`);
    process.exit(2);
  }
}

const train = read(trainFile);
const trainWords = new Set<string>();
const trainShapes = new Set<string>();
for (const q of train) {
  for (const text of [...q.story, q.question]) for (const w of words(text)) trainWords.add(w);
}
for (const text of new Set(train.flatMap((q) => q.story))) {
  const s = parseSentence(text);
  if (s) trainShapes.add(shape(text, s));
}

const evaluated = read(evalFile);
const knownWords = (text: string) => words(text).every((w) => trainWords.has(w));
// Each distinct sentence read and judged once: a ToMi file repeats its story for every question.
const judged = new Map<string, { kind: string; worded: boolean; known: boolean }>();
for (const text of new Set(evaluated.flatMap((q) => q.story))) {
  const s = parseSentence(text);
  judged.set(text, { kind: s?.kind ?? "unread", worded: s !== undefined && trainShapes.has(shape(text, s)), known: knownWords(text) });
}
const byKind = new Map<string, { sentences: number; shapes: number; words: number }>();
for (const { kind, worded, known } of judged.values()) {
  const row = byKind.get(kind) ?? { sentences: 0, shapes: 0, words: 0 };
  row.sentences++;
  if (worded) row.shapes++;
  if (known) row.words++;
  byKind.set(kind, row);
}

const pct = (n: number, d: number) => (d === 0 ? "-" : `${((100 * n) / d).toFixed(1)}%`);
const lines = [
  `${evalFile}, against the training file ${trainFile} (${train.length} questions, ${trainWords.size} words, ${trainShapes.size} wordings):`,
  "",
  "| sentence kind | distinct sentences | its wording in training | every word in training |",
  "|:--|--:|--:|--:|",
];
let all = { sentences: 0, shapes: 0, words: 0 };
for (const [kind, row] of [...byKind].sort((x, y) => y[1].sentences - x[1].sentences)) {
  lines.push(`| ${kind} | ${row.sentences} | ${pct(row.shapes, row.sentences)} | ${pct(row.words, row.sentences)} |`);
  all = { sentences: all.sentences + row.sentences, shapes: all.shapes + row.shapes, words: all.words + row.words };
}
lines.push(`| **all** | ${all.sentences} | ${pct(all.shapes, all.sentences)} | ${pct(all.words, all.sentences)} |`);

let storiesKnown = 0;
let storiesWorded = 0;
for (const q of evaluated) {
  if (q.story.every((text) => judged.get(text)!.known) && knownWords(q.question)) storiesKnown++;
  if (q.story.every((text) => judged.get(text)!.worded)) storiesWorded++;
}
lines.push(
  "",
  `Questions: ${evaluated.length}; every sentence of the story in a wording the training file has: ${storiesWorded} (${pct(storiesWorded, evaluated.length)}); every word of the story and question in the training file: ${storiesKnown} (${pct(storiesKnown, evaluated.length)}).`,
);
process.stdout.write(lines.join("\n") + "\n");

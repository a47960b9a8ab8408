/**
 * Reads Hi-ToM's upstream data file (`Hi-ToM_data.json`): `{"data": [entry, ...]}`, each entry
 * one question in one prompting style (CoTP, or VP whose story starts with an instruction line).
 * The shape is checked with zod, then every entry's story, question and choices are read with the
 * story grammar and checked against each other. Every problem is a DataError naming the file and
 * the field (`data[12].question_order`) or the story line (`data[12].story line 4`).
 */
import { basename } from "node:path";
import { z } from "zod";
import { clip, DataError } from "../core/errors.js";
import { orderOf } from "./questions.js";
import { parseChoices, parseQuestion, type HitomQuestion } from "./sentences.js";
import { buildHitomScenario, locateIn, parseStoryText, type HitomScenario, type StoryText } from "./story.js";
import { readTextInput } from "../core/text-input.js";

export const HITOM_PROMPTING_TYPES = ["CoTP", "VP"] as const;
export type HitomPromptingType = (typeof HITOM_PROMPTING_TYPES)[number];

export const HitomEntrySchema = z.strictObject({
  prompting_type: z.enum(HITOM_PROMPTING_TYPES).describe("CoTP (chain-of-thought prompting) or VP (vanilla prompting)."),
  deception: z.boolean().describe("Whether the story has claims (agents may lie)."),
  story_length: z.number().int().min(1).describe("The number of chapters."),
  question_order: z.number().int().min(0).max(4).describe("0: reality; k: k nested agents."),
  sample_id: z.number().int().min(0),
  story: z.string().min(1).describe('Numbered sentences, "1 ...\\n2 ..."; VP stories start with an instruction line.'),
  question: z.string().min(1),
  choices: z.string().min(1).describe('"A. <option>, B. <option>, ..."'),
  answer: z.string().min(1).describe("The option text (not the letter) of the right choice."),
});
export type HitomEntry = z.infer<typeof HitomEntrySchema>;

export const HitomFileSchema = z.strictObject({ data: z.array(HitomEntrySchema).min(1, "no entries") });

export interface HitomStory {
  readonly text: StoryText;
  /** The numbered sentences without the instruction line: the same story in both prompting styles. */
  readonly body: string;
  readonly scenario: HitomScenario;
}

export interface HitomItem {
  /** "<file name>#<index>". */
  readonly id: string;
  /** 0-based position in `data`. */
  readonly index: number;
  readonly file: string;
  /** "data[12]". */
  readonly field: string;
  readonly entry: HitomEntry;
  readonly story: HitomStory;
  readonly question: HitomQuestion;
  /** Option texts, in letter order. */
  readonly choices: readonly string[];
}

export function readHitomFile(path: string): HitomItem[] {
  return parseHitom(readTextInput(path), path);
}

export function parseHitom(text: string, file: string): HitomItem[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new DataError(file, { line: jsonErrorLine(text, err) }, `invalid JSON: ${(err as Error).message}`);
  }
  const parsed = HitomFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = fieldName(issue.path);
    if (field !== "") throw new DataError(file, { field }, issue.message);
    const isObject = typeof json === "object" && json !== null && !Array.isArray(json);
    throw new DataError(file, { field: "top level" }, isObject ? issue.message : `expected an object with a "data" array of questions, got ${Array.isArray(json) ? "an array" : json === null ? "null" : typeof json}`);
  }
  const name = basename(file);
  // Each story is repeated for its questions and prompting styles: read each distinct one once.
  const stories = new Map<string, HitomStory>();
  return parsed.data.data.map((entry, index): HitomItem => {
    const field = `data[${index}]`;
    const at = (f: string, message: string) => new DataError(file, { field: `${field}.${f}` }, message);
    const choices = parseChoices(entry.choices);
    if (!choices) throw at("choices", `expected "A. <option>, B. <option>, ..." with one-word options (places as the story writes them), got "${clip(entry.choices)}"`);
    if (new Set(choices).size !== choices.length) throw at("choices", "an option is listed twice");
    if (!choices.includes(entry.answer)) throw at("answer", `"${clip(entry.answer)}" is not one of the choices`);
    const question = parseQuestion(entry.question);
    if (!question) throw at("question", `unknown question: "${clip(entry.question)}"`);
    if (orderOf(question) !== entry.question_order) {
      throw at("question_order", `${entry.question_order}, but "${clip(entry.question)}" is of order ${orderOf(question)}`);
    }
    let story = stories.get(entry.story);
    if (!story) {
      const locate = locateIn(file, `${field}.story`);
      const storyText = parseStoryText(entry.story, locate);
      const body = storyText.sentences.map((s, i) => `${i + 1} ${s.text}`).join("\n");
      story = { text: storyText, body, scenario: buildHitomScenario(storyText.sentences, locate) };
      stories.set(entry.story, story);
    }
    // The splits are read from these two fields: they must describe the story (a chapter ends with
    // its group entering the waiting_room; deception stories have claims, others none).
    const sentences = story.text.sentences;
    const chapters = sentences.filter(({ sentence: s }) => s.kind === "enter" && s.room === "waiting_room").length;
    if (chapters !== entry.story_length) {
      throw at("story_length", `${entry.story_length}, but the story has ${chapters} chapter${chapters === 1 ? "" : "s"} (groups entering the waiting_room)`);
    }
    const claim = sentences.find(({ sentence: s }) => s.kind === "public_claim" || s.kind === "private_claim");
    if (entry.deception && !claim) throw at("deception", "true, but the story has no claims");
    if (!entry.deception && claim) throw at("deception", `false, but the story has a claim (story line ${claim.line})`);
    const instruction = story.text.instruction;
    if (entry.prompting_type === "VP" && instruction === undefined) throw at("story", "a VP story starts with an instruction line");
    if (entry.prompting_type === "CoTP" && instruction !== undefined) throw at("story", `a CoTP story has no instruction line, got "${clip(instruction)}"`);
    const { agents, layout } = story.scenario.init;
    if (!layout.objects.includes(question.object)) throw at("question", `the story never mentions the ${clip(question.object)}`);
    for (const a of question.agents) if (!agents.includes(a)) throw at("question", `the story never mentions ${clip(a)}`);
    if (new Set(question.agents).size !== question.agents.length) throw at("question", `an agent appears twice: "${clip(entry.question)}"`);
    return { id: `${name}#${index}`, index, file, field, entry, story, question, choices };
  });
}

/** zod's path as the reader's field names: ["data", 12, "question_order"] -> "data[12].question_order". */
function fieldName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  return out;
}

/** The 1-based line of a JSON.parse error (its position when given; the last line when the text ends early). */
function jsonErrorLine(text: string, err: unknown): number {
  const m = /position (\d+)/.exec(String((err as Error | undefined)?.message ?? ""));
  const pos = m ? Math.min(Number(m[1]), text.length) : text.length;
  let line = 1;
  for (let i = 0; i < pos; i++) if (text.charCodeAt(i) === 10) line++;
  if (!m && text.endsWith("\n")) line--;
  return Math.max(1, line);
}

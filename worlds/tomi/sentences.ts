/**
 * The sentence grammar of ToMi stories: the original generator's templates, plus the sentences
 * the corrected ToMi adds ("The box is in the hallway.", "Oliver is in the attic."). One grammar
 * both reads stories and writes them, so generated files round-trip through the reader.
 */
import { parseParaphrase } from "./paraphrase.js";
import type { TomiQuestion, TomiSentence } from "./sentence.js";

const NAME = "([A-Z][A-Za-z'-]*)";
const NOUN = "([A-Za-z0-9][A-Za-z0-9_'-]*)";

const PATTERNS: readonly [RegExp, (m: RegExpExecArray) => TomiSentence][] = [
  [new RegExp(`^${NAME} entered the ${NOUN}\\.$`), (m) => ({ kind: "enter", agent: m[1]!, room: m[2]! })],
  [
    new RegExp(`^${NAME} (?:exited|left|went out of) the ${NOUN}\\.$`),
    (m) => ({ kind: "exit", agent: m[1]!, room: m[2]! }),
  ],
  [
    new RegExp(`^${NAME} moved the ${NOUN} to the ${NOUN}\\.$`),
    (m) => ({ kind: "move", agent: m[1]!, object: m[2]!, container: m[3]! }),
  ],
  [new RegExp(`^The ${NOUN} is in the ${NOUN}\\.$`), (m) => ({ kind: "located", subject: m[1]!, place: m[2]! })],
  [new RegExp(`^${NAME} is in the ${NOUN}\\.$`), (m) => ({ kind: "agents_at", agents: [m[1]!], room: m[2]! })],
  [
    new RegExp(`^${NAME} and ${NAME} are in the ${NOUN}\\.$`),
    (m) => ({ kind: "agents_at", agents: [m[1]!, m[2]!], room: m[3]! }),
  ],
  [
    new RegExp(`^${NAME} (likes|dislikes|loves|hates) the ${NOUN}(\\.?)$`),
    (m) => ({ kind: "remark", agent: m[1]!, verb: m[2]!, thing: m[3]!, period: m[4] === "." }),
  ],
];

const QUESTIONS: readonly [RegExp, (m: RegExpExecArray) => TomiQuestion][] = [
  [new RegExp(`^Where will ${NAME} look for the ${NOUN}\\?$`), (m) => ({ kind: "first_order", agent: m[1]!, object: m[2]! })],
  [
    new RegExp(`^Where does ${NAME} think that ${NAME} searches for the ${NOUN}\\?$`),
    (m) => ({ kind: "second_order", agent: m[1]!, other: m[2]!, object: m[3]! }),
  ],
  [new RegExp(`^Where is the ${NOUN} really\\?$`), (m) => ({ kind: "reality", object: m[1]! })],
  [new RegExp(`^Where was the ${NOUN} at the beginning\\?$`), (m) => ({ kind: "memory", object: m[1]! })],
];

/**
 * The sentence, or undefined when it is neither ToMi's grammar nor a rewording we can read with
 * confidence (ParaphrasedToMi, see paraphrase.ts). The grammar goes first, so ToMi reads as it always did.
 */
export function parseSentence(text: string): TomiSentence | undefined {
  return readOnce(sentencesRead, text, readSentence);
}

export function parseQuestion(text: string): TomiQuestion | undefined {
  return readOnce(questionsRead, text, readQuestion);
}

// Texts already read (null: not the grammar's). A file's reader and the simulation agent reading
// its stories back meet the same few thousand sentences and questions thousands of times; both
// parsers are pure, so one memo serves every caller. Bounded: cleared past 50,000 texts.
const sentencesRead = new Map<string, TomiSentence | null>();
const questionsRead = new Map<string, TomiQuestion | null>();

function readOnce<T>(memo: Map<string, T | null>, text: string, read: (text: string) => T | undefined): T | undefined {
  let known = memo.get(text);
  if (known === undefined) {
    known = read(text) ?? null;
    if (memo.size >= 50_000) memo.clear();
    memo.set(text, known);
  }
  return known ?? undefined;
}

function readSentence(text: string): TomiSentence | undefined {
  const s = text.trim();
  for (const [re, build] of PATTERNS) {
    const m = re.exec(s);
    if (m) return build(m);
  }
  return parseParaphrase(s);
}

function readQuestion(text: string): TomiQuestion | undefined {
  const s = text.trim();
  for (const [re, build] of QUESTIONS) {
    const m = re.exec(s);
    if (m) return build(m);
  }
  return undefined;
}

export function renderSentence(s: TomiSentence): string {
  switch (s.kind) {
    case "enter":
      return `${s.agent} entered the ${s.room}.`;
    case "exit":
      return `${s.agent} exited the ${s.room}.`;
    case "move":
      return `${s.agent} moved the ${s.object} to the ${s.container}.`;
    case "located":
      return `The ${s.subject} is in the ${s.place}.`;
    case "agents_at":
      return s.agents.length === 1
        ? `${s.agents[0]} is in the ${s.room}.`
        : `${s.agents.slice(0, -1).join(", ")} and ${s.agents[s.agents.length - 1]} are in the ${s.room}.`;
    case "remark":
      return `${s.agent} ${s.verb} the ${s.thing}${s.period ? "." : ""}`;
  }
}

export function renderQuestion(q: TomiQuestion): string {
  switch (q.kind) {
    case "first_order":
      return `Where will ${q.agent} look for the ${q.object}?`;
    case "second_order":
      return `Where does ${q.agent} think that ${q.other} searches for the ${q.object}?`;
    case "reality":
      return `Where is the ${q.object} really?`;
    case "memory":
      return `Where was the ${q.object} at the beginning?`;
  }
}

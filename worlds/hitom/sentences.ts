/**
 * The sentence grammar of Hi-ToM stories (the upstream generator's templates) and of the Hi-ToM
 * world's own event texts. One grammar reads stories, writes generated ones, and lets the
 * simulation agent read back what a character perceived, so all three agree by construction.
 */

export type RemarkVerb = "saw" | "lost" | "likes" | "dislikes";

export type HitomSentence =
  /** "A, B and C entered the attic." */
  | { readonly kind: "enter"; readonly agents: readonly string[]; readonly room: string }
  /** "A exited the attic." (the world also writes group exits: "A and B exited the waiting_room.") */
  | { readonly kind: "exit"; readonly agents: readonly string[]; readonly room: string }
  | { readonly kind: "located"; readonly object: string; readonly container: string }
  | { readonly kind: "move"; readonly agent: string; readonly object: string; readonly container: string }
  /** "A made no movements and stayed in the attic for 1 minute." */
  | { readonly kind: "stay"; readonly agent: string; readonly room: string }
  /** "A publicly claimed that onion is in the red_box." (upstream writes no article here) */
  | { readonly kind: "public_claim"; readonly agent: string; readonly object: string; readonly container: string }
  | { readonly kind: "private_claim"; readonly agent: string; readonly listener: string; readonly object: string; readonly container: string }
  /** Distractors: "A saw a cat.", "A lost his watch.", "A likes the red_box.", "A dislikes the onion." */
  | { readonly kind: "remark"; readonly agent: string; readonly verb: RemarkVerb; readonly thing: string };

/** "Where is the X really?" is order 0 (no agents); order k asks about k nested agents. */
export interface HitomQuestion {
  readonly agents: readonly string[];
  readonly object: string;
}

const NAME = "[A-Z][A-Za-z'-]*";
const N = `(${NAME})`;
const NAMES = `(${NAME}(?:, ${NAME})*(?: and ${NAME})?)`;
const NOUN = "([A-Za-z0-9][A-Za-z0-9_'-]*)";

const PATTERNS: readonly [RegExp, (m: RegExpExecArray) => HitomSentence][] = [
  [new RegExp(`^${NAMES} entered the ${NOUN}\\.$`), (m) => ({ kind: "enter", agents: splitNames(m[1]!), room: m[2]! })],
  [new RegExp(`^${NAMES} exited the ${NOUN}\\.$`), (m) => ({ kind: "exit", agents: splitNames(m[1]!), room: m[2]! })],
  [new RegExp(`^The ${NOUN} is in the ${NOUN}\\.$`), (m) => ({ kind: "located", object: m[1]!, container: m[2]! })],
  [new RegExp(`^${N} moved the ${NOUN} to the ${NOUN}\\.$`), (m) => ({ kind: "move", agent: m[1]!, object: m[2]!, container: m[3]! })],
  [
    new RegExp(`^${N} made no movements and stayed in the ${NOUN} for 1 minute\\.$`),
    (m) => ({ kind: "stay", agent: m[1]!, room: m[2]! }),
  ],
  [
    new RegExp(`^${N} publicly claimed that (?:the )?${NOUN} is in the ${NOUN}\\.$`),
    (m) => ({ kind: "public_claim", agent: m[1]!, object: m[2]!, container: m[3]! }),
  ],
  [
    new RegExp(`^${N} privately told ${N} that (?:the )?${NOUN} is in the ${NOUN}\\.$`),
    (m) => ({ kind: "private_claim", agent: m[1]!, listener: m[2]!, object: m[3]!, container: m[4]! }),
  ],
  [new RegExp(`^${N} saw an? ${NOUN}\\.$`), (m) => ({ kind: "remark", agent: m[1]!, verb: "saw", thing: m[2]! })],
  [new RegExp(`^${N} lost (?:his|her|their) ${NOUN}\\.$`), (m) => ({ kind: "remark", agent: m[1]!, verb: "lost", thing: m[2]! })],
  [
    new RegExp(`^${N} (likes|dislikes) the ${NOUN}\\.$`),
    (m) => ({ kind: "remark", agent: m[1]!, verb: m[2] as "likes" | "dislikes", thing: m[3]! }),
  ],
];

function splitNames(list: string): string[] {
  const i = list.lastIndexOf(" and ");
  if (i < 0) return list.split(", ");
  return [...list.slice(0, i).split(", "), list.slice(i + 5)];
}

/** "A", "A and B", "A, B and C" (the upstream generator's listing). */
export function joinNames(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** The sentence, or undefined when it is not Hi-ToM's grammar. */
export function parseSentence(text: string): HitomSentence | undefined {
  const s = text.trim();
  for (const [re, build] of PATTERNS) {
    const m = re.exec(s);
    if (m) {
      const sentence = build(m);
      // A name list must not repeat a name ("A and A entered ...").
      if ((sentence.kind === "enter" || sentence.kind === "exit") && new Set(sentence.agents).size !== sentence.agents.length) return undefined;
      if (sentence.kind === "private_claim" && sentence.agent === sentence.listener) return undefined;
      return sentence;
    }
  }
  return undefined;
}

export function renderSentence(s: HitomSentence): string {
  switch (s.kind) {
    case "enter":
      return `${joinNames(s.agents)} entered the ${s.room}.`;
    case "exit":
      return `${joinNames(s.agents)} exited the ${s.room}.`;
    case "located":
      return `The ${s.object} is in the ${s.container}.`;
    case "move":
      return `${s.agent} moved the ${s.object} to the ${s.container}.`;
    case "stay":
      return `${s.agent} made no movements and stayed in the ${s.room} for 1 minute.`;
    case "public_claim":
      return `${s.agent} publicly claimed that ${s.object} is in the ${s.container}.`;
    case "private_claim":
      return `${s.agent} privately told ${s.listener} that the ${s.object} is in the ${s.container}.`;
    case "remark":
      switch (s.verb) {
        case "saw":
          return `${s.agent} saw a ${s.thing}.`;
        case "lost":
          return `${s.agent} lost his ${s.thing}.`;
        default:
          return `${s.agent} ${s.verb} the ${s.thing}.`;
      }
  }
}

const Q_REALITY = new RegExp(`^Where is the ${NOUN} really\\?$`);
const Q_FIRST = new RegExp(`^Where does ${N} (?:really )?think the ${NOUN} is\\?$`);
const Q_NESTED = new RegExp(`^Where does ${N} think ((?:${NAME} thinks )+)the ${NOUN} is\\?$`);

/** The question, or undefined when it is not one of Hi-ToM's question templates. */
export function parseQuestion(text: string): HitomQuestion | undefined {
  const s = text.trim();
  let m = Q_REALITY.exec(s);
  if (m) return { agents: [], object: m[1]! };
  m = Q_FIRST.exec(s);
  if (m) return { agents: [m[1]!], object: m[2]! };
  m = Q_NESTED.exec(s);
  if (!m) return undefined;
  const inner = m[2]!.trim().split(" thinks").map((x) => x.trim()).filter((x) => x !== "");
  return { agents: [m[1]!, ...inner], object: m[3]! };
}

export function renderQuestion(q: HitomQuestion): string {
  const [first, ...rest] = q.agents;
  if (first === undefined) return `Where is the ${q.object} really?`;
  if (rest.length === 0) return `Where does ${first} really think the ${q.object} is?`;
  return `Where does ${first} think ${rest.map((a) => `${a} thinks `).join("")}the ${q.object} is?`;
}

const CHOICE = new RegExp(`^([A-Z])\\.\\s+${NOUN}$`);

/**
 * "A. x, B. y, ..." -> ["x", "y", ...]; undefined when the letters are not A, B, C ... in order, or
 * an option is not one word as the story writes places: a list cut short ("..., N. blue_crate, O")
 * would otherwise end in an option no question can have as its answer.
 */
export function parseChoices(text: string): string[] | undefined {
  const parts = text.trim().split(/,\s*(?=[A-Z]\.\s)/);
  const out: string[] = [];
  for (const [i, part] of parts.entries()) {
    const m = CHOICE.exec(part.trim());
    if (!m || m[1] !== letterOf(i)) return undefined;
    out.push(m[2]!);
  }
  return out.length ? out : undefined;
}

export function renderChoices(options: readonly string[]): string {
  return options.map((o, i) => `${letterOf(i)}. ${o}`).join(", ");
}

export function letterOf(i: number): string {
  return String.fromCharCode(65 + i);
}

/**
 * The facts characters share in generated FANToM conversations, and the language of their
 * questions and answers: how a fact is said (first person by its owner, or retold by someone
 * else), its fact question and answer, and the belief answers about it. Every kind draws its
 * values from a closed list, and no two kinds share a value, so a line conveys a fact exactly when
 * it names one of its values; that is how the reader and the simulation agent find, from the text
 * alone, which lines carry which fact (the ToMi world parses its sentences the same way).
 */
import { escapeRegExp } from "../core/escape-reg-exp.js";

export interface FactKind {
  readonly id: string;
  readonly topic: string;
  readonly values: readonly string[];
  /** The owner says it, first person: "{value}". */
  readonly share: readonly string[];
  /** The fact question: "{owner}". */
  readonly question: string;
  /** The fact as a clause, without final period: "{owner}", "{value}". */
  readonly clause: string;
  /** What someone who missed it does not know: "what breed {owner}'s dog is". */
  readonly unknown: string;
  /** What a belief question asks about: "the breed of {owner}'s dog". */
  readonly about: string;
}

export const FACT_KINDS: readonly FactKind[] = [
  {
    id: "dog_breed",
    topic: "pets",
    values: ["beagle", "golden retriever", "border collie", "dachshund", "greyhound", "corgi"],
    share: [
      "We finally adopted a dog last month. He is a {value}, and he has way too much energy.",
      "My new puppy is a {value}! He already chewed through two pairs of my shoes.",
      "I have a {value} now. Honestly, walking him is the best part of my day.",
    ],
    question: "What breed is {owner}'s dog?",
    clause: "{owner}'s dog is a {value}",
    unknown: "what breed {owner}'s dog is",
    about: "the breed of {owner}'s dog",
  },
  {
    id: "kitten_name",
    topic: "pets",
    values: ["Biscuit", "Noodle", "Pickles", "Waffles", "Marmalade", "Pudding"],
    share: [
      "We got a kitten last week, and my kids named her {value}.",
      "Our new kitten is called {value}. She sleeps on my keyboard all day.",
      "I adopted a tiny kitten from the shelter. Her name is {value}!",
    ],
    question: "What is the name of {owner}'s kitten?",
    clause: "{owner}'s kitten is named {value}",
    unknown: "what {owner}'s kitten is named",
    about: "the name of {owner}'s kitten",
  },
  {
    id: "trip_destination",
    topic: "travel",
    values: ["Lisbon", "Kyoto", "Reykjavik", "Cape Town", "Buenos Aires", "Marrakesh"],
    share: [
      "Last summer I finally took my dream trip. I spent two weeks in {value}!",
      "My vacation last summer was in {value}. The food alone was worth the flight.",
      "I went to {value} last summer, and I still think about it every day.",
    ],
    question: "Where did {owner} go on vacation last summer?",
    clause: "{owner} went to {value} on vacation last summer",
    unknown: "where {owner} went on vacation last summer",
    about: "where {owner} went on vacation last summer",
  },
  {
    id: "new_job",
    topic: "work",
    values: ["a data analyst", "a pastry chef", "a park ranger", "a physical therapist", "a chemistry teacher", "a sound engineer"],
    share: [
      "I just started a new job, actually. I am working as {value} now.",
      "Big news on my end: I switched careers and started as {value} last Monday.",
      "I finally got the offer! I started working as {value} this month.",
    ],
    question: "What job did {owner} just start?",
    clause: "{owner} just started working as {value}",
    unknown: "what job {owner} just started",
    about: "the new job {owner} just started",
  },
  {
    id: "reunion_dish",
    topic: "food",
    values: ["mushroom risotto", "lamb tagine", "shrimp pad thai", "spinach lasagna", "black bean chili", "butter chicken"],
    share: [
      "For our family reunion I cooked {value}, and there was not a single bite left.",
      "I made {value} for the family reunion. My grandmother asked for the recipe!",
      "At the family reunion I was in charge of dinner, so I cooked {value}.",
    ],
    question: "What did {owner} cook for the family reunion?",
    clause: "{owner} cooked {value} for the family reunion",
    unknown: "what {owner} cooked for the family reunion",
    about: "what {owner} cooked for the family reunion",
  },
  {
    id: "instrument",
    topic: "music",
    values: ["the cello", "the banjo", "the saxophone", "the ukulele", "the harp", "the accordion"],
    share: [
      "I have been taking lessons, actually. I am learning to play {value}.",
      "My neighbors probably hate me, because I started learning {value} this year.",
      "I finally signed up for music lessons, and I am learning {value}.",
    ],
    question: "Which instrument has {owner} been learning to play?",
    clause: "{owner} has been learning to play {value}",
    unknown: "which instrument {owner} has been learning to play",
    about: "the instrument {owner} has been learning to play",
  },
  {
    id: "new_hobby",
    topic: "hobbies",
    values: ["rock climbing", "fencing", "kayaking", "archery", "salsa dancing", "beekeeping"],
    share: [
      "This spring I took up {value}, and I am completely hooked.",
      "I started {value} this spring. My arms have never been this sore.",
      "My new hobby since spring is {value}. I go every weekend now.",
    ],
    question: "What new hobby did {owner} take up this spring?",
    clause: "{owner} took up {value} this spring",
    unknown: "what new hobby {owner} took up this spring",
    about: "the new hobby {owner} took up this spring",
  },
  {
    id: "current_book",
    topic: "books",
    values: ["The Lantern Keeper", "Salt and Sparrows", "A Map of Quiet Rooms", "The Ninth Orchard", "Winter in Alder Bay", "The Glass Ferry"],
    share: [
      "Right now I am reading {value}, and I cannot put it down.",
      "I started {value} on the train this week. The ending of the first part shocked me.",
      "My book club picked {value} for this month, and I am halfway through it.",
    ],
    question: "Which book is {owner} reading at the moment?",
    clause: "{owner} is reading {value} at the moment",
    unknown: "which book {owner} is reading at the moment",
    about: "the book {owner} is reading at the moment",
  },
  {
    id: "moving_city",
    topic: "home",
    values: ["Denver", "Portland", "Halifax", "Austin", "Edinburgh", "Melbourne"],
    share: [
      "I have not told many people yet, but I am moving to {value} in the fall.",
      "We signed the lease yesterday. We are moving to {value} next month!",
      "My partner got a job offer, so we are moving to {value} soon.",
    ],
    question: "Which city is {owner} moving to?",
    clause: "{owner} is moving to {value}",
    unknown: "which city {owner} is moving to",
    about: "the city {owner} is moving to",
  },
  {
    id: "garden_crop",
    topic: "gardening",
    values: ["heirloom tomatoes", "purple carrots", "giant pumpkins", "snap peas", "rainbow chard", "strawberries"],
    share: [
      "This year I am growing {value} in my garden. It is my first real harvest.",
      "My garden is full of {value} this year. I have no idea what to do with all of them.",
      "I planted {value} in the backyard this year, and they are finally coming in.",
    ],
    question: "What is {owner} growing in the garden this year?",
    clause: "{owner} is growing {value} in the garden this year",
    unknown: "what {owner} is growing in the garden this year",
    about: "what {owner} is growing in the garden this year",
  },
];

export const FACT_KINDS_BY_ID: ReadonlyMap<string, FactKind> = new Map(FACT_KINDS.map((k) => [k.id, k]));

function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A fact of the world: a kind, its owner and its value. */
export interface Fact {
  readonly kind: FactKind;
  readonly owner: string;
  readonly value: string;
}

export const factStatement = (f: Fact) => `${capitalize(fill(f.kind.clause, { owner: f.owner, value: f.value }))}.`;
export const factQuestion = (kind: FactKind, owner: string) => fill(kind.question, { owner });
export const shareLine = (f: Fact, template: string) => fill(template, { value: f.value });

export const beliefQuestionFirst = (kind: FactKind, owner: string, who: string) => `What does ${who} believe about ${fill(kind.about, { owner })}?`;
export const beliefQuestionSecond = (kind: FactKind, owner: string, who: string, other: string) =>
  `What does ${who} think about ${other}'s belief regarding ${fill(kind.about, { owner })}?`;

/** "David believes that Linda's dog is a beagle." / "David does not know what breed Linda's dog is." */
export function beliefAnswerFirst(f: Fact, who: string, knows: boolean): string {
  if (knows) return `${who} believes that ${fill(f.kind.clause, { owner: f.owner, value: f.value })}.`;
  return `${who} does not know ${fill(f.kind.unknown, { owner: f.owner })}.`;
}

/** "Linda thinks that David believes that Linda's dog is a beagle." / "... that David does not know what breed ..." */
export function beliefAnswerSecond(f: Fact, who: string, other: string, thinksKnows: boolean): string {
  if (thinksKnows) return `${who} thinks that ${other} believes that ${fill(f.kind.clause, { owner: f.owner, value: f.value })}.`;
  return `${who} thinks that ${other} does not know ${fill(f.kind.unknown, { owner: f.owner })}.`;
}

/** The distinctive words of a value ("the cello" -> "cello"), which is what a line must name. */
export function valueCore(value: string): string {
  return value.replace(/^(the|a|an) /i, "");
}

const coreRegexes = new Map<string, RegExp>();

/** The kind's value named in `text`, if any (case-insensitive, whole words). */
export function valueIn(kind: FactKind, text: string): string | undefined {
  for (const v of kind.values) {
    let re = coreRegexes.get(v);
    if (!re) {
      re = new RegExp(`\\b${escapeRegExp(valueCore(v))}\\b`, "i");
      coreRegexes.set(v, re);
    }
    if (re.test(text)) return v;
  }
  return undefined;
}

const NAME = "([A-Z][\\p{L}'-]*(?: [A-Z][\\p{L}'-]*)?)";

function templateRegex(template: string, slots: Readonly<Record<string, string>>): RegExp {
  const parts = template.split(/(\{\w+\})/);
  const body = parts
    .map((p) => {
      const m = /^\{(\w+)\}$/.exec(p);
      if (m) return slots[m[1]!] ?? escapeRegExp(p);
      return escapeRegExp(p);
    })
    .join("");
  return new RegExp(`^${body}$`, "u");
}

export interface ParsedAbout {
  readonly kind: FactKind;
  readonly owner: string;
}

/** Which kind and owner a fact question ("What breed is Linda's dog?") asks about. */
export function parseFactQuestion(question: string): ParsedAbout | undefined {
  const q = question.trim();
  for (const kind of FACT_KINDS) {
    const m = templateRegex(kind.question, { owner: NAME }).exec(q);
    if (m) return { kind, owner: m[1]! };
  }
  return undefined;
}

function parseAbout(text: string): ParsedAbout | undefined {
  for (const kind of FACT_KINDS) {
    const m = templateRegex(kind.about, { owner: NAME }).exec(text);
    if (m) return { kind, owner: m[1]! };
  }
  return undefined;
}

export interface ParsedBeliefQuestion extends ParsedAbout {
  /** [who] for first order, [who, other] for "what does who think about other's belief". */
  readonly path: readonly string[];
}

/** Parses the belief questions the generator writes (first- and second-order). */
export function parseBeliefQuestion(question: string): ParsedBeliefQuestion | undefined {
  const q = question.trim().split("\n")[0]!.trim();
  const second = new RegExp(`^What does ${NAME} think about ${NAME}'s belief regarding (.+)\\?$`, "u").exec(q);
  if (second) {
    const about = parseAbout(second[3]!);
    return about && { ...about, path: [second[1]!, second[2]!] };
  }
  const first = new RegExp(`^What does ${NAME} believe about (.+)\\?$`, "u").exec(q);
  if (first) {
    const about = parseAbout(first[2]!);
    return about && { ...about, path: [first[1]!] };
  }
  return undefined;
}

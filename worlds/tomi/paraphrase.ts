/**
 * Reworded ToMi sentences (ParaphrasedToMi: "James sidled into the crawlspace.", "The envelope
 * contains the onion.", "Inside the crawlspace is a envelope.") read into the grammar's sentence
 * kinds (sentences.ts).
 *
 * No template list could keep up with a paraphraser, so a sentence is read by what it names and by
 * a few cue words: the ToMi vocabulary tells agents, rooms, containers and objects apart, which
 * fixes every role (an object is in a container, a container in a room, an agent moves an object
 * into a container); the cues tell an arrival from a departure, a statement of where something is
 * from an action, an attitude from an event. Every word of an event or a location must be one the
 * lists below know (only an attitude may be worded freely around its cue). Whatever stays ambiguous
 * (negated, hedged, compound or unknown wording; two readings) is undefined: the reader then
 * reports the line, never a guess.
 */
import type { TomiSentence } from "./sentence.js";
import {
  AGENT_NAMES,
  CONTAINER_KINDS,
  CONTAINERS,
  OBJECTS,
  ROOMS,
  TOMI_EXTRA_OBJECTS,
  TOMI_EXTRA_ROOMS,
} from "../core/vocabulary.js";

type Kind = "agent" | "room" | "container" | "object";

// ---------------------------------------------------------------------------------------------
// Cue words. Lower case; a multi-word cue matches those words in a row.

const DETERMINERS = ["the", "a", "an"];

/** A statement made negative, hypothetical, reported or compound is not an event we can replay. */
const HEDGES = [
  "not", "never", "no", "nobody", "cannot", "will", "would", "could", "should", "might", "may", "must", "can",
  "wants", "wanted", "tries", "tried", "plans", "planned", "almost", "nearly", "if", "unless", "then", "when",
  "while", "until", "after", "before", "because", "but", "or", "thinks", "thought", "believes", "believed",
  "says", "said", "pretended", "imagined", "dreamed", "wished", "hoped", "refused", "failed", "forgot",
];

/** Prepositions that put the thing inside the place named right after them ("is in the attic"). */
const LOCATIVES = ["in", "inside", "within", "at", "on"];

/** How a place holds a thing, the place first ("The envelope contains the onion", "The den shelters Mia"). */
const HOLDING = [
  "has", "have", "holds", "holding", "contains", "containing", "keeps", "keeping", "stores", "storing",
  "safeguards", "safeguarding", "houses", "housing", "shelters", "sheltering", "hosts", "hosting", "where",
];

/** The other words a statement of where something is may use ("The basket is set to rest in the porch."). */
const STATIC = [
  "is", "are", "was", "were", "there", "it", "them", "of", "to", "be", "and", ",", "still", "now", "currently",
  "also", "located", "contained", "situated", "positioned", "stationed", "placed", "put", "set", "laid", "kept",
  "stored", "stowed", "deposited", "rested", "found", "hidden", "housed", "rest", "upon", "aside", "present",
  "sitting", "resting", "lying", "standing", "staying", "waiting", "sits", "rests", "lies", "stands", "remains",
  "stays", "waits", "remained", "stayed", "waited",
];

/**
 * Verbs of going somewhere; the words after them say where ("slithered into", "crept from"). A verb
 * not listed here or in ARRIVING or LEAVING ("teleported to") leaves the sentence unread.
 */
const GOING = [
  "went", "came", "walked", "ran", "stepped", "crept", "tiptoed", "sidled", "slithered", "bounded", "leapt",
  "leaped", "jumped", "hopped", "shuffled", "strolled", "wandered", "marched", "hurried", "rushed", "dashed",
  "raced", "sprinted", "jogged", "bolted", "flew", "crawled", "headed", "returned", "arrived", "showed", "got",
  "emerged", "took", "snuck", "sneaked", "slipped", "stormed", "burst", "darted", "scurried", "skipped", "strode",
  "stumbled", "trudged", "moved", "popped", "ducked", "paced", "scampered", "waltzed", "hiked", "traveled",
  "travelled",
];

/** Cues of arriving in a room ("slithered into", "showed up at", "came by", "visited", "approached"). */
const ARRIVING = ["into", "to", "at", "in", "inside", "by", "entered", "visited", "approached", "reached"];

/** Cues of leaving a room ("stepped out of", "bolted from", "took off from", "left", "quit"). */
const LEAVING = ["from", "out", "away", "exited", "left", "departed", "quit", "vacated", "abandoned"];

/** Words that may ride along with the one verb of an action ("took off from", "showed up at"). */
const PARTICLES = ["up", "off", "of", "back", "over", "down", "around", "along", "again", "quickly", "slowly", "quietly"];

/** Verbs that take an object somewhere, ending "to" or "into" a container ("conveyed the cap to the bottle"). */
const CARRYING = [
  "moved", "relocated", "brought", "conveyed", "carried", "took", "shifted", "pushed", "transported", "led",
  "transferred", "shoved", "dragged", "hauled", "lugged", "tossed", "threw", "returned", "sent", "rolled", "slid",
];

/** Verbs that put an object somewhere, also ending "in" a container ("stored the onion in the suitcase"). */
const PLACING = [
  "put", "placed", "set", "stored", "stowed", "hid", "tucked", "dropped", "stashed", "packed", "deposited", "laid",
  "slipped", "stuck", "stuffed", "shoved", "moved", "relocated", "transferred",
];

/** How a move ends: "to the box", "into the box"; with a verb of putting also "in the box". */
const TOWARDS = ["to", "into", "onto"];
const INSIDE = ["in", "inside", "on"];

/**
 * Attitudes, the distractor remarks ("Chloe is wild about the carrot", "The skirt terrifies Carter",
 * "Emma is grapes-obsessed"), by polarity: a remark that does not read back as "<agent> <verb> the
 * <thing>" is kept as "likes" or "dislikes".
 */
const ATTITUDES = {
  likes: [
    "like", "likes", "love", "loves", "adores", "enjoys", "wild about", "crazy", "nuts about", "mad about",
    "keen on", "fond of", "eager for", "enthusiastic about", "enamored with", "infatuated with", "smitten with",
    "besotted with", "captivated by", "spellbound by", "fascinated by", "entranced by", "charmed by", "taken with",
    "fiend", "maniac", "obsessed", "crazed", "aholic", "fever", "thirsty for", "would do anything for", "never seen without",
  ],
  dislikes: [
    "dislike", "dislikes", "hate", "hates", "loathes", "detests", "despises", "can't stand", "terrified by",
    "terrifies", "disgusted by", "disgusts", "disquieted by", "grieved by", "scandalized by", "scandalizes",
    "bothered by", "offended by", "offends", "discouraged by", "disconcerted by", "horrified by", "horrifies",
    "disheartened by", "pained by", "vexed by", "annoyed by", "sorrowful by", "concerned by", "repelled by",
    "troubled by", "irritated by", "revolted by", "revolts", "shocked by", "shocks", "sickens", "nauseates",
    "repulses", "abhorrent to", "turns stomach",
  ],
} as const;

// ---------------------------------------------------------------------------------------------
// Entities.

const NOUNS = new Map<string, { name: string; kinds: Kind[] }>();
function addNoun(name: string, kind: Kind): void {
  const key = name.toLowerCase();
  const known = NOUNS.get(key);
  if (known) {
    if (!known.kinds.includes(kind)) known.kinds.push(kind);
  } else NOUNS.set(key, { name, kinds: [kind] });
}
for (const r of [...ROOMS, ...TOMI_EXTRA_ROOMS]) addNoun(r, "room");
for (const c of [...CONTAINER_KINDS, ...CONTAINERS]) addNoun(c, "container");
for (const o of [...OBJECTS, ...TOMI_EXTRA_OBJECTS]) addNoun(o, "object");
const AGENTS = new Set<string>(AGENT_NAMES);

/**
 * The paraphraser sometimes cut a room's name at its underscore ("is located in the dining.",
 * "The master holds Logan."): the first part stands for the room when no other room starts so.
 */
const CLIPPED_ROOMS = new Map<string, string>();
{
  const heads = new Map<string, string[]>();
  for (const r of ROOMS) {
    if (!r.includes("_")) continue;
    const head = r.slice(0, r.indexOf("_")).toLowerCase();
    heads.set(head, [...(heads.get(head) ?? []), r]);
  }
  for (const [head, rooms] of heads) if (rooms.length === 1 && !NOUNS.has(head)) CLIPPED_ROOMS.set(head, rooms[0]!);
}

interface Token {
  /** As written (for remarks that keep their wording). */
  readonly text: string;
  readonly lower: string;
  readonly entity?: { readonly name: string; readonly kinds: readonly Kind[] };
}

function noun(word: string): { name: string; kinds: Kind[] } | undefined {
  if (AGENTS.has(word)) return { name: word, kinds: ["agent"] };
  return NOUNS.get(word.toLowerCase());
}

/** The sentence's words with entities recognised, or undefined when it has punctuation we do not read. */
function tokenize(body: string): Token[] | undefined {
  if (!/^[A-Za-z0-9_'\-, ]+$/.test(body)) return undefined;
  const raw = body.replace(/,/g, " , ").split(/\s+/).filter((w) => w !== "");
  const out: Token[] = [];
  for (let i = 0; i < raw.length; i++) {
    // Names written with spaces for underscores ("treasure chest", "green pepper").
    let joined: Token | undefined;
    for (const n of [3, 2]) {
      if (i + n > raw.length) continue;
      const words = raw.slice(i, i + n);
      const found = noun(words.join("_"));
      if (found) {
        joined = { text: words.join(" "), lower: words.join("_").toLowerCase(), entity: found };
        i += n - 1;
        break;
      }
    }
    if (joined) {
      out.push(joined);
      continue;
    }
    out.push(...word(raw[i]!, out[out.length - 1]?.lower));
  }
  return out;
}

/** One written word: an entity, an entity and a cue ("grapes-obsessed", "Avery's"), or a plain word. */
function word(w: string, previous: string | undefined): Token[] {
  const lower = w.toLowerCase();
  const found = noun(w);
  if (found) return [{ text: w, lower, entity: found }];
  const possessive = /^(.+)'s$/.exec(w);
  if (possessive) {
    const owner = noun(possessive[1]!);
    if (owner) return [{ text: w, lower, entity: owner }];
  }
  // The longest hyphenated head that names something ("t-shirt-obsessed", "cherry-aholic").
  for (let cut = w.lastIndexOf("-"); cut > 0; cut = w.lastIndexOf("-", cut - 1)) {
    const head = noun(w.slice(0, cut));
    if (head) {
      const rest = w.slice(cut + 1);
      return [{ text: w.slice(0, cut), lower: w.slice(0, cut).toLowerCase(), entity: head }, { text: rest, lower: rest.toLowerCase() }];
    }
  }
  const clipped = previous === "the" ? CLIPPED_ROOMS.get(lower) : undefined;
  if (clipped) return [{ text: w, lower, entity: { name: clipped, kinds: ["room"] } }];
  return [{ text: w, lower }];
}

// ---------------------------------------------------------------------------------------------
// Readings. Each looks at the words with one kind chosen for every entity.

interface Named {
  readonly at: number;
  readonly name: string;
  readonly kind: Kind;
}

interface Parsed {
  readonly tokens: readonly Token[];
  readonly entities: readonly Named[];
  readonly text: string;
  readonly period: boolean;
}

const set = (words: readonly string[]) => new Set(words);
const HEDGE_SET = set(HEDGES);
const LOCATIVE_SET = set(LOCATIVES);
const HOLDING_SET = set(HOLDING);
const STATIC_SET = set([...STATIC, ...LOCATIVES, ...HOLDING]);
const ARRIVING_SET = set(ARRIVING);
const LEAVING_SET = set(LEAVING);
const PARTICLE_SET = set(PARTICLES);
const GOING_SET = set(GOING);
const CARRYING_SET = set([...CARRYING, ...PLACING]);
/** The attitude cues split into words once, not at every sentence that might be a remark. */
const ATTITUDE_WORDS = {
  likes: ATTITUDES.likes.map((cue) => cue.split(" ")),
  dislikes: ATTITUDES.dislikes.map((cue) => cue.split(" ")),
} as const;
const PLACING_SET = set(PLACING);
const TOWARDS_SET = set(TOWARDS);
const INSIDE_SET = set(INSIDE);
const DETERMINER_SET = set(DETERMINERS);

const isHedge = (w: string) => HEDGE_SET.has(w) || w.endsWith("n't");

/** The plain words (no entities, no determiners) between token positions `from` and `to`, exclusive. */
function wordsBetween(p: Parsed, from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from + 1; i < to; i++) {
    const t = p.tokens[i]!;
    if (!t.entity && !DETERMINER_SET.has(t.lower)) out.push(t.lower);
  }
  return out;
}

/** The token before position `i`, determiners skipped. */
function before(p: Parsed, i: number): Token | undefined {
  let j = i - 1;
  while (j >= 0 && DETERMINER_SET.has(p.tokens[j]!.lower)) j--;
  return p.tokens[j];
}

/**
 * "The <things> [is located] in the <place>", "Inside the <place> is a <thing>", "There is a
 * <thing> in the <place>", "The <place> is keeping the <thing> inside of it", "The <place> is where
 * the <thing> is": only words of location, and one that puts the things in the place.
 */
function placed(p: Parsed, things: readonly Named[], place: Named): boolean {
  const words = wordsBetween(p, -1, p.tokens.length);
  if (!words.every((w) => STATIC_SET.has(w))) return false;
  if (words.includes("and") || words.includes(",")) {
    // Only a list of the things ("Ella and Avery are in the attic").
    for (let k = 1; k < things.length; k++) {
      const gap = wordsBetween(p, things[k - 1]!.at, things[k]!.at);
      if (gap.length !== 1 || (gap[0] !== "and" && gap[0] !== ",")) return false;
    }
    const listed = words.filter((w) => w === "and" || w === ",").length;
    if (listed !== things.length - 1) return false;
  }
  if (LOCATIVE_SET.has(before(p, place.at)?.lower ?? "")) return true;
  const first = things[0]!;
  return place.at < first.at && wordsBetween(p, place.at, first.at).some((w) => HOLDING_SET.has(w));
}

/** "<agent> <verb> [particles] <cue> the <room>", the room last: arriving or leaving, never both. */
function motion(p: Parsed, agent: Named, room: Named): "enter" | "exit" | undefined {
  if (agent.at !== 0 || room.at !== p.tokens.length - 1) return undefined;
  const words = wordsBetween(p, agent.at, room.at);
  const verb = words[0];
  if (verb === undefined) return undefined;
  let arriving = ARRIVING_SET.has(verb);
  let leaving = LEAVING_SET.has(verb);
  if (!arriving && !leaving && !GOING_SET.has(verb)) return undefined;
  for (const w of words.slice(1)) {
    if (ARRIVING_SET.has(w)) arriving = true;
    else if (LEAVING_SET.has(w)) leaving = true;
    else if (!PARTICLE_SET.has(w)) return undefined;
  }
  return arriving === leaving ? undefined : arriving ? "enter" : "exit";
}

/** "<agent> <verb> the <object> to|into the <container>", or "in" with a verb of putting. */
function moved(p: Parsed, agent: Named, object: Named, container: Named): boolean {
  if (agent.at !== 0 || !(object.at < container.at) || container.at !== p.tokens.length - 1) return false;
  const [verb, ...particles] = wordsBetween(p, agent.at, object.at);
  if (verb === undefined || !CARRYING_SET.has(verb)) return false;
  if (!particles.every((w) => PARTICLE_SET.has(w) && w !== "of")) return false;
  const link = wordsBetween(p, object.at, container.at);
  const prep = link[link.length - 1];
  if (prep === undefined || !link.slice(0, -1).every((w) => PARTICLE_SET.has(w) && w !== "of")) return false;
  return TOWARDS_SET.has(prep) || (INSIDE_SET.has(prep) && PLACING_SET.has(verb));
}

/** The polarity of the attitude cues a sentence uses (undefined when it has both), and its words outside them. */
function attitude(p: Parsed): { polarity: "likes" | "dislikes" | undefined; rest: string[] } | undefined {
  const words = wordsBetween(p, -1, p.tokens.length);
  const used = new Set<number>();
  const found = new Set<"likes" | "dislikes">();
  for (const polarity of ["likes", "dislikes"] as const) {
    for (const parts of ATTITUDE_WORDS[polarity]) {
      for (let i = 0; i + parts.length <= words.length; i++) {
        if (parts.every((w, k) => words[i + k] === w)) {
          found.add(polarity);
          parts.forEach((_, k) => used.add(i + k));
        }
      }
    }
  }
  if (found.size === 0) return undefined;
  return { polarity: found.size === 1 ? [...found][0] : undefined, rest: words.filter((_, i) => !used.has(i)) };
}

/** "<agent> <attitude> the <thing>" and every other wording of a liking or a dislike. */
function remark(p: Parsed, agent: Named, thing: Named): TomiSentence | undefined {
  const att = attitude(p);
  if (!att) return undefined;
  if (thing.kind !== "object" && att.rest.some((w) => ARRIVING_SET.has(w) || LEAVING_SET.has(w) || LOCATIVE_SET.has(w))) return undefined;
  // Kept word for word when it reads back the same ("Isabella loathes the slippers.").
  if (agent.at === 0 && thing.at === p.tokens.length - 1 && p.tokens[thing.at - 1]?.lower === "the") {
    const verb = p.tokens.slice(1, thing.at - 1).map((t) => t.text).join(" ");
    const thingText = p.tokens[thing.at]!.text;
    if (verb !== "" && thingText === thing.name && `${agent.name} ${verb} the ${thing.name}${p.period ? "." : ""}` === p.text) {
      return { kind: "remark", agent: agent.name, verb, thing: thing.name, period: p.period };
    }
  }
  if (att.polarity === undefined || att.rest.some(isHedge)) return undefined;
  return { kind: "remark", agent: agent.name, verb: att.polarity, thing: thing.name, period: p.period };
}

function read(p: Parsed): TomiSentence | undefined {
  const of = (k: Kind) => p.entities.filter((e) => e.kind === k);
  const agents = of("agent");
  const rooms = of("room");
  const containers = of("container");
  const objects = of("object");
  const hedged = p.tokens.some((t) => !t.entity && isHedge(t.lower));
  if (agents.length === 0) {
    if (hedged) return undefined;
    // An object in a container; a container in a room.
    if (objects.length === 1 && containers.length === 1 && rooms.length === 0) {
      return placed(p, objects, containers[0]!) ? { kind: "located", subject: objects[0]!.name, place: containers[0]!.name } : undefined;
    }
    if (containers.length === 1 && rooms.length === 1 && objects.length === 0) {
      return placed(p, containers, rooms[0]!) ? { kind: "located", subject: containers[0]!.name, place: rooms[0]!.name } : undefined;
    }
    return undefined;
  }
  if (rooms.length === 1 && containers.length === 0 && objects.length === 0) {
    const room = rooms[0]!;
    const readings: TomiSentence[] = [];
    if (!hedged && placed(p, agents, room)) readings.push({ kind: "agents_at", agents: agents.map((a) => a.name), room: room.name });
    if (agents.length === 1) {
      const agent = agents[0]!;
      const way = hedged ? undefined : motion(p, agent, room);
      if (way) readings.push({ kind: way, agent: agent.name, room: room.name });
      const liking = remark(p, agent, room);
      if (liking) readings.push(liking);
    }
    return readings.length === 1 ? readings[0] : undefined;
  }
  if (agents.length !== 1) return undefined;
  const agent = agents[0]!;
  if (objects.length === 1 && containers.length === 1 && rooms.length === 0) {
    if (hedged || !moved(p, agent, objects[0]!, containers[0]!)) return undefined;
    return { kind: "move", agent: agent.name, object: objects[0]!.name, container: containers[0]!.name };
  }
  const things = [...rooms, ...containers, ...objects];
  if (things.length === 1) return remark(p, agent, things[0]!);
  return undefined;
}

/**
 * A reworded ToMi sentence as the grammar's sentence kind, or undefined when it cannot be read with
 * confidence. Words that name two kinds ("pantry": a room and a container) are tried as each; the
 * sentence is read only when exactly one reading results.
 */
export function parseParaphrase(text: string): TomiSentence | undefined {
  const s = text.trim();
  const period = s.endsWith(".");
  const tokens = tokenize(period ? s.slice(0, -1) : s);
  if (!tokens || tokens.length === 0) return undefined;
  const named = tokens.flatMap((t, at) => (t.entity ? [{ at, name: t.entity.name, kinds: t.entity.kinds }] : []));
  let choices: Named[][] = [[]];
  for (const e of named) choices = choices.flatMap((c) => e.kinds.map((kind) => [...c, { at: e.at, name: e.name, kind }]));
  const readings = new Map<string, TomiSentence>();
  for (const entities of choices) {
    const r = read({ tokens, entities, text: s, period });
    if (r) readings.set(JSON.stringify(r), r);
  }
  return readings.size === 1 ? [...readings.values()][0] : undefined;
}

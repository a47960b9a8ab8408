/**
 * Writes new FANToM question sets in the official `fantom_v1.json` layout, labelled by the world
 * model. A conversation is a get-together of three to five people in two or three parts; in each
 * part the group turns to a topic, one character steps out (and says so), the others share news
 * the absent one misses (a fact: a dog's breed, a new job...), and the character comes back. Some
 * of the missed news is retold on its return (the accessible, control case), some not (the
 * inaccessible, theory-of-mind case); between parts someone may leave for good. Each missed fact
 * is a question set `<conversation>-<part>-<k>` with every FANToM question kind, its labels read
 * from the world's knowledge state at the end of the part.
 */
import { Rng } from "../core/rng.js";
import { renderContext } from "./conversation.js";
import {
  beliefAnswerFirst,
  beliefAnswerSecond,
  beliefQuestionFirst,
  beliefQuestionSecond,
  factQuestion,
  factStatement,
  FACT_KINDS,
  shareLine,
  type Fact,
} from "./facts.js";
import type { BeliefQA, BinaryQA, FantomSet } from "./format.js";
import { FantomWorld, initialFantomState, knowsFact, type FantomAction, type FantomState } from "./world.js";
import {
  CHARACTER_NAMES,
  FILLER,
  GOODBYE_LINES,
  NOTHING_MISSED,
  OPENING_LINES,
  REACTIONS,
  RECAPS,
  RETURN_LINES,
  SEND_OFFS,
  TOPIC_NAMES,
  TOPIC_OPENERS,
  TOPIC_SMALL_TALK,
  LEAVE_LINES,
} from "./vocabulary.js";

const world = new FantomWorld();

export const ANSWERABILITY_LIST_Q = "List all the characters who know the precise correct answer to this question.";
export const INFO_LIST_Q = "List all the characters who know this information.";
export const answerabilityBinaryQ = (who: string) => `Does ${who} know the precise correct answer to this question?`;
export const infoBinaryQ = (who: string) => `Does ${who} know about this information?`;

function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

interface Line {
  readonly speaker: string;
  readonly text: string;
}

interface PartFacts {
  readonly part: number;
  readonly joiner: string;
  readonly start: number;
  readonly end: number;
  readonly facts: readonly { id: string; fact: Fact }[];
  readonly state: FantomState;
}

/** One conversation: its lines, and the facts each part's absent character missed. */
class ConversationBuilder {
  readonly lines: Line[] = [];
  private state: FantomState;
  private readonly used = new Set<string>();

  constructor(
    private readonly rng: Rng,
    readonly characters: readonly string[],
  ) {
    this.state = initialFantomState({ characters });
  }

  /** A fact the world can now convey (facts are drawn part by part as the conversation unfolds). */
  addFact(id: string, statement: string): void {
    this.state = { ...this.state, facts: { ...this.state.facts, [id]: statement } };
  }

  get now(): FantomState {
    return this.state;
  }

  private act(actor: string, action: FantomAction): void {
    const why = world.check(this.state, actor, action);
    if (why) throw new Error(`generator bug: ${why}`);
    this.state = world.step(this.state, new Map([[actor, action]]), { rng: this.rng, exogenous: [] }).state;
  }

  say(speaker: string, text: string, facts?: readonly string[]): void {
    this.lines.push({ speaker, text });
    this.act(speaker, facts?.length ? { type: "say", text, facts } : { type: "say", text });
  }

  leave(who: string): void {
    this.act(who, { type: "leave" });
  }

  join(who: string): void {
    this.act(who, { type: "join" });
  }

  /** A line from `pool` not yet said in this conversation (any line once all are used). */
  fresh(pool: readonly string[]): string {
    const unused = pool.filter((l) => !this.used.has(l));
    const line = this.rng.pick(unused.length ? unused : pool);
    this.used.add(line);
    return line;
  }
}

export interface GeneratedConversation {
  readonly sets: FantomSet[];
}

export function generateConversation(rng: Rng, conv: number): GeneratedConversation {
  const characters = rng.sample(CHARACTER_NAMES, rng.range(3, 5));
  const kinds = rng.shuffle(FACT_KINDS);
  const parts = rng.range(2, 3);
  const c = new ConversationBuilder(rng, characters);
  let present = characters.slice();

  for (const who of rng.shuffle(characters)) c.say(who, c.fresh(OPENING_LINES));

  const partFacts: PartFacts[] = [];
  for (let p = 0; p < parts && present.length >= 3 && kinds.length; p++) {
    const start = c.lines.length;
    const joiner = rng.pick(present);
    const others = present.filter((x) => x !== joiner);
    const take = Math.min(kinds.length, rng.chance(0.5) ? 2 : 1);
    const here = kinds.splice(0, take);
    const topic = here[0]!.topic;
    const owners = rng.sample(others, Math.min(take, others.length));
    const facts = here.map((kind, i) => {
      const fact: Fact = { kind, owner: owners[i % owners.length]!, value: rng.pick(kind.values) };
      const id = `${conv}-${p}-${i}`;
      c.addFact(id, factStatement(fact));
      return { id, fact };
    });

    c.say(rng.pick(others), c.fresh(TOPIC_OPENERS[topic]!));
    const spoke = new Set([c.lines[c.lines.length - 1]!.speaker]);
    for (const who of rng.shuffle(present)) {
      if (!spoke.has(who)) c.say(who, c.fresh([...TOPIC_SMALL_TALK[topic]!, ...FILLER]));
    }

    c.say(joiner, c.fresh(LEAVE_LINES));
    c.say(rng.pick(others), fill(c.fresh(SEND_OFFS), { name: joiner }));
    c.leave(joiner);
    for (const { id, fact } of facts) {
      c.say(fact.owner, shareLine(fact, rng.pick(fact.kind.share)), [id]);
      c.say(rng.pick(others.filter((x) => x !== fact.owner)), fill(c.fresh(REACTIONS), { owner: fact.owner }));
      if (rng.chance(0.5)) c.say(rng.pick(others), c.fresh(TOPIC_SMALL_TALK[fact.kind.topic]!));
    }
    if (rng.chance(0.5)) c.say(rng.pick(others), c.fresh(FILLER));
    c.join(joiner);
    c.say(joiner, c.fresh(RETURN_LINES));
    const retold = facts.filter(() => rng.chance(0.4));
    if (retold.length === 0) {
      c.say(rng.pick(others), fill(c.fresh(NOTHING_MISSED), { name: joiner, topic: TOPIC_NAMES[topic]! }));
    }
    for (const { id, fact } of retold) {
      const statement = factStatement(fact).replace(/\.$/, "");
      c.say(rng.pick(others.filter((x) => x !== fact.owner)), fill(rng.pick(RECAPS), { name: joiner, statement }), [id]);
    }
    c.say(rng.pick(present), c.fresh(TOPIC_SMALL_TALK[topic]!));
    partFacts.push({ part: p, joiner, start, end: c.lines.length, facts, state: c.now });

    if (p + 1 < parts && present.length >= 4 && rng.chance(0.4)) {
      const gone = rng.pick(present);
      c.say(gone, c.fresh(GOODBYE_LINES));
      c.leave(gone);
      present = present.filter((x) => x !== gone);
    }
  }

  const sets: FantomSet[] = [];
  for (const part of partFacts) {
    part.facts.forEach(({ id, fact }, k) => sets.push(buildSet(rng, c, conv, part, id, fact, k)));
  }
  return { sets };
}

function buildSet(rng: Rng, c: ConversationBuilder, conv: number, part: PartFacts, id: string, fact: Fact, k: number): FantomSet {
  const { state, joiner } = part;
  const shortLines = c.lines.slice(part.start, part.end);
  const fullLines = c.lines.slice(0, part.end);
  const inShort = new Set(shortLines.map((l) => l.speaker));
  // Everyone who has spoken up to the end of the part (in the generator, everyone speaks first thing).
  const everyone = c.characters.filter((x) => fullLines.some((l) => l.speaker === x));
  const knows = (path: readonly string[]) => knowsFact(state, path, id);
  const access = (path: readonly string[]) => (knows(path) ? "accessible" : "inaccessible") as "accessible" | "inaccessible";
  const setAccess = access([joiner]);

  const beliefs: BeliefQA[] = [];
  const first = (who: string) => {
    const k = knows([who]);
    beliefs.push({
      question: beliefQuestionFirst(fact.kind, fact.owner, who),
      question_type: `tom:belief:${access([who])}`,
      tom_type: "first-order",
      correct_answer: beliefAnswerFirst(fact, who, k),
      wrong_answer: beliefAnswerFirst(fact, who, !k),
      missed_info_accessibility: access([who]),
    });
  };
  const second = (who: string, other: string) => {
    const k = knows([who, other]);
    beliefs.push({
      question: beliefQuestionSecond(fact.kind, fact.owner, who, other),
      question_type: `tom:belief:${access([who, other])}`,
      // Cyclic: the belief chain comes back to its first character (whose own news it is).
      tom_type: who === fact.owner ? "second-order:cyclic" : "second-order:acyclic",
      correct_answer: beliefAnswerSecond(fact, who, other, k),
      wrong_answer: beliefAnswerSecond(fact, who, other, !k),
      missed_info_accessibility: access([who, other]),
    });
  };
  const witnesses = state.characters.filter((x) => x !== joiner && x !== fact.owner && knows([x]) && inShort.has(x));
  const witness = witnesses.length ? rng.pick(witnesses) : undefined;
  first(joiner);
  if (witness) first(witness);
  second(fact.owner, joiner);
  if (witness) {
    second(witness, joiner);
    if (rng.chance(0.5)) second(witness, fact.owner);
    else second(fact.owner, witness);
  }

  const knowers = everyone.filter((x) => knows([x]));
  const unaware = everyone.filter((x) => !knows([x]));
  const binaryLabel = (x: string): BinaryQA["correct_answer"] => (knows([x]) ? "yes" : inShort.has(x) ? "no" : "no:long");
  const other = rng.pick(fact.kind.values.filter((v) => v !== fact.value));
  return {
    set_id: `${conv}-${part.part}-${k}`,
    part_id: `${conv}-${part.part}`,
    conv_id: conv,
    short_context: renderContext(shortLines),
    full_context: renderContext(fullLines),
    joining_speaker: joiner,
    missed_info: factStatement(fact),
    missed_info_accessibility: setAccess,
    factQA: {
      question: factQuestion(fact.kind, fact.owner),
      correct_answer: factStatement(fact),
      wrong_answer: factStatement({ ...fact, value: other }),
      question_type: "fact",
      missed_info_accessibility: setAccess,
    },
    beliefQAs: beliefs,
    answerabilityQA_list: {
      question: ANSWERABILITY_LIST_Q,
      question_type: "tom:answerability:list",
      correct_answer: knowers,
      wrong_answer: unaware,
      missed_info_accessibility: setAccess,
    },
    answerabilityQAs_binary: everyone.map((x) => ({
      question: answerabilityBinaryQ(x),
      question_type: "tom:answerability:binary" as const,
      correct_answer: binaryLabel(x),
      missed_info_accessibility: setAccess,
    })),
    infoAccessibilityQA_list: {
      question: INFO_LIST_Q,
      question_type: "tom:info_accessibility:list",
      correct_answer: knowers,
      wrong_answer: unaware,
      missed_info_accessibility: setAccess,
    },
    infoAccessibilityQAs_binary: everyone.map((x) => ({
      question: infoBinaryQ(x),
      question_type: "tom:info_accessibility:binary" as const,
      correct_answer: binaryLabel(x),
      missed_info_accessibility: setAccess,
    })),
  };
}

/** The questions a set holds, counted as the official evaluator counts them (`total_num_q`). */
export function questionCount(set: FantomSet): number {
  return 3 + set.beliefQAs.length + set.answerabilityQAs_binary.length + set.infoAccessibilityQAs_binary.length;
}

/** Keeps the fact and list questions and the first beliefs and binaries, `keep` questions in all (>= 3). */
function trimSet(set: FantomSet, keep: number): FantomSet {
  let room = keep - 3;
  const take = <T>(xs: readonly T[]): T[] => {
    const n = Math.max(0, Math.min(room, xs.length));
    room -= n;
    return xs.slice(0, n);
  };
  const beliefQAs = take(set.beliefQAs);
  const answerabilityQAs_binary = take(set.answerabilityQAs_binary);
  const infoAccessibilityQAs_binary = take(set.infoAccessibilityQAs_binary);
  return { ...set, beliefQAs, answerabilityQAs_binary, infoAccessibilityQAs_binary };
}

export interface GeneratedFantom {
  readonly json: string;
  readonly sets: number;
  readonly questions: number;
  readonly conversations: number;
}

/**
 * Exactly `n` questions (n >= 3), counted as the official evaluator counts them: a fact question,
 * each belief question (asked free-form and as a multiple choice, counted once), two list
 * questions and the binary questions of every set. Whole sets, except that the last one keeps
 * only as many belief and binary questions as fit.
 */
export function generateFantom(n: number, seed: number, onProgress?: (done: number) => void): GeneratedFantom {
  if (!Number.isInteger(n) || n < 3) throw new RangeError(`FANToM needs at least 3 questions (a set's fact and two list questions), got ${n}`);
  const rng = Rng.seeded(`fantom:${seed}`);
  const sets: FantomSet[] = [];
  let count = 0;
  let conv = 0;
  while (count < n) {
    for (const set of generateConversation(rng.fork(`conversation ${conv}`), conv).sets) {
      const left = n - count;
      if (left <= 0) break;
      const q = questionCount(set);
      if (q <= left) {
        sets.push(set);
        count += q;
      } else if (left >= 3) {
        sets.push(trimSet(set, left));
        count += left;
      } else {
        // Too little room for a set of its own: shorten the previous set to make room for 3.
        const prev = sets.pop()!;
        const prevCount = questionCount(prev);
        sets.push(trimSet(prev, prevCount - (3 - left)), trimSet(set, 3));
        count += left;
      }
    }
    conv++;
    onProgress?.(count);
  }
  return { json: JSON.stringify(sets, null, 2) + "\n", sets: sets.length, questions: count, conversations: conv };
}

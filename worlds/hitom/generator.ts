/**
 * Writes new Hi-ToM questions in the upstream data format (`{"data": [...]}`, prompting type
 * CoTP), in the structure of the upstream generator: five agents, three rooms of five containers,
 * two objects per room. A story has one to three chapters (five, then three, then four agents):
 * the group enters a room and sees an object, each agent in turn moves it or stays, then exits,
 * and the group meets in the waiting room, where, in deception stories, they make public and
 * private claims (truths and lies). Distractors are mixed in. Each story is asked about its first
 * chapter's object at orders 0 to 4, with the 15 containers as choices. The labels are the world
 * model's, so they are right by construction; the same seed writes the same file.
 */
import { Rng } from "../core/rng.js";
import { AGENT_NAMES, CONTAINERS, OBJECTS, ROOMS } from "../core/vocabulary.js";
import type { HitomEntry } from "./dataset.js";
import { worldModelAnswer } from "./questions.js";
import { replayHitom } from "./replay.js";
import { renderChoices, renderQuestion, renderSentence, type HitomSentence } from "./sentences.js";
import { buildHitomScenario, locateIn } from "./story.js";
import { ANIMALS, PERSONAL_ITEMS, WAITING_ROOM } from "./vocabulary.js";

/** Chapters by story length: how many agents take part, and whether they talk afterwards (in deception stories). */
const CHAPTERS: readonly (readonly (readonly [number, boolean])[])[] = [
  [[5, true]],
  [
    [5, false],
    [3, true],
  ],
  [
    [5, true],
    [3, false],
    [4, true],
  ],
];

/** How often a distractor comes before a sentence (the upstream generator's noise rate). */
const DISTRACTOR_RATE = 0.1;

export interface GeneratedStory {
  readonly sentences: readonly HitomSentence[];
  readonly story: string;
  readonly choices: readonly string[];
  readonly questions: readonly { readonly order: number; readonly question: string; readonly answer: string }[];
}

export async function generateHitomStory(rng: Rng, opts: { deception: boolean; length: 1 | 2 | 3 }): Promise<GeneratedStory> {
  const agents = rng.sample(AGENT_NAMES, 5);
  const rooms = rng.sample(ROOMS, 3);
  const containers = rng.sample(CONTAINERS, 15);
  const objects = rng.sample(OBJECTS, 6);
  const roomContainers = rooms.map((_, i) => containers.slice(5 * i, 5 * i + 5));
  const where = new Map<string, string>(objects.map((o, j) => [o, roomContainers[j >> 1]![j % 2]!]));

  const sentences: HitomSentence[] = [];
  let asked: string | undefined;
  for (const [size, talk] of CHAPTERS[opts.length - 1]!) {
    const r = rng.int(rooms.length);
    const room = rooms[r]!;
    const here = roomContainers[r]!;
    const object = rng.pick([objects[2 * r]!, objects[2 * r + 1]!]);
    asked ??= object;
    const group = rng.sample(agents, size);
    sentences.push({ kind: "enter", agents: group, room }, { kind: "located", object, container: where.get(object)! });
    // Where each agent last saw the object: where it was when the agent left.
    const lastSeen = new Map<string, string>();
    for (const agent of group) {
      if (rng.chance(0.5)) {
        const to = rng.pick(here.filter((c) => c !== where.get(object)));
        where.set(object, to);
        sentences.push({ kind: "move", agent, object, container: to });
      } else {
        sentences.push({ kind: "stay", agent, room });
      }
      sentences.push({ kind: "exit", agents: [agent], room });
      lastSeen.set(agent, where.get(object)!);
    }
    sentences.push({ kind: "enter", agents: group, room: WAITING_ROOM });
    if (opts.deception && talk) sentences.push(...claims(rng, group, agents, object, here, where.get(object)!, lastSeen));
  }

  const story: HitomSentence[] = [];
  for (const s of sentences) {
    if (rng.chance(DISTRACTOR_RATE)) story.push(distractor(rng, agents, containers, objects));
    story.push(s);
  }

  const locate = locateIn("generated story");
  const scenario = buildHitomScenario(
    story.map((sentence, i) => ({ sentence, text: renderSentence(sentence), line: i + 1 })),
    locate,
  );
  const { episode } = await replayHitom(scenario, locate, { mentalStates: false });
  const chain = rng.sample(agents, 4);
  const questions = [0, 1, 2, 3, 4].map((order) => {
    const q = { agents: chain.slice(4 - order), object: asked! };
    const answer = worldModelAnswer(episode.finalState, q);
    if (answer === undefined) throw new Error(`generator bug: no answer for "${renderQuestion(q)}"`);
    return { order, question: renderQuestion(q), answer };
  });
  return {
    sentences: story,
    story: story.map((s, i) => `${i + 1} ${renderSentence(s)}`).join("\n") + "\n\n",
    choices: rng.shuffle(containers),
    questions,
  };
}

/**
 * What the group says in the waiting room: a public claim and a private message, or two private
 * messages, and a private message may go to an agent who was not in the room. A speaker says what
 * it believes (where it last saw the object) or lies: names a container where the object is not
 * and where it does not believe it is. A speaker never states a place it could not know (which
 * the leak audit would find: an early leaver "telling the truth" about a move it did not see).
 */
function claims(
  rng: Rng,
  group: readonly string[],
  everyone: readonly string[],
  object: string,
  containers: readonly string[],
  truth: string,
  lastSeen: ReadonlyMap<string, string>,
): HitomSentence[] {
  const outsiders = everyone.filter((a) => !group.includes(a));
  const say = (speaker: string) => {
    const belief = lastSeen.get(speaker)!;
    return rng.chance(0.25) ? belief : rng.pick(containers.filter((c) => c !== belief && c !== truth));
  };
  const whisper = (toOutsider: boolean): HitomSentence => {
    const [agent, other] = rng.sample(group, 2) as [string, string];
    const listener = toOutsider ? rng.pick(outsiders) : other;
    return { kind: "private_claim", agent, listener, object, container: say(agent) };
  };
  const shout = (): HitomSentence => {
    const agent = rng.pick(group);
    return { kind: "public_claim", agent, object, container: say(agent) };
  };
  const form = rng.int(outsiders.length ? 3 : 2);
  switch (form) {
    case 0:
      return [shout(), whisper(false)];
    case 1:
      return [whisper(false), whisper(false)];
    default:
      return [shout(), whisper(true)];
  }
}

function distractor(rng: Rng, agents: readonly string[], containers: readonly string[], objects: readonly string[]): HitomSentence {
  const agent = rng.pick(agents);
  switch (rng.int(4)) {
    case 0:
      return { kind: "remark", agent, verb: "saw", thing: rng.pick(ANIMALS) };
    case 1:
      return { kind: "remark", agent, verb: "lost", thing: rng.pick(PERSONAL_ITEMS) };
    case 2:
      return { kind: "remark", agent, verb: "likes", thing: rng.pick(containers) };
    default:
      return { kind: "remark", agent, verb: "dislikes", thing: rng.pick(objects) };
  }
}

export interface HitomFileText {
  /** The upstream JSON layout (one-space indent, as upstream's file). */
  readonly json: string;
  readonly questions: number;
}

/** `n` questions (five per story, orders 0 to 4; the last story may give fewer), seeded. */
export async function generateHitom(n: number, seed: number, onProgress?: (done: number) => void): Promise<HitomFileText> {
  const rng = Rng.seeded(`hitom:${seed}`);
  const data: HitomEntry[] = [];
  // Stories alternate deception and cycle through the lengths, so every cell fills evenly.
  for (let s = 0; data.length < n; s++) {
    const deception = s % 2 === 1;
    const length = (1 + (Math.floor(s / 2) % 3)) as 1 | 2 | 3;
    const story = await generateHitomStory(rng, { deception, length });
    const choices = renderChoices(story.choices);
    for (const q of story.questions) {
      if (data.length >= n) break;
      data.push({
        prompting_type: "CoTP",
        deception,
        story_length: length,
        question_order: q.order,
        sample_id: data.length,
        story: story.story,
        question: q.question,
        choices,
        answer: q.answer,
      });
    }
    onProgress?.(data.length);
  }
  return { json: JSON.stringify({ data }, null, 1) + "\n", questions: data.length };
}

/**
 * Generated conversation records with exact latent ground truth, in the records' own layout
 * (records.ts), one JSON object per line.
 *
 * A user is made once and keeps its traits across its records: a platform, opinions on every
 * target of that platform's topics (-2..2), three beliefs and three values, a usual tone and
 * message structure, a temperament (calm, even, intense) and a favourite emotion of each family.
 * For one record it replies to a thread on one of its platform's topics, and its latent states
 * follow from those traits and the thread:
 *
 *   stance         its opinion on the post's target (one step off, 15% of the time), and on
 *                  the topic's other target 40% of the time
 *   emotion        about the post's target, of the family its position there gives (for:
 *                  positive, against: negative, undecided: uncertain), its favourite of that
 *                  family 70% of the time; intensity = |position| + temperament, within 1..3;
 *                  one about the second target too, half the time it has a stance on it
 *   belief, value  the first of its own the topic brings up, else its first
 *   goal           from agreeing with the poster or not: agrees: praise (reviews), support the
 *                  poster or share (forum), share; disagrees, strongly against the target: mock
 *                  (sarcastic), vent (intense) or persuade; otherwise persuade or inform;
 *                  undecided: ask
 *   communication  its usual tone (blunt instead, a quarter of the times it feels strongly)
 *                  and its usual structure (another one, 15% of the time)
 *
 * The reply is written from those states (realize.ts). Its profile (HumanLM's persona layout)
 * lists what a persona generator would find in its history: its interests, its beliefs and
 * values, its two strongest opinions, its tone, structure and reply length; its history holds
 * three earlier replies made the same way. Every record and every user has a seeded stream of
 * its own: the same N and seed write the same file, byte for byte.
 */
import { Rng } from "../core/rng.js";
import { latentTexts, type Emotion, type Goal, type Latent, type Stance } from "./latent.js";
import { realizeReply } from "./realize.js";
import {
  AGE_GROUPS,
  BELIEFS,
  COMMENTS,
  EMOTIONS_BY_FAMILY,
  FIRST_NAMES,
  HANDLE_FIRST,
  HANDLE_SECOND,
  HOBBIES,
  LOCATIONS,
  OCCUPATIONS,
  PLATFORMS,
  POSITION_PHRASES,
  STRUCTURES,
  THE_POSTER,
  TONES,
  TOPICS,
  VALUES,
  type Family,
  type Platform,
  type Topic,
} from "./vocabulary.js";

export interface GeneratedUser {
  readonly name: string;
  readonly platform: Platform;
  /** Target -> position -2..2, for every target of the platform's topics. */
  readonly opinions: Readonly<Record<string, number>>;
  /** Indexes into BELIEFS and VALUES, most held first. */
  readonly beliefs: readonly number[];
  readonly values: readonly number[];
  readonly tone: string;
  readonly structure: string;
  /** -1 calm, 0 even, 1 intense: shifts every emotion's intensity. */
  readonly temperament: number;
  readonly favourite: Readonly<Record<Family, string>>;
  readonly demographics: Readonly<Record<string, string>>;
  readonly hobbies: readonly string[];
}

export interface GeneratedRecord {
  readonly id: string;
  readonly split: "train" | "val" | "test";
  readonly platform: Platform;
  readonly user_id: string;
  readonly post_id: string;
  readonly prompt: readonly { readonly role: string; readonly content: string }[];
  readonly completion: string;
  readonly states: Readonly<Record<string, string>>;
  readonly latent: Latent;
  readonly persona: {
    readonly demographics: Readonly<Record<string, string>>;
    readonly interests: readonly string[];
    readonly values: readonly string[];
    readonly communication: readonly string[];
    readonly statistics: readonly string[];
  };
  readonly history: readonly { readonly prompt: string; readonly completion: string }[];
}

const HANDLES = HANDLE_FIRST.length * HANDLE_SECOND.length;

/** The k-th handle of a seed's run: distinct for distinct k (7 is prime to the pool's size). */
function handle(k: number, offset: number): string {
  const i = (k * 7 + offset) % HANDLES;
  const base = `${HANDLE_FIRST[i % HANDLE_FIRST.length]}_${HANDLE_SECOND[Math.floor(i / HANDLE_FIRST.length)]}`;
  return k < HANDLES ? base : `${base}${Math.floor(k / HANDLES) + 1}`;
}

const topicsOf = (p: Platform) => TOPICS.filter((t) => t.platform === p);

/** Positions drawn with fewer undecided users than decided ones, as in opinion data. */
const POSITION_DRAW = [-2, -2, -1, -1, -1, 0, 1, 1, 1, 2, 2];

export function generateUser(seed: number, k: number, offset: number): GeneratedUser {
  const rng = Rng.seeded(`usersim:${seed}:user:${k}`);
  const platform = rng.pick(PLATFORMS);
  const opinions: Record<string, number> = {};
  for (const t of topicsOf(platform)) for (const target of t.targets) opinions[target] = rng.pick(POSITION_DRAW);
  const pickIndexes = (n: number) => rng.sample(Array.from({ length: n }, (_, i) => i), 3);
  return {
    name: handle(k, offset),
    platform,
    opinions,
    beliefs: pickIndexes(BELIEFS.length),
    values: pickIndexes(VALUES.length),
    tone: rng.pick(TONES),
    structure: rng.pick(STRUCTURES),
    temperament: rng.pick([-1, 0, 0, 1]),
    favourite: { positive: rng.pick(EMOTIONS_BY_FAMILY.positive), negative: rng.pick(EMOTIONS_BY_FAMILY.negative), uncertain: rng.pick(EMOTIONS_BY_FAMILY.uncertain) },
    demographics: { "age group": rng.pick(AGE_GROUPS), gender: "NA", location: rng.pick(LOCATIONS), occupation: rng.pick(OCCUPATIONS), nationality: "NA", other: "NA" },
    hobbies: rng.sample(HOBBIES, 2),
  };
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** The user's states for a reply to a post that takes `poster` (-2..2) on the topic's first target. */
export function latentFor(user: GeneratedUser, topic: Topic, poster: number, rng: Rng): Latent {
  const [first, second] = topic.targets;
  const drift = rng.chance(0.15) ? rng.pick([-1, 1]) : 0;
  const position = clamp(user.opinions[first]! + drift, -2, 2);
  const stances: Stance[] = [{ target: first, position }];
  if (rng.chance(0.4)) stances.push({ target: second, position: user.opinions[second]! });
  // Feelings follow the user's own position on what they are about.
  const feel = (pos: number, target: string): Emotion => {
    const family: Family = pos === 0 ? "uncertain" : pos > 0 ? "positive" : "negative";
    return { emotion: rng.chance(0.7) ? user.favourite[family] : rng.pick(EMOTIONS_BY_FAMILY[family]), intensity: clamp(Math.abs(pos) + user.temperament, 1, 3), target };
  };
  const emotions = [feel(position, first)];
  if (stances.length === 2 && rng.chance(0.5)) emotions.push(feel(stances[1]!.position, second));
  const belief = BELIEFS[user.beliefs.find((b) => topic.beliefs.includes(b)) ?? user.beliefs[0]!]!;
  const value = VALUES[user.values.find((v) => topic.values.includes(v)) ?? user.values[0]!]!;
  // What the reply is for follows from agreeing with the poster or not.
  let goal: Goal;
  if (position === 0) goal = { kind: "ask", target: first };
  else if (Math.sign(position) === Math.sign(poster)) {
    if (topic.platform === "reviews") goal = { kind: "praise", target: first };
    else if (topic.platform === "forum" && rng.chance(0.5)) goal = { kind: "support", target: THE_POSTER };
    else goal = { kind: "share", target: first };
  } else if (position === -2) {
    goal = { kind: user.tone === "sarcastic" ? "mock" : user.temperament > 0 ? "vent" : "persuade", target: first };
  } else goal = { kind: rng.chance(0.5) ? "persuade" : "inform", target: first };
  const strong = emotions[0]!.intensity === 3;
  const tone = strong && rng.chance(0.25) ? "blunt" : user.tone;
  const structure = rng.chance(0.15) ? rng.pick(STRUCTURES.filter((s) => s !== user.structure)) : user.structure;
  return { stances, emotions, belief, value, goal, communication: { tone, structure }, seed: rng.uint32() };
}

/** A thread on `topic` whose post takes `poster` on its first target; others may comment. */
function threadFor(user: GeneratedUser, topic: Topic, poster: number, rng: Rng, offset: number): { role: string; content: string }[] {
  const claim = poster > 0 ? topic.pro : topic.con;
  const others = (n: number) =>
    topic.platform === "email"
      ? rng.sample(FIRST_NAMES, n)
      : rng.sample(Array.from({ length: 40 }, (_, i) => handle(HANDLES - 1 - i, offset)).filter((h) => h !== user.name), n);
  const lines = rng.shuffle([...COMMENTS.for, ...COMMENTS.against, ...COMMENTS.unsure]);
  const comments = (names: readonly string[]) =>
    names.map((name, i) => {
      const target = rng.chance(0.7) ? topic.targets[0] : topic.targets[1];
      return { role: name, content: lines[i]!.replace("{t}", target) };
    });
  switch (topic.platform) {
    case "chat":
      return [
        { role: user.name, content: topic.request ?? topic.title },
        { role: "assistant", content: `${topic.intro} ${claim}` },
      ];
    case "email": {
      const [from, ...cc] = others(1 + rng.int(3));
      return [{ role: from!, content: `Subject: ${topic.title}\n\n${topic.intro} ${claim}` }, ...comments(cc)];
    }
    case "reviews":
      return [{ role: "listing", content: `${topic.title}\n\n${topic.intro} ${claim}` }, ...comments(others(rng.int(3)))];
    case "forum": {
      const [from, ...rest] = others(1 + rng.int(3));
      return [{ role: from!, content: `${topic.title}\n\n${topic.intro} ${claim}` }, ...comments(rest)];
    }
  }
}

function posterPosition(platform: Platform, rng: Rng): number {
  switch (platform) {
    case "forum":
      return rng.pick([-2, -1, 1, 2]);
    case "reviews":
      return rng.pick([1, 2]);
    case "chat":
      return 1;
    case "email":
      return rng.pick([-1, 1]);
  }
}

function personaOf(user: GeneratedUser, history: readonly { completion: string }[]) {
  const strongest = Object.entries(user.opinions)
    .filter(([, p]) => p !== 0)
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]) || (a[0] < b[0] ? -1 : 1))
    .slice(0, 2);
  const words = history.map((h) => h.completion.split(/\s+/).filter((w) => w !== "").length);
  const average = words.length ? Math.round(words.reduce((a, b) => a + b, 0) / words.length) : 0;
  return {
    demographics: user.demographics,
    interests: [...new Set(topicsOf(user.platform).map((t) => t.interest))].concat(user.hobbies),
    values: [
      ...user.beliefs.map((b) => `believes that ${BELIEFS[b]}`),
      ...user.values.map((v) => VALUES[v]!),
      ...strongest.map(([target, p]) => `${POSITION_PHRASES[p]} ${target}`),
    ],
    communication: [`${user.tone} tone`, user.structure],
    statistics: [`replies average about ${average} words`],
  };
}

/**
 * Record i of the run with `seed`, its user drawn from a pool of about n/4 users (`users` keeps
 * those already made: each is made once, whatever the number of its records).
 */
export function generateRecord(seed: number, i: number, n: number, users = new Map<number, GeneratedUser>()): GeneratedRecord {
  return generateConversation(seed, i, n, users).record;
}

/** A record with the user who wrote it and the topic of its thread (a room's simulated user keeps talking from them). */
export interface GeneratedConversation {
  readonly record: GeneratedRecord;
  readonly user: GeneratedUser;
  readonly topic: Topic;
}

export function generateConversation(seed: number, i: number, n: number, users = new Map<number, GeneratedUser>()): GeneratedConversation {
  const rng = Rng.seeded(`usersim:${seed}:record:${i}`);
  const offset = Rng.seeded(`usersim:${seed}:names`).int(HANDLES);
  const k = rng.int(Math.max(1, Math.ceil(n / 4)));
  let user = users.get(k);
  if (!user) users.set(k, (user = generateUser(seed, k, offset)));
  const topics = topicsOf(user.platform);
  const history = Array.from({ length: 3 }, () => {
    const topic = rng.pick(topics);
    const latent = latentFor(user, topic, posterPosition(user.platform, rng), rng);
    return { prompt: topic.title, completion: realizeReply(latent) };
  });
  const topic = rng.pick(topics);
  const poster = posterPosition(user.platform, rng);
  const prompt = threadFor(user, topic, poster, rng, offset);
  const latent = latentFor(user, topic, poster, rng);
  const u = rng.next();
  const record: GeneratedRecord = {
    id: `usersim-${seed}-${i}`,
    split: u < 0.8 ? "train" : u < 0.9 ? "val" : "test",
    platform: user.platform,
    user_id: user.name,
    post_id: `${topic.id}-${rng.int(1_000_000)}`,
    prompt,
    completion: realizeReply(latent),
    states: latentTexts(latent),
    latent,
    persona: personaOf(user, history),
    history,
  };
  return { record, user, topic };
}

export interface GeneratedUsersim {
  readonly records: readonly GeneratedRecord[];
  /** One record per line. */
  readonly jsonl: string;
}

export function generateUsersim(n: number, seed: number, onProgress?: (done: number) => void): GeneratedUsersim {
  const records: GeneratedRecord[] = [];
  const users = new Map<number, GeneratedUser>();
  for (let i = 0; i < n; i++) {
    records.push(generateRecord(seed, i, n, users));
    if (onProgress && (i % 256 === 255 || i === n - 1)) onProgress(i + 1);
  }
  return { records, jsonl: records.map((r) => JSON.stringify(r)).join("\n") + (records.length ? "\n" : "") };
}

/**
 * The users' latent profiles, one column per attribute (a million users are a few typed arrays,
 * not a million objects): interest in each topic, stance on each topic, activity and writing style.
 * Row-major by user: the topic values of user u are `[u * TOPIC_COUNT, (u + 1) * TOPIC_COUNT)`.
 */
import { STYLES, TOPICS, userName } from "./vocabulary.js";

export const TOPIC_COUNT = TOPICS.length;

export interface Population {
  readonly size: number;
  /** size x TOPIC_COUNT, in [0, 1]: how much a topic draws the user in. */
  readonly interests: Float32Array;
  /** size x TOPIC_COUNT, in [-1, 1]: against (-1) to in favour (+1). */
  readonly stances: Float32Array;
  /** Per step, the chance that a user with something new in the feed opens it. */
  readonly activity: Float32Array;
  /** Index into STYLES. */
  readonly styles: Uint8Array;
  /** Display names; absent for headless populations (names then come from userName). */
  readonly names?: readonly string[];
}

export function emptyPopulation(size: number, names?: readonly string[]): Population {
  if (names && names.length !== size) throw new RangeError(`${names.length} names for ${size} users`);
  return {
    size,
    interests: new Float32Array(size * TOPIC_COUNT),
    stances: new Float32Array(size * TOPIC_COUNT),
    activity: new Float32Array(size),
    styles: new Uint8Array(size),
    ...(names ? { names } : {}),
  };
}

export function nameOf(pop: Pick<Population, "names">, u: number): string {
  return pop.names?.[u] ?? userName(u);
}

/** The topic the user cares most about (the lowest index among ties). */
export function topInterest(pop: Population, u: number): number {
  let best = 0;
  const base = u * TOPIC_COUNT;
  for (let t = 1; t < TOPIC_COUNT; t++) if (pop.interests[base + t]! > pop.interests[base + best]!) best = t;
  return best;
}

/** One user's profile as an object (for files, prompts and people; never in the engine's loops). */
export interface ProfileRecord {
  readonly interests: Readonly<Record<string, number>>;
  readonly stances: Readonly<Record<string, number>>;
  readonly activity: number;
  readonly style: string;
}

/** Values rounded to 3 decimals, as files keep them (the engine reads them back exactly so). */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export function profileRecord(pop: Population, u: number): ProfileRecord {
  const interests: Record<string, number> = {};
  const stances: Record<string, number> = {};
  for (let t = 0; t < TOPIC_COUNT; t++) {
    interests[TOPICS[t]!.key] = round3(pop.interests[u * TOPIC_COUNT + t]!);
    stances[TOPICS[t]!.key] = round3(pop.stances[u * TOPIC_COUNT + t]!);
  }
  return { interests, stances, activity: round3(pop.activity[u]!), style: STYLES[pop.styles[u]!]! };
}

/** Words for a stance value, as a mental state or a profile says it. */
export function stanceWords(s: number): string {
  if (s >= 0.6) return "strongly in favour";
  if (s >= 0.15) return "in favour";
  if (s > -0.15) return "undecided";
  if (s > -0.6) return "against";
  return "strongly against";
}

/**
 * Simulation mode for Hi-ToM, made exact: read the story text, play it through the world model to
 * get its socialized context, then answer from the characters' observations alone.
 *
 * "A thinks B thinks C thinks the X is": keep, at each timestep, what A, B and C all perceived
 * (they were together, so each knows the others saw it), and read where that shared view last put
 * the X. A claim is not seen, it is heard: it moves its hearers' minds and the speaker's picture of
 * them. A hearer L who trusts the speaker S now believes it ("L"), and believes that S believes it
 * ("L thinks S"); S, trusted or not, thinks every hearer believes it ("S thinks L", as upstream's
 * generator has it). L trusts S when S was in the X's room more recently than L, which L can tell
 * from its own history: where it saw the X, when it left that room, and the exit order (announced
 * to all).
 */
import { perceivedText, type SocializedContext } from "../core/socialized-context.js";
import { replayHitom } from "./replay.js";
import { parseSentence, type HitomQuestion, type HitomSentence } from "./sentences.js";
import { buildHitomScenario, locateIn, parseStoryText } from "./story.js";

/** The agent's own socialized context for a story (observations only: it reasons from those). */
export async function simulateHitom(story: string): Promise<SocializedContext> {
  const locate = locateIn("story");
  const scenario = buildHitomScenario(parseStoryText(story, locate).sentences, locate);
  const { context } = await replayHitom(scenario, locate, { mentalStates: false });
  return context;
}

const SENTENCE_SPLIT = /(?<=\.)\s+/;

interface Perceived {
  readonly text: string;
  readonly sentence: HitomSentence | undefined;
}

function sentencesOf(text: string): Perceived[] {
  if (text === "" || text === "none") return [];
  return text.split(SENTENCE_SPLIT).map((t) => ({ text: t, sentence: parseSentence(t) }));
}

/** What the object's location is after a perceived sentence, if it says. */
function factOf(s: HitomSentence | undefined, object: string): string | undefined {
  if (!s) return undefined;
  if ((s.kind === "located" || s.kind === "move") && s.object === object) return s.container;
  return undefined;
}

/** A step of an object's history (HitomMinds.history). */
export type HitomHistoryEvent =
  | { readonly kind: "seen"; readonly place: string; readonly by: readonly string[] }
  | { readonly kind: "left"; readonly agents: readonly string[] }
  | { readonly kind: "claim"; readonly place: string; readonly speaker: string; readonly hearers: readonly string[]; readonly believers: readonly string[] };

const minds = new WeakMap<SocializedContext, HitomMinds>();

/** The minds of a context, read once per context: the solver and the compact context ask the same story's. */
export function mindsOf(ctx: SocializedContext): HitomMinds {
  let m = minds.get(ctx);
  if (!m) minds.set(ctx, (m = new HitomMinds(ctx)));
  return m;
}

/** Every character's observation history, read once from a socialized context. */
export class HitomMinds {
  /** The world's own view (the states), then each agent's perceived sentences, per timestep. */
  private readonly world: Perceived[][] = [];
  private readonly seen: Map<string, Perceived[]>[] = [];

  constructor(ctx: SocializedContext) {
    for (const step of ctx.socialized_context) {
      this.world.push(sentencesOf(step.state));
      const seen = new Map<string, Perceived[]>();
      for (const name of ctx.agents_names) {
        const text = perceivedText(step, name);
        if (text !== "") seen.set(name, sentencesOf(text));
      }
      this.seen.push(seen);
    }
  }

  /** The sentences every agent of `path` perceived at timestep index `t`. */
  private shared(path: readonly string[], t: number): Perceived[] {
    let out: Perceived[] | undefined;
    for (const agent of path) {
      const mine = this.seen[t]!.get(agent);
      if (!mine) return [];
      out = out === undefined ? mine : out.filter((p) => mine.some((q) => q.text === p.text));
      if (out.length === 0) return out;
    }
    return out ?? [];
  }

  /**
   * Whether `hearer` trusts `speaker` about `object` before timestep index `t`, judged from the
   * hearer's own history: where it saw the object, and who left that room last.
   */
  trusts(hearer: string, speaker: string, object: string, t: number): boolean {
    let here: string | undefined;
    let objectRoom: string | undefined;
    const lastExit = new Map<string, number>();
    for (let i = 0; i < t; i++) {
      for (const { sentence: s } of this.seen[i]!.get(hearer) ?? []) {
        if (!s) continue;
        if (s.kind === "enter" && s.agents.includes(hearer)) here = s.room;
        if (s.kind === "exit") {
          for (const a of s.agents) lastExit.set(`${a}>${s.room}`, i);
          if (s.agents.includes(hearer)) here = undefined;
        }
        if (factOf(s, object) !== undefined) objectRoom = here;
      }
    }
    if (objectRoom === undefined) return true;
    if (here === objectRoom) return false;
    const mine = lastExit.get(`${hearer}>${objectRoom}`);
    if (mine === undefined) return true;
    const theirs = lastExit.get(`${speaker}>${objectRoom}`);
    return theirs !== undefined && theirs > mine;
  }

  /** Where `path` believes `object` is ([] is the world itself), from the observations. */
  belief(path: readonly string[], object: string): string | undefined {
    let where: string | undefined;
    for (let t = 0; t < this.world.length; t++) {
      const view = path.length === 0 ? this.world[t]! : this.shared(path, t);
      for (const { sentence: s } of view) {
        const fact = factOf(s, object);
        if (fact !== undefined) {
          where = fact;
          continue;
        }
        if (!s || path.length === 0 || path.length > 2 || (s.kind !== "public_claim" && s.kind !== "private_claim") || s.object !== object) continue;
        const [first, second] = path as [string, string | undefined];
        // The speaker's own belief stays as it was; it thinks every hearer now believes it.
        if (first === s.agent) {
          if (second !== undefined && (s.kind === "public_claim" || s.listener === second)) where = s.container;
          continue;
        }
        // A claim reaches "hearer" and "hearer thinks speaker" when the hearer trusts the speaker.
        if (second !== undefined && second !== s.agent) continue;
        if (s.kind === "private_claim" && s.listener !== first) continue;
        if (this.trusts(first, s.agent, object, t)) where = s.container;
      }
    }
    return where;
  }

  /**
   * The history of `object` as the written context traces it (written-context.ts), in the story's
   * order: each sentence that says where it is, with the agents (of `names`, in that order) who
   * perceived that very sentence; each exit, from any room (exits are announced to all); each claim
   * about it that someone heard, with its hearers and those of them who trusted the speaker then.
   */
  history(object: string, names: readonly string[]): HitomHistoryEvent[] {
    const out: HitomHistoryEvent[] = [];
    for (let t = 0; t < this.world.length; t++) {
      const heard = (text: string) => names.filter((a) => this.seen[t]!.get(a)?.some((p) => p.text === text) ?? false);
      for (const { text, sentence: s } of this.world[t]!) {
        const place = factOf(s, object);
        if (place !== undefined) out.push({ kind: "seen", place, by: heard(text) });
        else if (s?.kind === "exit") out.push({ kind: "left", agents: s.agents });
        else if ((s?.kind === "public_claim" || s?.kind === "private_claim") && s.object === object) {
          const hearers = heard(text).filter((a) => a !== s.agent);
          const believers = hearers.filter((a) => this.trusts(a, s.agent, object, t));
          if (hearers.length) out.push({ kind: "claim", place: s.container, speaker: s.agent, hearers, believers });
        }
      }
    }
    return out;
  }

  /** The containers the story names where something is, was moved or is said to be, in the order it first does. */
  containers(): string[] {
    const out = new Set<string>();
    for (const step of this.world) {
      for (const { sentence: s } of step) if (s && (s.kind === "located" || s.kind === "move" || s.kind === "public_claim" || s.kind === "private_claim")) out.add(s.container);
    }
    return [...out];
  }

  /** The objects the story places, in the order it first does. */
  objects(): string[] {
    const out = new Set<string>();
    for (const step of this.world) for (const { sentence: s } of step) if (s && (s.kind === "located" || s.kind === "move")) out.add(s.object);
    return [...out];
  }

  answer(q: HitomQuestion): string | undefined {
    return this.belief(q.agents, q.object);
  }
}

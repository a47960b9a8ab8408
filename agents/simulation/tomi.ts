/**
 * Simulation mode for ToMi, made exact: read the story text, play it through the world model to
 * get its socialized context, then answer from the observations alone. For "A thinks B thinks",
 * keep only what A and B both perceived (they were together, so each knows the other saw it) and
 * read B's view of that; the same rule extends to any depth.
 */
import { DataError } from "../../worlds/core/errors.js";
import { perceivedText, type SocializedContext } from "../../worlds/core/socialized-context.js";
import { parseSentence, type TomiQuestion } from "../../worlds/tomi/sentences.js";
import { buildScenario, type SentenceAt } from "../../worlds/tomi/story.js";
import { replayTomi } from "../../worlds/tomi/replay.js";

/** Splits a story given as numbered lines ("1 Ella entered the garage.") into sentences. */
export function readStoryText(story: string, source = "story"): SentenceAt[] {
  const out: SentenceAt[] = [];
  story.split("\n").forEach((raw, i) => {
    const text = raw.replace(/^\s*\d+\s+/, "").trim();
    if (text === "") return;
    const sentence = parseSentence(text);
    if (!sentence) throw new DataError(source, { line: i + 1 }, `unknown sentence: "${text}"`);
    out.push({ sentence, text, line: i + 1 });
  });
  return out;
}

/** The agent's own socialized context for a story (observations only: it reasons from those). */
export async function simulateTomi(story: string): Promise<SocializedContext> {
  const scenario = buildScenario(readStoryText(story), "story");
  const { context } = await replayTomi(scenario, "story", { mentalStates: false });
  return context;
}

const FACT_RE = /(?:The (\S+) is in the (\S+)\.|\S+ moved the (\S+) to the (\S+)\.)/g;

/** object -> container facts in a text, in order. */
function facts(text: string): [string, string][] {
  return Array.from(text.matchAll(FACT_RE), (m) => (m[1] !== undefined ? [m[1], m[2]!] : [m[3]!, m[4]!]));
}

const SENTENCE_SPLIT = /(?<=\.)\s+/;

/**
 * Every agent's observation history, read once from a socialized context, and what any group of
 * agents perceived together. For a path [A, B], the shared view is, at each timestep, the
 * sentences both A and B perceived (they were together, so each knows the other saw it); an
 * empty path is the world's own view (the states).
 */
export class Perspectives {
  private readonly steps: { readonly state: string; readonly seen: ReadonlyMap<string, readonly string[]> }[] = [];
  private readonly cache = new Map<string, readonly [string, string][]>();

  constructor(ctx: SocializedContext) {
    for (const step of ctx.socialized_context) {
      const seen = new Map<string, readonly string[]>();
      for (const name of ctx.agents_names) {
        const text = perceivedText(step, name);
        if (text !== "") seen.set(name, text.split(SENTENCE_SPLIT));
      }
      this.steps.push({ state: step.state, seen });
    }
  }

  /** The shared view of `path`, one string per timestep where they perceived something together. */
  sharedView(path: readonly string[]): string[] {
    const out: string[] = [];
    for (const step of this.steps) {
      if (path.length === 0) {
        if (step.state !== "none") out.push(step.state);
        continue;
      }
      let shared: readonly string[] | undefined;
      for (const agent of path) {
        const sentences = step.seen.get(agent);
        if (!sentences) {
          shared = undefined;
          break;
        }
        shared = shared === undefined ? sentences : shared.filter((x) => sentences.includes(x));
        if (shared.length === 0) break;
      }
      if (shared && shared.length) out.push(shared.join(" "));
    }
    return out;
  }

  /** object -> container facts in the shared view of `path`, in order. */
  facts(path: readonly string[]): readonly [string, string][] {
    const key = path.join(">");
    let f = this.cache.get(key);
    if (!f) {
      f = this.sharedView(path).flatMap(facts);
      this.cache.set(key, f);
    }
    return f;
  }

  /** Where `path` last saw `object`: the last agent's belief, as the others on the path see it. */
  lastSeen(path: readonly string[], object: string): string | undefined {
    let where: string | undefined;
    for (const [o, c] of this.facts(path)) if (o === object) where = c;
    return where;
  }
}

export function answerTomi(views: Perspectives, q: TomiQuestion): string | undefined {
  switch (q.kind) {
    case "reality":
      return views.lastSeen([], q.object);
    case "memory":
      return views.facts([]).find(([o]) => o === q.object)?.[1];
    case "first_order":
      return views.lastSeen([q.agent], q.object);
    case "second_order":
      return views.lastSeen([q.agent, q.other], q.object);
  }
}

/**
 * Simulation mode for ToMi, made exact: read the story text, play it through the world model to
 * get its socialized context, then answer from the observations alone. For "A thinks B thinks",
 * keep only what A and B both perceived (they were together, so each knows the other saw it) and
 * read B's view of that; the same rule extends to any depth.
 */
import { DataError } from "../core/errors.js";
import { SAME_AS_STATE, stripMentalStates, type SocializedContext } from "../core/socialized-context.js";
import type { TomiQuestion } from "./sentence.js";
import { parseSentence } from "./sentences.js";
import { buildScenario, type SentenceAt } from "./story.js";
import type { Episode } from "../core/episode.js";
import { playScript } from "../core/script.js";
import { toSocializedContext } from "../core/socialize.js";
import { initialTomiState, TomiWorld } from "./world.js";

const tomiWorldForAgent = new TomiWorld();

/** Splits a story given as numbered lines ("1 Ella entered the garage.") into sentences. */
export function readStoryText(story: string, source = "story"): SentenceAt[] {
  const out: SentenceAt[] = [];
  const lines = story.split("\n");
  // Indexed loops in this file: they run per line of every story, or per question.
  for (let i = 0; i < lines.length; i++) {
    const text = withoutLineNumber(lines[i]!);
    if (text === "") continue;
    const sentence = parseSentence(text);
    if (!sentence) throw new DataError(source, { line: i + 1 }, `unknown sentence: "${text}"`);
    out.push({ sentence, text, line: i + 1 });
  }
  return out;
}

/** The agent's own episode of a story: its world model's observations, no mental states. */
export function simulateTomiEpisode(story: string): Episode {
  // Depth 0: the world tracks no beliefs; the agent reasons from observations alone.
  const scenario = buildScenario(readStoryText(story), "story", 0);
  return playScript(tomiWorldForAgent, initialTomiState(scenario.init), scenario.script, { mentalStates: false });
}

/** The agent's own socialized context for a story (observations only: it reasons from those). */
export function simulateTomi(story: string): SocializedContext {
  return toSocializedContext(simulateTomiEpisode(story), { mentalStates: false });
}

/** The line without its bAbI number ("1 Ella entered the garage." -> "Ella entered the garage."), trimmed. */
function withoutLineNumber(raw: string): string {
  // The common shape ("<digits> <sentence>") without a regular expression: a story is read per
  // story of a run, and this was most of that reading's time.
  let j = 0;
  while (j < raw.length && raw.charCodeAt(j) >= 48 && raw.charCodeAt(j) <= 57) j++;
  if (j > 0 && raw.charCodeAt(j) === 32) return raw.slice(j + 1).trim();
  return raw.replace(/^\s*\d+\s+/, "").trim();
}

const FACT_RE = /^(?:The (\S+) is in the (\S+)\.|\S+ moved the (\S+) to the (\S+)\.)$/;
const SENTENCE_SPLIT = /(?<=\.)\s+/;

type Fact = readonly [object: string, container: string];

/** Sentences perceived at one timestep, each with what it says of where an object is (or null). */
interface View {
  readonly sentences: readonly string[];
  readonly facts: readonly (Fact | null)[];
}

const NO_VIEW: View = { sentences: [], facts: [] };

/** What each sentence says of where an object is (stories share most sentences), bounded. */
const factOf = new Map<string, Fact | null>();

/**
 * Every agent's observation history, read once from a socialized context, and what any group of
 * agents perceived together. For a path [A, B], the shared view is, at each timestep, the
 * sentences both A and B perceived (they were together, so each knows the other saw it); an
 * empty path is the world's own view (the states).
 */
export class Perspectives {
  /** Per timestep: the state's sentences, and each agent's perceived sentences. */
  private readonly steps: { readonly state: View; readonly seen: ReadonlyMap<string, View> }[] = [];
  private readonly cache = new Map<string, readonly Fact[]>();

  private constructor() {}

  /** From a socialized context (the agent's own, or one a model wrote). */
  static fromContext(ctx: SocializedContext): Perspectives {
    const p = new Perspectives();
    for (const step of ctx.socialized_context) {
      const state = viewOf(step.state === "none" ? [] : step.state.split(SENTENCE_SPLIT));
      const seen = new Map<string, View>();
      for (const line of step.observations) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon);
        const raw = line.slice(colon + 1).trim();
        if (raw === "none") continue;
        // `<same_as_state />` is the whole state; mental states are not perceptions.
        const same = raw.startsWith(SAME_AS_STATE);
        const text = stripMentalStates(same ? raw.slice(SAME_AS_STATE.length) : raw);
        p.see(seen, name, same ? state : NO_VIEW, text);
      }
      p.steps.push({ state, seen });
    }
    return p;
  }

  /** From the episode records the context is written from (the same observations, unformatted). */
  static fromEpisode(episode: Pick<Episode, "agents" | "steps">): Perspectives {
    const p = new Perspectives();
    const { steps, agents } = episode;
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s]!;
      const state = step.state === "none" ? NO_VIEW : viewOf(step.state.split(SENTENCE_SPLIT));
      const seen = new Map<string, View>();
      for (let a = 0; a < agents.length; a++) {
        const name = agents[a]!;
        const obs = step.observations[name];
        if (!obs || obs.text === "") continue;
        p.see(seen, name, obs.sameAsState ? state : NO_VIEW, obs.sameAsState ? "" : obs.text);
      }
      p.steps.push({ state, seen });
    }
    return p;
  }

  /** `whole` (the state, for `<same_as_state />`) and then what `text` adds: what `name` perceived. */
  private see(seen: Map<string, View>, name: string, whole: View, text: string): void {
    // Most observations are the whole state: its view (and its facts) is shared, not rebuilt.
    const view = text === "" || text === "none" ? whole : viewOf(whole.sentences.concat(text.split(SENTENCE_SPLIT)));
    if (view.sentences.length) seen.set(name, view);
  }

  /**
   * object -> container facts in the shared view of `path`, in order. The shared view of a path
   * [A, B] is, at each timestep, the sentences both A and B perceived (they were together, so
   * each knows the other saw it); an empty path is the world's own view (the states).
   */
  facts(path: readonly string[]): readonly Fact[] {
    const key = path.join(">");
    let found = this.cache.get(key);
    if (found) return found;
    const out: Fact[] = [];
    for (let s = 0; s < this.steps.length; s++) {
      const step = this.steps[s]!;
      const first = path.length === 0 ? step.state : step.seen.get(path[0]!);
      if (!first) continue;
      for (let i = 0; i < first.facts.length; i++) {
        const f = first.facts[i];
        if (!f) continue;
        let shared = true;
        for (let k = 1; k < path.length && shared; k++) shared = step.seen.get(path[k]!)?.sentences.includes(first.sentences[i]!) ?? false;
        if (shared) out.push(f);
      }
    }
    found = out;
    this.cache.set(key, found);
    return found;
  }

  /**
   * Every place the world's own view (the states) puts `object`, in order, each with the agents
   * (of `agents`, in that order) who perceived that very sentence: who saw the object where. An
   * agent's view and a pair's are read off these (the last sighting that names them); the states
   * hold every fact an agent perceives (an entering agent's sight of the room is in the state).
   */
  sightings(object: string, agents: readonly string[]): { place: string; by: string[] }[] {
    const out: { place: string; by: string[] }[] = [];
    for (let s = 0; s < this.steps.length; s++) {
      const { state, seen } = this.steps[s]!;
      for (let i = 0; i < state.facts.length; i++) {
        const f = state.facts[i];
        if (!f || f[0] !== object) continue;
        const sentence = state.sentences[i]!;
        out.push({ place: f[1], by: agents.filter((a) => seen.get(a)?.sentences.includes(sentence) ?? false) });
      }
    }
    return out;
  }

  /** Where `path` last saw `object`: the last agent's belief, as the others on the path see it. */
  lastSeen(path: readonly string[], object: string): string | undefined {
    const facts = this.facts(path);
    for (let i = facts.length - 1; i >= 0; i--) if (facts[i]![0] === object) return facts[i]![1];
    return undefined;
  }
}

function viewOf(sentences: readonly string[]): View {
  return { sentences, facts: sentences.map(factOfSentence) };
}

/** What a sentence says of where an object is, or null (stories share most sentences: memoized, bounded). */
function factOfSentence(sentence: string): Fact | null {
  let f = factOf.get(sentence);
  if (f === undefined) {
    const m = FACT_RE.exec(sentence);
    f = m ? (m[1] !== undefined ? [m[1], m[2]!] : [m[3]!, m[4]!]) : null;
    if (factOf.size > 50_000) factOf.clear();
    factOf.set(sentence, f);
  }
  return f;
}

export function answerTomi(views: Perspectives, q: TomiQuestion): string | undefined {
  switch (q.kind) {
    case "reality":
      return views.lastSeen([], q.object);
    case "memory": {
      const facts = views.facts([]);
      for (let i = 0; i < facts.length; i++) if (facts[i]![0] === q.object) return facts[i]![1];
      return undefined;
    }
    case "first_order":
      return views.lastSeen([q.agent], q.object);
    case "second_order":
      return views.lastSeen([q.agent, q.other], q.object);
  }
}

/**
 * Simulation mode for FANToM, made exact: read the conversation text, replay it through the world
 * (who was present for each line, from the text alone), then answer from the socialized context's
 * observation histories. A character knows the fact if it perceived a line that carries it; A
 * thinks B knows it if A and B perceived such a line together. The lines that carry the fact are
 * found from the question alone: in generated conversations by the facts' language (exact), in
 * the official data by word overlap (a heuristic: the limit of text understanding here).
 */
import { perceivedText, type SocializedContext } from "../core/socialized-context.js";
import { inferPresence, parseContext, type Utterance } from "./conversation.js";
import {
  beliefAnswerFirst,
  beliefAnswerSecond,
  parseBeliefQuestion,
  type Fact,
} from "./facts.js";
import { beliefPath } from "./labels.js";
import { locateByLanguage, locateByOverlap, type Located } from "./locate.js";
import { replayConversation } from "./replay.js";
import { RecentCache } from "../core/recent-cache.js";
import { listNames } from "./world.js";
import { cosine, LexicalEmbedder } from "../core/embedder.js";

/** What a question asks, read from its text. */
export type FantomAsk =
  | { readonly kind: "fact"; readonly question: string }
  | { readonly kind: "belief"; readonly question: string; readonly options?: readonly [string, string] }
  | { readonly kind: "list"; readonly about: string }
  | { readonly kind: "binary"; readonly who: string; readonly about: string };

export function readAsk(question: string): FantomAsk {
  const lines = question.split("\n");
  const about = /^(?:Target|Information): (.*)$/.exec(lines[0]!)?.[1];
  const asked = lines.find((l) => l.startsWith("Question: "))?.slice("Question: ".length) ?? question;
  if (about !== undefined) {
    const who = /^Does (.+?) know\b/.exec(asked)?.[1];
    return who !== undefined ? { kind: "binary", who, about } : { kind: "list", about };
  }
  const a = /^\(a\) (.*)$/m.exec(question)?.[1];
  const b = /^\(b\) (.*)$/m.exec(question)?.[1];
  if (a !== undefined && b !== undefined && question.includes("Choose an answer from above:")) {
    return { kind: "belief", question: lines[0]!, options: [a, b] };
  }
  if (/^(What|How) (does|would|did) \S+ (think|believe|feel)/i.test(question) || parseBeliefQuestion(question)) return { kind: "belief", question };
  return { kind: "fact", question };
}

/**
 * Every character's observation history, read once from a socialized context: at each timestep,
 * who perceived it and what was said ("Linda said: ..."). What a group perceived together is
 * what each knows the others perceived.
 */
export class ConversationViews {
  private readonly steps: { readonly text: string; readonly perceivers: ReadonlySet<string> }[] = [];

  constructor(readonly context: SocializedContext) {
    for (const step of context.socialized_context) {
      const perceivers = new Set(context.agents_names.filter((a) => perceivedText(step, a) !== ""));
      this.steps.push({ text: step.state, perceivers });
    }
  }

  /** Did everyone on `path` perceive, together, a timestep where one of `lines` was said? */
  heardTogether(path: readonly string[], lines: readonly Utterance[]): boolean {
    const said = lines.map((u) => `${u.speaker} said: "${u.text}"`);
    return this.steps.some((s) => path.every((a) => s.perceivers.has(a)) && said.some((x) => s.text.includes(x)));
  }
}

interface Simulated {
  readonly utts: readonly Utterance[];
  readonly views: ConversationViews;
  readonly characters: readonly string[];
}

const simulations = new RecentCache<string, Promise<Simulated>>(64);

/** The agent's own socialized context of a conversation (observations only: it reasons from those). */
export function simulateFantom(story: string): Promise<Simulated> {
  let s = simulations.get(story);
  if (!s) {
    s = (async () => {
      const utts = parseContext(story, "conversation", "context");
      const { context } = await replayConversation(utts, { mentalStates: false });
      return { utts, views: new ConversationViews(context), characters: [...new Set(utts.map((u) => u.speaker))] };
    })();
    simulations.set(story, s);
  }
  return s;
}

function locate(sim: Simulated, query: string, factQuestion: string | undefined): Located | undefined {
  const byLanguage = factQuestion !== undefined ? locateByLanguage(sim.utts, factQuestion) : undefined;
  if (byLanguage) return byLanguage;
  const presence = inferPresence(sim.utts);
  return locateByOverlap(sim.utts, presence.hearers, presence.characters, query);
}

/** A fact question inside "Target: ..." / "Information: <question> <answer>". */
function factQuestionIn(about: string): string {
  const i = about.indexOf("?");
  return i < 0 ? about : about.slice(0, i + 1);
}

const UNAWARE_RE = /\b(not|n't|unaware|no idea|unknown|unsure|never|nothing)\b/i;
const lexical = new LexicalEmbedder();

export async function answerFantom(story: string, question: string): Promise<{ answer: string; context: SocializedContext }> {
  const sim = await simulateFantom(story);
  const ask = readAsk(question);
  const context = sim.views.context;
  const lines = (l: Located | undefined) => (l ? l.lines.map((i) => sim.utts[i]!) : []);

  switch (ask.kind) {
    case "fact": {
      const located = locate(sim, ask.question, ask.question);
      return { answer: located?.statement ?? "I do not know.", context };
    }
    case "list": {
      const located = locate(sim, ask.about, factQuestionIn(ask.about));
      const knowers = sim.characters.filter((c) => sim.views.heardTogether([c], lines(located)));
      return { answer: knowers.length ? listNames(knowers) : "None of them.", context };
    }
    case "binary": {
      const located = locate(sim, ask.about, factQuestionIn(ask.about));
      const knows = sim.characters.includes(ask.who) && sim.views.heardTogether([ask.who], lines(located));
      return { answer: knows ? "yes" : "no", context };
    }
    case "belief": {
      const parsed = parseBeliefQuestion(ask.question);
      const query = [ask.question, ...(ask.options ?? [])].join(" ");
      const located = locate(sim, query, parsed ? factQuestionOf(parsed) : undefined);
      const secondOrder = parsed ? parsed.path.length === 2 : /\bbelief|think[s]? (that )?\S+ (believe|know|think)/i.test(ask.question);
      const path = parsed?.path ?? beliefPath(ask.question, sim.characters, secondOrder);
      if (!path) return { answer: "I do not know.", context };
      const aware = sim.views.heardTogether(path, lines(located));
      const own = ownBeliefAnswer(path, aware, located?.fact, located?.statement);
      if (!ask.options) return { answer: own, context };
      return { answer: `(${chooseOption(ask.options, own, aware, located?.fact !== undefined)})`, context };
    }
  }
}

function factQuestionOf(p: { kind: { question: string }; owner: string }): string {
  return p.kind.question.replace("{owner}", p.owner);
}

/** The free-form answer: the fact's belief sentence, or (official data) a plain description. */
function ownBeliefAnswer(path: readonly string[], aware: boolean, fact: Fact | undefined, statement: string | undefined): string {
  if (fact) return path.length === 1 ? beliefAnswerFirst(fact, path[0]!, aware) : beliefAnswerSecond(fact, path[0]!, path[1]!, aware);
  const [who, other] = path as [string, string | undefined];
  const what = statement ? `: ${statement}` : ".";
  if (other === undefined) return aware ? `${who} knows about it${what}` : `${who} does not know about it, because ${who} was not there when it was discussed.`;
  return aware
    ? `${who} thinks ${other} knows about it${what}`
    : `${who} thinks ${other} does not know about it, because ${other} was not there when it was discussed.`;
}

/**
 * The option that says what the simulation found: in generated data, the one that is the agent's
 * own answer; otherwise, the one that does (or does not) sound unaware, falling back to lexical
 * closeness to the agent's own answer.
 */
function chooseOption(options: readonly [string, string], own: string, aware: boolean, exact: boolean): "a" | "b" {
  if (exact) {
    const i = options.indexOf(own);
    if (i >= 0) return i === 0 ? "a" : "b";
  }
  const unaware = options.map((o) => UNAWARE_RE.test(o));
  if (unaware[0] !== unaware[1]) return (aware ? !unaware[0] : unaware[0]) ? "a" : "b";
  const [v0, v1, vo] = lexical.embed([options[0], options[1], own]) as [Float32Array, Float32Array, Float32Array];
  return cosine(vo, v0) >= cosine(vo, v1) ? "a" : "b";
}

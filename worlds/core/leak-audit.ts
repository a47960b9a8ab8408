/**
 * The information-leak audit: does an action's content use a fact its agent never perceived?
 *
 * It reads an episode as its socialized context, one timestep at a time, as the agents lived it:
 * the world's `state` text says what happened (and so what is true), each agent's observation
 * says what it perceived. A world supplies its fact vocabulary (FactVocabulary, one module per
 * world, named by its entry point as `facts`): which facts a text states, which facts a world
 * sentence makes true (a claim states a location without making it true), and which facts a
 * structured action states. Then, for each action at timestep t:
 *
 *   used   = the facts its structure states, and those its text states (the rendered action, a
 *            model's raw output, an utterance), matched against the vocabulary;
 *   leak   = a used fact that is true when the agent acts and that the agent does not hold from
 *            its perceptions: nothing it perceived up to and including timestep t stated it (seen,
 *            or told by someone it heard), or it last perceived it end (it saw the object moved on).
 *
 * A used fact that is not true is a guess or a lie, not a leak. An agent that perceived a fact
 * and did not see it end, and uses it after it stopped and started being true again unseen, is
 * not leaking (it believes what it saw). What an agent perceived is what its observation says:
 * mental states (the world model's annotations) are not perception and are left out.
 */
import { perceivedText, splitAgentLine, type SocializedContext, type SocializedStep } from "./socialized-context.js";

/** A statement about the world: "onion@red_box" / "the onion is in the red_box". */
export interface Fact {
  readonly id: string;
  readonly text: string;
}

/** How a world's texts and actions state facts. */
export interface FactVocabulary {
  /** Facts a text states: a world sentence, an observation, an action line, a model's free text. */
  facts(text: string): readonly Fact[];
  /**
   * What one sentence of the world's `state` text does to the truth: the facts it makes true (a
   * move, an object seen where it is, an utterance), and the ids of facts it ends (the object's
   * other places; ids that are not true are ignored).
   */
  update(sentence: string): { readonly begin: readonly Fact[]; readonly end: readonly string[] };
  /** Facts an action states by its structure (a claim's object and container, an utterance's fact ids). */
  stated?(action: unknown): readonly Fact[];
  /** The events of a world `state` text (default: its sentences). */
  split?(stateText: string): readonly string[];
}

/**
 * A world's fact vocabulary, supplied by the world's own module (worlds/<name>/leak-facts.ts) and
 * named by its entry point (WorldEntry.facts): a vocabulary for one episode, from its socialized
 * context and, when the log lets the world's initial state be rebuilt, from that state (its names,
 * and what is true before any sentence says it).
 */
export interface FactSource {
  forEpisode(context: SocializedContext, initialState?: unknown): { readonly vocabulary: FactVocabulary; readonly initialTruths: readonly Fact[] };
  /** Whether a sentence of a world's state is this world's (which world wrote an imported context). */
  reads(sentence: string): boolean;
}

/** One action to audit: the agent, its timestep, and whatever the log has of it. */
export interface AuditTurn {
  readonly agent: string;
  readonly timestep: number;
  /** The structured action, when logged. */
  readonly action?: unknown;
  /** The action as the socialized context writes it ("publicly claims that onion is in the red_box"). */
  readonly actionText?: string;
  /** A model's raw output (its reasoning and its action), when logged. */
  readonly raw?: string;
  /** Which of several alternatives at one decision point (GRPO samples), for reports. */
  readonly sample?: number;
}

export interface Leak {
  readonly agent: string;
  readonly timestep: number;
  readonly sample?: number;
  readonly fact: Fact;
  /** Where the action states it: its structure or rendered form ("action"), or free text ("text"). */
  readonly via: "action" | "text";
  /** The timestep whose state first shows the fact true (0: true from the start). */
  readonly since: number;
  /** The world sentence that made it true (or first showed it), the timestep it was in, and who perceived it. */
  readonly source?: string;
  readonly sourceAt?: number;
  readonly perceivedBy: readonly string[];
  /** Why the agent could not know it, in words. */
  readonly why: string;
}

interface Truth {
  readonly fact: Fact;
  readonly since: number;
  source?: string;
  sourceAt?: number;
  perceivedBy: readonly string[];
}

export interface AgentAudit {
  readonly actions: number;
  readonly leaks: number;
}

export interface EpisodeAudit {
  readonly actions: number;
  readonly leaks: readonly Leak[];
  readonly byAgent: Readonly<Record<string, AgentAudit>>;
}

const SENTENCES = /(?<=[.!?]["']?)\s+|\n+/;

/** The sentences of a world text (its events, each ending with a period). */
export function sentencesOf(text: string): string[] {
  return text
    .split(SENTENCES)
    .map((s) => s.trim())
    .filter((s) => s !== "" && s !== "none");
}

/**
 * Audits an episode timestep by timestep. `step` reads a socialized step and audits the actions
 * taken at it; `check` audits an action an agent could take at the last step read (GRPO's
 * sampled replies). The same vocabulary and the same initial truths give the same verdicts.
 */
export class LeakAuditor {
  private readonly truths = new Map<string, Truth>();
  private readonly known = new Map<string, Set<string>>();
  private readonly perceived = new Map<string, string>();
  private readonly counts = new Map<string, { actions: number; leaks: number }>();
  private readonly all: Leak[] = [];
  private timestep = 0;
  private actions = 0;

  constructor(
    private readonly agents: readonly string[],
    private readonly vocabulary: FactVocabulary,
    initialTruths: readonly Fact[] = [],
  ) {
    for (const fact of initialTruths) this.truths.set(fact.id, { fact, since: 0, perceivedBy: [] });
    for (const a of agents) {
      this.known.set(a, new Set());
      this.counts.set(a, { actions: 0, leaks: 0 });
    }
  }

  /** An auditor that has read `context` up to and including `timestep`, auditing none of its actions (to `check` alternatives there). */
  static at(context: SocializedContext, vocabulary: FactVocabulary, initialTruths: readonly Fact[], timestep: number): LeakAuditor {
    const auditor = new LeakAuditor(context.agents_names, vocabulary, initialTruths);
    for (const step of context.socialized_context) {
      if (Number.parseInt(step.timestep, 10) > timestep) break;
      auditor.step(step, []);
    }
    return auditor;
  }

  /** Reads timestep `step` (the world's state and each agent's observation), then audits its actions. */
  step(step: SocializedStep, turns?: readonly AuditTurn[]): Leak[] {
    const t = Number.parseInt(step.timestep, 10);
    this.timestep = Number.isFinite(t) ? t : this.timestep + 1;
    const perceivedNow = new Map<string, string>();
    for (const a of this.agents) {
      const text = perceivedText(step, a);
      perceivedNow.set(a, text);
      this.perceived.set(a, text);
      // What the agent perceived stated (seen or told) is known; what it saw end (the object moved on) is not any more.
      const known = this.known.get(a)!;
      for (const event of text === "" ? [] : (this.vocabulary.split?.(text) ?? sentencesOf(text))) {
        for (const id of this.vocabulary.update(event).end) known.delete(id);
        for (const f of this.vocabulary.facts(event)) known.add(f.id);
      }
    }
    // What the state's sentences make true, and who perceived each sentence.
    const events = step.state === "none" ? [] : (this.vocabulary.split?.(step.state) ?? sentencesOf(step.state));
    for (const sentence of events) {
      const { begin, end } = this.vocabulary.update(sentence);
      for (const id of end) this.truths.delete(id);
      const perceivedBy = this.agents.filter((a) => perceivedNow.get(a)!.includes(sentence));
      for (const fact of begin) {
        const had = this.truths.get(fact.id);
        if (had) {
          // Already true (since the start, or said again): the first sentence that shows it is its source.
          if (had.source === undefined) Object.assign(had, { source: sentence, sourceAt: this.timestep, perceivedBy });
          continue;
        }
        this.truths.set(fact.id, { fact, since: this.timestep, source: sentence, sourceAt: this.timestep, perceivedBy });
      }
    }
    const todo: readonly AuditTurn[] =
      turns ??
      step.actions.flatMap((line): AuditTurn[] => {
        const { name, text } = splitAgentLine(line);
        return this.known.has(name) && text !== "none" && text !== "" ? [{ agent: name, timestep: this.timestep, actionText: text }] : [];
      });
    const out: Leak[] = [];
    for (const turn of todo) out.push(...this.audit(turn, true));
    return out;
  }

  /** The leaks of an action `agent` could take at the last timestep read (counted in no summary). */
  check(turn: Omit<AuditTurn, "timestep">): Leak[] {
    return this.audit({ ...turn, timestep: this.timestep }, false);
  }

  summary(): EpisodeAudit {
    return {
      actions: this.actions,
      leaks: this.all.slice(),
      byAgent: Object.fromEntries([...this.counts].map(([a, c]) => [a, { actions: c.actions, leaks: c.leaks }])),
    };
  }

  private audit(turn: AuditTurn, record: boolean): Leak[] {
    const known = this.known.get(turn.agent);
    if (!known) return [];
    const used = new Map<string, { fact: Fact; via: "action" | "text" }>();
    const use = (facts: readonly Fact[], via: "action" | "text") => {
      for (const fact of facts) if (!used.has(fact.id)) used.set(fact.id, { fact, via });
    };
    if (turn.action !== undefined && this.vocabulary.stated) use(this.vocabulary.stated(turn.action), "action");
    if (turn.actionText) use(this.vocabulary.facts(turn.actionText), "action");
    if (turn.raw) use(this.vocabulary.facts(turn.raw), "text");
    const leaks: Leak[] = [];
    for (const { fact, via } of used.values()) {
      const truth = this.truths.get(fact.id);
      if (!truth || known.has(fact.id)) continue;
      leaks.push({
        agent: turn.agent,
        timestep: turn.timestep,
        ...(turn.sample !== undefined ? { sample: turn.sample } : {}),
        fact: truth.fact,
        via,
        since: truth.since,
        ...(truth.source !== undefined ? { source: truth.source, sourceAt: truth.sourceAt } : {}),
        perceivedBy: truth.perceivedBy,
        why: this.why(turn.agent, truth),
      });
    }
    if (record) {
      this.actions++;
      const c = this.counts.get(turn.agent)!;
      c.actions++;
      c.leaks += leaks.length;
      this.all.push(...leaks);
    }
    return leaks;
  }

  private why(agent: string, truth: Truth): string {
    const since = truth.since === 0 ? "It holds from the start" : `It became true at t${truth.since}`;
    if (truth.source === undefined) return `${since}, and no sentence of the world has shown it; nothing ${agent} perceived states it.`;
    const who = truth.perceivedBy.length ? `perceived by ${listNames(truth.perceivedBy)}` : "perceived by nobody";
    const shown = truth.sourceAt === truth.since ? "" : `; t${truth.sourceAt} showed it`;
    return `${since}${shown}: "${truth.source}" (${who}, not ${agent}); nothing ${agent} perceived since, up to t${this.timestep}, states it.`;
  }
}

/** Audits a whole socialized context; `turns` (from a log) replace its action lines where given. */
export function auditContext(
  context: SocializedContext,
  vocabulary: FactVocabulary,
  opts: { readonly turns?: readonly AuditTurn[]; readonly initialTruths?: readonly Fact[] } = {},
): EpisodeAudit {
  const auditor = new LeakAuditor(context.agents_names, vocabulary, opts.initialTruths);
  const byStep = new Map<number, AuditTurn[]>();
  for (const turn of opts.turns ?? []) {
    let list = byStep.get(turn.timestep);
    if (!list) byStep.set(turn.timestep, (list = []));
    list.push(turn);
  }
  for (const step of context.socialized_context) {
    const t = Number.parseInt(step.timestep, 10);
    auditor.step(step, opts.turns ? (byStep.get(t) ?? []) : undefined);
  }
  return auditor.summary();
}

function listNames(names: readonly string[]): string {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

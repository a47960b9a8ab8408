/**
 * Observation accuracy, exact from the world model: does each agent of a generated context observe
 * the events it should, and only those? The ground truth is the world model's own socialized
 * context of the same story, where who perceives an event is known: the agents whose observation
 * at that timestep is not none.
 *
 * Each ground-truth event is aligned with the generated timestep that describes it (align.ts); the
 * agents who perceive something at that timestep observe the event there. The score is the share
 * of (event, agent) pairs on which the two contexts agree, over the ground truth's agents and the
 * events someone perceives (an event nobody perceives, such as ToMi's remark "Aiden loves the
 * tangerine", says nothing about anyone's perspective). An event the generated context leaves out
 * counts as wrong for every agent: the context cannot say who saw what it does not contain.
 */
import { actionTiming, align } from "./align.js";
import { agentKey, viewOf, type ContextView, type StepView } from "./context-view.js";

/** The actions that caused a timestep are good evidence of what it shows, but not as good as its state. */
const CAUSE_WEIGHT = 0.8;

export interface EventAlignment {
  /** The ground truth's timestep (its index in `socialized_context`). */
  readonly gtIndex: number;
  readonly event: string;
  /** The generated timestep (index) that describes it, or null. */
  readonly genIndex: number | null;
  readonly similarity: number;
  /** Agents who perceive it, in each context (ground-truth names). */
  readonly observers: readonly string[];
  readonly genObservers: readonly string[] | null;
}

export interface ObservationScore {
  readonly accuracy: number;
  /** (event, agent) pairs scored and those both contexts agree on. */
  readonly pairs: number;
  readonly correct: number;
  /** Pairs where the generated agent perceives an event it does not in the ground truth. */
  readonly extraObservations: number;
  /** Pairs where it misses an event it perceives in the ground truth (events left out excluded). */
  readonly missedObservations: number;
  /** Scored events (someone perceives them), matched ones, and those left out. */
  readonly events: number;
  readonly matchedEvents: number;
  readonly missingEvents: number;
  /** Ground-truth events nobody perceives (aligned, not scored). */
  readonly unobservedEvents: number;
  /** Generated timesteps with a state that matches no event. */
  readonly unmatchedTimesteps: number;
  /** Ground-truth agents the generated context does not name. */
  readonly missingAgents: readonly string[];
  readonly byAgent: Readonly<Record<string, { readonly pairs: number; readonly correct: number }>>;
  readonly alignment: readonly EventAlignment[];
}

export function observationAccuracy(gt: unknown, gen: unknown): ObservationScore {
  return scoreViews(viewOf(gt), viewOf(gen));
}

export function scoreViews(gt: ContextView, gen: ContextView): ObservationScore {
  const agents = gt.agents;
  const keys = agents.map(agentKey);
  const events = gt.steps.filter((s) => s.state !== "");
  const gtCause = causeOf(gt);
  const genCause = causeOf(gen);
  const { match, similarity } = align({
    events: events.map((e) => eventText(e, gtCause(e))),
    timesteps: gen.steps.map((s) =>
      [
        { text: s.state, weight: 1 },
        ...s.explicit.map((text) => ({ text, weight: 1 })),
        { text: genCause(s), weight: CAUSE_WEIGHT },
      ].filter((v) => v.text !== ""),
    ),
  });
  const byAgent: Record<string, { pairs: number; correct: number }> = Object.fromEntries(agents.map((a) => [a, { pairs: 0, correct: 0 }]));
  let pairs = 0;
  let correct = 0;
  let extra = 0;
  let missed = 0;
  let scored = 0;
  let matched = 0;
  let missing = 0;
  const alignment: EventAlignment[] = [];
  events.forEach((e, i) => {
    const seen = keys.map((k) => (e.perceived.get(k) ?? "") !== "");
    const j = match[i]!;
    const genStep = j === null ? undefined : gen.steps[j];
    const genSeen = genStep ? keys.map((k) => (genStep.perceived.get(k) ?? "") !== "") : null;
    alignment.push({
      gtIndex: e.index,
      event: e.state,
      genIndex: genStep ? genStep.index : null,
      similarity: round(similarity[i]!),
      observers: agents.filter((_, a) => seen[a]),
      genObservers: genSeen ? agents.filter((_, a) => genSeen[a]) : null,
    });
    if (!seen.some(Boolean)) return;
    scored++;
    if (genSeen) matched++;
    else missing++;
    agents.forEach((name, a) => {
      const ok = genSeen !== null && genSeen[a] === seen[a];
      pairs++;
      byAgent[name]!.pairs++;
      if (ok) {
        correct++;
        byAgent[name]!.correct++;
      } else if (genSeen) {
        if (genSeen[a]) extra++;
        else missed++;
      }
    });
  });
  const used = new Set(match.filter((j): j is number => j !== null));
  const genKeys = new Set(gen.agents.map(agentKey));
  return {
    accuracy: pairs === 0 ? 1 : correct / pairs,
    pairs,
    correct,
    extraObservations: extra,
    missedObservations: missed,
    events: scored,
    matchedEvents: matched,
    missingEvents: missing,
    unobservedEvents: events.length - scored,
    unmatchedTimesteps: gen.steps.filter((s, j) => s.state !== "" && !used.has(j)).length,
    missingAgents: agents.filter((a) => !genKeys.has(agentKey(a))),
    byAgent,
    alignment,
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** The actions that caused a timestep, by the context's own convention. */
function causeOf(view: ContextView): (step: StepView) => string {
  return actionTiming(view.steps) === "same" ? (s) => s.actions : (s) => s.previousActions;
}

/**
 * What a ground-truth timestep is about: the actions that caused it and the first sentence of its
 * state, or the whole state when no one acted (a narrator's sentence). The rest of a state is what
 * the agents there also see ("Mila entered the office. The t-shirt is in the blue_basket."): left
 * to weigh in alignment, it would pull the event towards a later timestep about the t-shirt.
 */
function eventText(step: StepView, cause: string): string {
  if (cause === "") return step.state;
  const first = /^.*?[.!?](?=\s|$)/.exec(step.state)?.[0] ?? step.state;
  return `${cause}. ${first}`;
}

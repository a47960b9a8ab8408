/**
 * The social-media world as a World: every user is an agent that sees only its own screen (its
 * feed and notifications), acts on one item a step, and closes the app with the no-op. The state
 * is the engine (sim.ts), cloned before each step so that `step` never changes its input.
 *
 * Exogenous events are new root posts (a scenario's script, a room's schedule). An episode ends
 * when the cascade dies out: no session open and nothing fresh in any feed.
 */
import type { z } from "zod";
import type { Agent, AgentReply, AgentTurn } from "../core/agent.js";
import type { Observation, StepContext, StepResult, World, WorldEvent } from "../core/world.js";
import { actionSchemaFor, contentOf, describeAction, type SocialAction } from "./action.js";
import { drawsFor } from "./behavior.js";
import { COMMENT, LIKE, parseItemId, REPOST } from "./items.js";
import { nameOf, stanceWords, topInterest, TOPIC_COUNT, type Population } from "./population.js";
import { renderScreen, screenOf, screenTargets, type Screen } from "./screen.js";
import type { SocialSim } from "./sim.js";
import { topicIndex, TOPICS } from "./vocabulary.js";

export interface SocialState {
  readonly sim: SocialSim;
  /** What the last timestep's acts were. */
  readonly last: readonly WorldEvent[];
  /** Posts are scheduled until this time: the world does not end before it (default 0). */
  readonly openUntil?: number;
}

/** A root post the environment adds (a scenario's script, a room's schedule). */
export interface SocialPost {
  readonly author: string;
  /** A topic key (vocabulary.ts). */
  readonly topic: string;
  /** Absent: the latent model writes it. */
  readonly text?: string;
}

/** What a user observes, as data: their screen, nothing more. */
export type SocialObservation = Screen;

export interface SocialEventData {
  readonly act: SocialAction["action"];
  readonly item?: string;
  readonly target?: string;
}

export function initialSocialState(sim: SocialSim, openUntil = 0): SocialState {
  return { sim, last: [], ...(openUntil > 0 ? { openUntil } : {}) };
}

// Names and their indices, computed once per population (a room of 1,000 users asks every step).
const rosters = new WeakMap<Population, { names: string[]; index: Map<string, number> }>();

export function rosterOf(pop: Population): { names: string[]; index: Map<string, number> } {
  let r = rosters.get(pop);
  if (!r) {
    const names = Array.from({ length: pop.size }, (_, u) => nameOf(pop, u));
    const index = new Map(names.map((n, u) => [n, u]));
    if (index.size !== names.length) throw new Error("user names are not unique");
    rosters.set(pop, (r = { names, index }));
  }
  return r;
}

function userIndex(state: SocialState, agent: string): number {
  const u = rosterOf(state.sim.population).index.get(agent);
  if (u === undefined) throw new Error(`no user "${agent}" in this world`);
  return u;
}

const CLOSE: SocialAction = Object.freeze({ action: "ignore" });
const REACTION_KIND = { comment: COMMENT, repost: REPOST, like: LIKE } as const;

export class SocialWorld implements World<SocialState, SocialAction, SocialPost> {
  readonly name = "social";

  agents(state: SocialState): readonly string[] {
    return rosterOf(state.sim.population).names;
  }

  screen(state: SocialState, agent: string): Screen {
    return screenOf(state.sim, userIndex(state, agent));
  }

  actionSchema(state: SocialState, agent: string): z.ZodType<SocialAction> {
    return actionSchemaFor(screenTargets(this.screen(state, agent)));
  }

  noop(): SocialAction {
    return CLOSE;
  }

  isNoop(action: SocialAction): boolean {
    return action.action === "ignore" && action.target === undefined;
  }

  /**
   * The user's screen, as text and as data: nothing of another user's screen, mind or profile,
   * and nothing of the latent model's plan for this user either (people, policies and language
   * models in a seat must not see what the generator means them to do). The rule agent, which
   * acts on that plan, finds it with `latentIntentsOf(observation)`: a side channel held here,
   * outside the observation, so that no serialization of an observation (a turn message, a
   * room's perspective, a log, a prompt) can carry it.
   */
  observe(state: SocialState, agent: string): Observation {
    const u = userIndex(state, agent);
    const screen = screenOf(state.sim, u);
    const observation: Observation = { text: renderScreen(screen, agent), data: screen satisfies SocialObservation };
    if (screen.open) planned.set(observation, { sim: state.sim, user: u });
    return observation;
  }

  describe(state: SocialState): string {
    return state.last.length === 0 ? "none" : state.last.map((e) => e.text).join(" ");
  }

  renderAction(_state: SocialState, _agent: string, a: SocialAction): string {
    return describeAction(a);
  }

  /** Quick actions for a person's buttons and the random baseline: like, repost or pass on each item on screen, or close. */
  options(state: SocialState, agent: string): SocialAction[] {
    const out: SocialAction[] = [CLOSE];
    for (const target of screenTargets(this.screen(state, agent))) {
      for (const a of [{ action: "like", target }, { action: "repost", target }, { action: "ignore", target }] as SocialAction[]) {
        if (this.check(state, agent, a) === undefined) out.push(a);
      }
    }
    return out;
  }

  check(state: SocialState, agent: string, a: SocialAction): string | undefined {
    return whyNot(state.sim, agent, a);
  }

  step(state: SocialState, actions: ReadonlyMap<string, SocialAction>, ctx: StepContext<SocialPost>): StepResult<SocialState> {
    const sim = state.sim.clone();
    const { names, index } = rosterOf(sim.population);
    const events: WorldEvent[] = [];
    for (let u = 0; u < names.length; u++) {
      const agent = names[u]!;
      const a = actions.get(agent);
      if (!a) continue;
      if (this.isNoop(a)) {
        sim.close(u);
        continue;
      }
      // Acts that are not allowed (an untrusted agent's, past validation) do nothing.
      if (whyNot(sim, agent, a) !== undefined) continue;
      if (a.action === "post") {
        const topic = a.topic === undefined ? topInterest(sim.population, u) : topicIndex(a.topic);
        const i = sim.post(u, topic, a.content);
        events.push(event(agent, `${agent} posted ${sim.items.id(i)}: ${JSON.stringify(a.content)}`, { act: "post", item: sim.items.id(i) }));
        continue;
      }
      const target = parseItemId(sim.items, a.target!);
      if (a.action === "ignore") {
        sim.pass(u, target);
        continue;
      }
      const text = a.action === "like" ? undefined : contentOf(a);
      const i = sim.react(u, target, REACTION_KIND[a.action], text);
      const said = text ? `: ${JSON.stringify(text)}` : "";
      events.push(event(agent, `${agent} ${PAST[a.action]} ${a.target} (${sim.items.id(i)})${said}`, { act: a.action, item: sim.items.id(i), target: a.target! }));
    }
    for (const p of ctx.exogenous) {
      const u = index.get(p.author);
      const topic = topicIndex(p.topic);
      if (u === undefined) throw new Error(`scripted post by "${p.author}", who is not in this world`);
      if (topic < 0) throw new Error(`scripted post on "${p.topic}", which is not a topic (${TOPICS.map((t) => t.key).join(", ")})`);
      const i = sim.post(u, topic, p.text);
      events.push(event(p.author, `${p.author} posted ${sim.items.id(i)}: ${JSON.stringify(sim.textOf(i))}`, { act: "post", item: sim.items.id(i) }));
    }
    sim.advance(ctx.rng);
    return { state: { ...state, sim, last: events }, events };
  }

  /** The cascade has died out (and no post is still to come). */
  isTerminal(state: SocialState): boolean {
    return state.sim.time >= (state.openUntil ?? 0) && state.sim.items.length > 0 && state.sim.isQuiet();
  }

  /**
   * What the user noticed and their current stance on the topics in front of them: "I noticed p3
   * (Lin Chen's post), r9 (Wei Wang's repost). On nuclear power I am strongly in favour (0.72)."
   * Not what the latent model means them to do: a person in the seat is shown this.
   */
  mentalState(state: SocialState, agent: string): string | undefined {
    const sim = state.sim;
    const u = userIndex(state, agent);
    const screen = screenOf(sim, u);
    const parts: string[] = [];
    const topics = new Set<number>();
    if (screen.entries.length) {
      parts.push(`I noticed ${screen.entries.map((e) => `${e.item.id} (${e.item.author}'s ${e.item.kind})`).join(", ")}.`);
      for (const e of screen.entries) topics.add(topicIndex(e.item.topic));
    }
    if (topics.size === 0) topics.add(topInterest(sim.population, u));
    for (const t of [...topics].sort((x, y) => x - y)) {
      parts.push(`On ${TOPICS[t]!.name} I am ${stanceWords(sim.stance[u * TOPIC_COUNT + t]!)} (${sim.stance[u * TOPIC_COUNT + t]!.toFixed(2)}).`);
    }
    return parts.join(" ");
  }
}

const PAST = { comment: "commented on", repost: "reposted", like: "liked" } as const;

function whyNot(sim: SocialSim, agent: string, a: SocialAction): string | undefined {
  const u = rosterOf(sim.population).index.get(agent);
  if (u === undefined) return `no user "${agent}" in this world`;
  if (a.action === "post") return a.topic === undefined || topicIndex(a.topic) >= 0 ? undefined : `no topic "${a.topic}"`;
  if (a.target === undefined) return a.action === "ignore" ? undefined : "a target is needed";
  const i = parseItemId(sim.items, a.target);
  if (i < 0) return `there is no item "${a.target}"`;
  if (a.action === "ignore") return sim.hasSeen(u, i) ? undefined : "you have not seen this item";
  return sim.whyNotReact(u, i);
}

/** What the latent model means `user` to do, in order, as actions (texts written); the first `limit` of them. */
export function intentActions(sim: SocialSim, user: number, limit = Infinity): SocialAction[] {
  const out: SocialAction[] = [];
  if (sim.session[user] === 0) return out;
  const a = sim.config.attention;
  for (let j = 0; j < Math.min(sim.intentLen[user]!, limit); j++) {
    const i = sim.intents[user * a + j]!;
    const kind = sim.intentKind[user * a + j]!;
    const target = sim.items.id(i);
    if (kind === LIKE) {
      out.push({ action: "like", target });
      continue;
    }
    const text = sim.latentText(kind, user, i, sim.intentStance[user * a + j]!, drawsFor(sim.config.seed, user, i).text);
    if (kind === REPOST) out.push(text === "" ? { action: "repost", target } : { action: "repost", target, content: text });
    else out.push({ action: "comment", target, content: text });
  }
  return out;
}

/** The rule agent: acts on its first intent, and closes the app when none is left. */
export function ruleAction(state: SocialState, agent: string): SocialAction {
  return firstIntent(state.sim, userIndex(state, agent));
}

function firstIntent(sim: SocialSim, u: number): SocialAction {
  if (sim.session[u] === 0 || sim.intentLen[u] === 0) return CLOSE;
  return intentActions(sim, u, 1)[0]!;
}

/** Observations of users with an open screen -> whose plan it is (the state is never changed: step clones it). */
const planned = new WeakMap<Observation, { readonly sim: SocialSim; readonly user: number }>();

/**
 * What the latent model means the observer to do, in order, for an observation this world made
 * (empty for any other object, a copy included: only the rule agent, in this process, reads it).
 */
export function latentIntentsOf(observation: Observation, limit = Infinity): SocialAction[] {
  const p = planned.get(observation);
  return p ? intentActions(p.sim, p.user, limit) : [];
}

/**
 * The rule agent as a seat's controller: the latent model's first intent for the observation in
 * front of it, or closing the app. Valid by construction, hence trusted (not validated).
 */
export class RuleAgent implements Agent<SocialAction> {
  readonly id = "rule";
  readonly trusted = true;

  act(turn: AgentTurn<SocialAction>): AgentReply<SocialAction> {
    const p = planned.get(turn.observation);
    return { action: p ? firstIntent(p.sim, p.user) : CLOSE };
  }
}

function event(actor: string, text: string, data: SocialEventData): WorldEvent {
  return { text, observers: [actor], actor, data };
}

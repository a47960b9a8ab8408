/**
 * The Hi-ToM world: rooms, containers in rooms, objects in containers; agents who enter rooms (a
 * group at a time), move objects or stay, exit one by one, then meet in a waiting room where they
 * make claims, publicly (heard by everyone there) or privately (heard by one agent), and may lie.
 *
 * Perception. An agent perceives what happens in its room, and on entering sees the room (every
 * object there). Exits are announced to everyone: the benchmark states that the exit order is
 * known to all agents. Distractor remarks ("Noah saw a monkey.") are perceived by nobody.
 *
 * Mental states are beliefs, tracked for every perspective of distinct agents up to `depth` (4):
 * what agents see together is common knowledge among them (the physics Hi-ToM shares with ToMi,
 * ../core/rooms.ts). A claim is not seen: it changes only the minds of hearers who trust the
 * speaker (rules.ts explains the rule and how it was chosen). A hearer trusts the
 * speaker when the speaker was in the claimed object's room more recently than the hearer: the
 * hearer has not been there, or the speaker exited it later than the hearer did (and a hearer who
 * is in that room sees for itself).
 */
import { z } from "zod";
import type { Observation, StepContext, StepResult, World } from "../core/world.js";
import {
  allChains,
  beliefsText,
  describeEvents,
  mapOf,
  observePlaces,
  PlacesDraft,
  visibleFacts,
  visibleIn,
  withFacts,
  type Fact,
  type Layout,
  type Perception,
  type Places,
} from "../core/rooms.js";
import { HITOM_RULES, type HitomRules } from "./rules.js";
import { joinNames, renderSentence, type RemarkVerb } from "./sentences.js";

export type HitomLayout = Layout;

export interface HitomState extends Places {
  readonly rules: HitomRules;
  /** Who is in each room, in the order they came in (a group in the order the story lists it). */
  readonly roster: ReadonlyMap<string, readonly string[]>;
  /** agent -> room -> the clock when the agent last left it (the trust rule compares these). */
  readonly lastExit: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Transitions so far. */
  readonly clock: number;
}

export type HitomAction =
  | { readonly type: "none" }
  /** `together`: the whole group coming in at this timestep, in the order the story lists it. */
  | { readonly type: "enter"; readonly room: string; readonly together?: readonly string[] }
  | { readonly type: "exit"; readonly room?: string }
  /** Moving an object to the container it is in is allowed: upstream stories do it (take it out, put it back). */
  | { readonly type: "move"; readonly object: string; readonly container: string }
  /** Make no movement and stay in the room for a minute. */
  | { readonly type: "stay" }
  /** Claim where an object is: to everyone in the room, or privately `to` one agent there. */
  | { readonly type: "claim"; readonly object: string; readonly container: string; readonly to?: string };

/** What the narrator states: "The onion is in the red_box." reveals it to whoever is there; remarks change nothing. */
export type HitomNarration =
  | { readonly type: "object_at"; readonly object: string; readonly container: string }
  | { readonly type: "remark"; readonly agent: string; readonly verb: RemarkVerb; readonly thing: string };

export interface HitomEventData {
  readonly kind: "enter" | "exit" | "move" | "stay" | "claim" | HitomNarration["type"];
  /** What the observers now see. */
  readonly facts: readonly Fact[];
  /** For claims: the hearers who trust the speaker. */
  readonly believers?: readonly string[];
}

export interface HitomInit {
  readonly agents: readonly string[];
  readonly layout: HitomLayout;
  readonly containerRoom: Readonly<Record<string, string | undefined>>;
  readonly objectContainer: Readonly<Record<string, string | undefined>>;
  /** How deep nested beliefs are tracked (4: "A thinks B thinks C thinks D thinks"). */
  readonly depth?: number;
  readonly rules?: HitomRules;
}

export function initialHitomState(init: HitomInit): HitomState {
  return {
    layout: init.layout,
    agents: init.agents.slice(),
    depth: init.depth ?? 4,
    rules: init.rules ?? HITOM_RULES,
    containerRoom: mapOf(init.containerRoom),
    objectContainer: mapOf(init.objectContainer),
    agentRoom: new Map(),
    roster: new Map(),
    lastExit: new Map(),
    clock: 0,
    beliefs: new Map(),
    last: [],
  };
}

/** The sequences that keep the order of `agents` (itertools.combinations), of length 1 to `depth`. */
export function orderedChains(agents: readonly string[], depth: number): string[][] {
  const out: string[][] = [];
  const grow = (path: string[], from: number) => {
    if (path.length) out.push(path);
    if (path.length < depth) for (let i = from; i < agents.length; i++) grow([...path, agents[i]!], i + 1);
  };
  grow([], 0);
  return out;
}

/** An agent's surroundings: its room, who is there (in the order they came in), what it sees there. */
function perception(state: HitomState, agent: string): Perception {
  const room = state.agentRoom.get(agent);
  return { room: room ?? null, present: room === undefined ? [] : (state.roster.get(room) ?? []), visible: visibleIn(state, room) };
}

const schemaCache = new WeakMap<HitomLayout, z.ZodType<HitomAction>>();

export class HitomWorld implements World<HitomState, HitomAction, HitomNarration> {
  readonly name = "hitom";

  agents(state: HitomState): readonly string[] {
    return state.agents;
  }

  actionSchema(state: HitomState): z.ZodType<HitomAction> {
    let schema = schemaCache.get(state.layout);
    if (!schema) {
      const { rooms, objects, containers } = state.layout;
      const room = z.enum(rooms as [string, ...string[]]);
      const object = z.enum(objects as [string, ...string[]]);
      const container = z.enum(containers as [string, ...string[]]);
      schema = z.discriminatedUnion("type", [
        z.object({ type: z.literal("none") }).describe("Do nothing."),
        z.object({ type: z.literal("enter"), room, together: z.array(z.string()).optional() }).describe("Enter a room (leaving the current one)."),
        z.object({ type: z.literal("exit"), room: room.optional() }).describe("Leave the current room."),
        z.object({ type: z.literal("move"), object, container }).describe("Move an object in this room to another container in this room."),
        z.object({ type: z.literal("stay") }).describe("Make no movement and stay in this room for a minute."),
        z
          .object({ type: z.literal("claim"), object, container, to: z.string().optional() })
          .describe("Claim that an object is in a container: publicly to everyone in the room, or privately `to` one agent here."),
      ]) as z.ZodType<HitomAction>;
      schemaCache.set(state.layout, schema);
    }
    return schema;
  }

  noop(): HitomAction {
    return NOOP;
  }

  isNoop(action: HitomAction): boolean {
    return action.type === "none";
  }

  /**
   * Every action `check` allows now (entering alone; claims to everyone present or to one agent
   * there): the random baseline's choices and a person's quick buttons.
   */
  options(state: HitomState, agent: string): HitomAction[] {
    const { rooms, objects, containers } = state.layout;
    const here = state.agentRoom.get(agent);
    const others = here === undefined ? [] : (state.roster.get(here) ?? []).filter((a) => a !== agent);
    const all: HitomAction[] = [NOOP, ...rooms.map((room): HitomAction => ({ type: "enter", room })), { type: "exit" }, { type: "stay" }];
    for (const object of objects) {
      for (const container of containers) {
        all.push({ type: "move", object, container }, { type: "claim", object, container });
        for (const to of others) all.push({ type: "claim", object, container, to });
      }
    }
    return all.filter((a) => this.check(state, agent, a) === undefined);
  }

  check(state: HitomState, agent: string, action: HitomAction): string | undefined {
    const here = state.agentRoom.get(agent);
    const { rooms, objects, containers } = state.layout;
    switch (action.type) {
      case "none":
        return undefined;
      case "enter":
        if (!rooms.includes(action.room)) return `there is no room "${action.room}"`;
        if (here === action.room) return `${agent} is already in the ${action.room}`;
        if (action.together && !action.together.includes(agent)) return `${agent} is not in the group entering the ${action.room}`;
        return undefined;
      case "exit":
        if (here === undefined) return `${agent} is not in any room`;
        if (action.room !== undefined && action.room !== here) return `${agent} is in the ${here}, not the ${action.room}`;
        return undefined;
      case "stay":
        return here === undefined ? `${agent} is not in any room` : undefined;
      case "move": {
        if (here === undefined) return `${agent} is not in any room`;
        if (!objects.includes(action.object)) return `there is no object "${action.object}"`;
        if (!containers.includes(action.container)) return `there is no container "${action.container}"`;
        const from = state.objectContainer.get(action.object);
        if (from === undefined || state.containerRoom.get(from) !== here) return `the ${action.object} is not in the ${here}`;
        const where = state.containerRoom.get(action.container);
        if (where !== undefined && where !== here) return `the ${action.container} is not in the ${here}`;
        return undefined;
      }
      case "claim":
        if (here === undefined) return `${agent} is not in any room`;
        if (!objects.includes(action.object)) return `there is no object "${action.object}"`;
        if (!containers.includes(action.container)) return `there is no container "${action.container}"`;
        if (action.to !== undefined) {
          if (action.to === agent) return `${agent} cannot tell himself`;
          if (!state.agents.includes(action.to)) return `there is no agent "${action.to}"`;
          if (state.agentRoom.get(action.to) !== here) return `${action.to} is not in the ${here}`;
        }
        return undefined;
    }
  }

  observe(state: HitomState, agent: string): Observation {
    return observePlaces(state, agent, perception);
  }

  describe(state: HitomState): string {
    return describeEvents(state);
  }

  renderAction(state: HitomState, agent: string, action: HitomAction): string {
    switch (action.type) {
      case "none":
        return "none";
      case "enter":
        return `enters the ${action.room}`;
      case "exit":
        return `exits the ${state.agentRoom.get(agent) ?? "room"}`;
      case "stay":
        return `stays in the ${state.agentRoom.get(agent) ?? "room"}`;
      case "move":
        return `moves the ${action.object} to the ${action.container}`;
      case "claim":
        return action.to === undefined
          ? `publicly claims that the ${action.object} is in the ${action.container}`
          : `privately tells ${action.to} that the ${action.object} is in the ${action.container}`;
    }
  }

  /** The agent's own beliefs, as the socialized context writes them; deeper perspectives stay in `beliefs`. */
  mentalState(state: HitomState, agent: string): string | undefined {
    return beliefsText(state, agent);
  }

  isTerminal(): boolean {
    return false;
  }

  step(state: HitomState, actions: ReadonlyMap<string, HitomAction>, ctx: StepContext<HitomNarration>): StepResult<HitomState> {
    const draft = new HitomDraft(state);
    for (const n of ctx.exogenous) draft.narrate(n);
    // Agents entering one room at one timestep come in together, as one event.
    const groups = new Map<string, { agents: string[]; order?: readonly string[] }>();
    for (const agent of state.agents) {
      const a = actions.get(agent);
      if (a?.type !== "enter") continue;
      let g = groups.get(a.room);
      if (!g) groups.set(a.room, (g = { agents: [] }));
      g.agents.push(agent);
      if (a.together && !g.order) g.order = a.together;
    }
    for (const [room, g] of groups) {
      const order = g.order;
      const rank = (a: string) => (order?.includes(a) ? order.indexOf(a) : Number.MAX_SAFE_INTEGER);
      draft.enter([...g.agents].sort((x, y) => rank(x) - rank(y)), room);
    }
    for (const agent of state.agents) {
      const action = actions.get(agent);
      if (action && action.type !== "none" && action.type !== "enter") draft.act(agent, action);
    }
    return { state: draft.finish(), events: draft.events };
  }
}

const NOOP: HitomAction = Object.freeze({ type: "none" });

/** One transition of a Hi-ToM state (copy-on-write, see PlacesDraft). */
class HitomDraft extends PlacesDraft {
  declare protected readonly base: HitomState;
  private readonly clock: number;
  private readonly roster: Map<string, readonly string[]>;
  private lastExit: ReadonlyMap<string, ReadonlyMap<string, number>>;

  constructor(base: HitomState) {
    super(base);
    this.clock = base.clock + 1;
    this.roster = new Map(base.roster);
    this.lastExit = base.lastExit;
  }

  private present(room: string | undefined): readonly string[] {
    return room === undefined ? [] : (this.roster.get(room) ?? []);
  }

  private seen(text: string, observers: readonly string[], data: HitomEventData, actor?: string): void {
    this.emit({ text, observers: observers.slice(), data, ...(actor === undefined ? {} : { actor }) });
  }

  /** The trust rule: has `speaker` been in the room of `object` more recently than `hearer`? */
  private trusts(hearer: string, speaker: string, object: string): boolean {
    const c = this.objectContainer.get(object);
    const room = c === undefined ? undefined : this.containerRoom.get(c);
    if (room === undefined) return true;
    if (this.agentRoom.get(hearer) === room) return false;
    const mine = this.lastExit.get(hearer)?.get(room);
    if (mine === undefined) return true;
    const theirs = this.lastExit.get(speaker)?.get(room);
    return theirs !== undefined && theirs > mine;
  }

  private leave(agents: readonly string[], room: string): void {
    const lastExit = new Map(this.lastExit);
    for (const a of agents) {
      this.setRoom(a, undefined);
      lastExit.set(a, new Map(lastExit.get(a)).set(room, this.clock));
    }
    this.lastExit = lastExit;
    this.roster.set(room, this.present(room).filter((a) => !agents.includes(a)));
    // The exit order is known to all agents.
    this.seen(`${joinNames(agents)} exited the ${room}.`, this.base.agents, { kind: "exit", facts: [] }, agents.length === 1 ? agents[0] : undefined);
  }

  enter(group: readonly string[], room: string): void {
    const leaving = new Map<string, string[]>();
    for (const a of group) {
      const from = this.agentRoom.get(a);
      if (from === undefined || from === room) continue;
      let g = leaving.get(from);
      if (!g) leaving.set(from, (g = []));
      g.push(a);
    }
    for (const [from, agents] of leaving) this.leave(agents, from);
    for (const a of group) this.setRoom(a, room);
    this.roster.set(room, [...this.present(room).filter((a) => !group.includes(a)), ...group]);
    const facts = this.base.rules.seeOnEnter ? visibleFacts(this, room) : [];
    const observers = this.present(room);
    this.reveal(observers, facts);
    this.seen(withFacts(`${joinNames(group)} entered the ${room}.`, facts), observers, { kind: "enter", facts }, group.length === 1 ? group[0] : undefined);
  }

  narrate(n: HitomNarration): void {
    switch (n.type) {
      case "object_at": {
        const observers = this.present(this.containerRoom.get(n.container));
        const facts: Fact[] = [[n.object, n.container]];
        this.reveal(observers, facts);
        this.seen(`The ${n.object} is in the ${n.container}.`, observers, { kind: "object_at", facts });
        return;
      }
      case "remark":
        this.seen(renderSentence({ kind: "remark", agent: n.agent, verb: n.verb, thing: n.thing }), [], { kind: "remark", facts: [] });
        return;
    }
  }

  act(agent: string, action: Exclude<HitomAction, { type: "none" } | { type: "enter" }>): void {
    const here = this.agentRoom.get(agent);
    if (here === undefined) return;
    switch (action.type) {
      case "exit":
        this.leave([agent], here);
        return;
      case "stay":
        this.seen(renderSentence({ kind: "stay", agent, room: here }), this.present(here), { kind: "stay", facts: [] }, agent);
        return;
      case "move": {
        // A container the story never placed is in the room where it is used.
        if (this.containerRoom.get(action.container) === undefined) this.placeContainer(action.container, here);
        this.putObject(action.object, action.container);
        const observers = this.present(here);
        const facts: Fact[] = [[action.object, action.container]];
        if (this.base.rules.moveChains === "all") this.reveal(observers, facts);
        else for (const path of orderedChains([...observers.filter((a) => a !== agent), agent], this.base.depth)) this.believe(path, facts);
        this.seen(renderSentence({ kind: "move", agent, object: action.object, container: action.container }), observers, { kind: "move", facts }, agent);
        return;
      }
      case "claim":
        this.claim(agent, here, action);
        return;
    }
  }

  private claim(speaker: string, room: string, action: Extract<HitomAction, { type: "claim" }>): void {
    const { object, container, to } = action;
    const observers = to === undefined ? this.present(room) : [speaker, to];
    const believers = observers.filter((a) => a !== speaker && this.trusts(a, speaker, object));
    const fact: Fact[] = [[object, container]];
    if (this.base.rules.claims === "hearer") {
      for (const hearer of believers) {
        this.believe([hearer], fact);
        if (this.base.depth >= 2) this.believe([hearer, speaker], fact);
      }
    } else {
      // Everyone present knows who trusts the speaker, and knows that the others know it.
      for (const path of allChains(observers, this.base.depth)) {
        const last = path[path.length - 1]!;
        const adopts = last === speaker ? path.length >= 2 && believers.includes(path[path.length - 2]!) : believers.includes(last);
        if (adopts) this.believe(path, fact);
      }
    }
    // The speaker, who "would think his words are trusted" (rules.ts), believes every hearer believes it.
    if (this.base.rules.speakerThinksBelieved && this.base.depth >= 2) for (const hearer of observers) if (hearer !== speaker) this.believe([speaker, hearer], fact);
    const text =
      to === undefined
        ? renderSentence({ kind: "public_claim", agent: speaker, object, container })
        : renderSentence({ kind: "private_claim", agent: speaker, listener: to, object, container });
    this.seen(text, observers, { kind: "claim", facts: [], believers }, speaker);
  }

  finish(): HitomState {
    return {
      ...this.base,
      containerRoom: this.containerRoom,
      objectContainer: this.objectContainer,
      agentRoom: this.agentRoom,
      beliefs: this.beliefs,
      last: this.events,
      clock: this.clock,
      roster: this.roster,
      lastExit: this.lastExit,
    };
  }
}

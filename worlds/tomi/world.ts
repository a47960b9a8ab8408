/**
 * The ToMi world: rooms, containers in rooms, objects in containers, and agents who enter, exit
 * and move objects. An agent perceives what happens in its room, and on entering it sees the room
 * (containers are open, so it sees where every object there is).
 *
 * Mental states are beliefs, tracked for every perspective up to `depth` (2): an event updates
 * the perspectives made only of agents who perceived it together (agents in one room see each
 * other, so what they all saw is common knowledge among them). The rooms, containers and beliefs
 * are the physics ToMi shares with Hi-ToM (../core/rooms.ts); this file adds ToMi's actions and
 * what its narrator states.
 */
import { z } from "zod";
import type { StepContext, StepResult, World, Observation } from "../core/world.js";
import {
  agentsIn,
  beliefsText,
  describeEvents,
  observePlaces,
  PlacesDraft,
  visibleFacts,
  visibleIn,
  withFacts,
  type Beliefs,
  type Fact,
  type Layout,
  type Perception,
  type Places,
} from "../core/rooms.js";
import { renderSentence } from "./sentences.js";

export type TomiLayout = Layout;

export interface TomiState extends Places {
  /** Where each object was when the story began (for "Where was the X at the beginning?"). */
  readonly initialContainer: ReadonlyMap<string, string>;
}

export const TomiActionSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("none") }).describe("Do nothing."),
  z.object({ type: z.literal("enter"), room: z.string().min(1) }).describe("Enter a room (leaving the current one)."),
  z.object({ type: z.literal("exit"), room: z.string().min(1).optional() }).describe("Leave the current room."),
  z
    .object({ type: z.literal("move"), object: z.string().min(1), container: z.string().min(1) })
    .describe("Move an object in this room to another container in this room."),
]);
export type TomiAction = z.infer<typeof TomiActionSchema>;

/** What the narrator states: these reveal the world to whoever is there, they change nothing. */
export type TomiNarration =
  | { readonly type: "object_at"; readonly object: string; readonly container: string }
  | { readonly type: "container_at"; readonly container: string; readonly room: string }
  | { readonly type: "agents_at"; readonly agents: readonly string[]; readonly room: string }
  | { readonly type: "remark"; readonly agent: string; readonly verb: string; readonly thing: string; readonly period: boolean };

export interface TomiEventData {
  readonly kind: "enter" | "exit" | "move" | TomiNarration["type"];
  /** What the observers now know. */
  readonly facts: readonly Fact[];
}

export interface TomiInit {
  readonly agents: readonly string[];
  readonly layout: TomiLayout;
  readonly containerRoom: ReadonlyMap<string, string>;
  readonly objectContainer: ReadonlyMap<string, string>;
  readonly agentRoom?: ReadonlyMap<string, string>;
  /** How deep nested beliefs are tracked (2: "A thinks B thinks"; 0: none, for a simulation that needs only observations). */
  readonly depth?: number;
}

const NO_BELIEFS: Beliefs = new Map();

export function initialTomiState(init: TomiInit): TomiState {
  const agentRoom = new Map<string, string>();
  for (const a of init.agents) {
    const room = init.agentRoom?.get(a);
    if (room !== undefined) agentRoom.set(a, room);
  }
  // States are copied on write (see PlacesDraft), so the init's maps can be shared, not copied.
  return {
    layout: init.layout,
    agents: init.agents.slice(),
    depth: init.depth ?? 2,
    containerRoom: init.containerRoom,
    objectContainer: init.objectContainer,
    initialContainer: init.objectContainer,
    agentRoom,
    beliefs: NO_BELIEFS,
    last: [],
  };
}

function perception(state: TomiState, agent: string): Perception {
  const room = state.agentRoom.get(agent);
  return { room: room ?? null, present: agentsIn(state, room), visible: visibleIn(state, room) };
}

const schemaCache = new WeakMap<TomiLayout, z.ZodType<TomiAction>>();

export class TomiWorld implements World<TomiState, TomiAction, TomiNarration> {
  readonly name = "tomi";

  agents(state: TomiState): readonly string[] {
    return state.agents;
  }

  actionSchema(state: TomiState): z.ZodType<TomiAction> {
    let schema = schemaCache.get(state.layout);
    if (!schema) {
      const { rooms, objects, containers } = state.layout;
      schema = z.discriminatedUnion("type", [
        z.object({ type: z.literal("none") }).describe("Do nothing."),
        z.object({ type: z.literal("enter"), room: z.enum(rooms as [string, ...string[]]) }).describe("Enter a room."),
        z.object({ type: z.literal("exit"), room: z.enum(rooms as [string, ...string[]]).optional() }).describe("Leave the current room."),
        z
          .object({
            type: z.literal("move"),
            object: z.enum(objects as [string, ...string[]]),
            container: z.enum(containers as [string, ...string[]]),
          })
          .describe("Move an object in this room to another container in this room."),
      ]) as z.ZodType<TomiAction>;
      schemaCache.set(state.layout, schema);
    }
    return schema;
  }

  noop(): TomiAction {
    return NOOP;
  }

  isNoop(action: TomiAction): boolean {
    return action.type === "none";
  }

  /** Every action `check` allows now: the random baseline's choices and a person's quick buttons. */
  options(state: TomiState, agent: string): TomiAction[] {
    const { rooms, objects, containers } = state.layout;
    const all: TomiAction[] = [NOOP, ...rooms.map((room): TomiAction => ({ type: "enter", room })), { type: "exit" }];
    for (const object of objects) for (const container of containers) all.push({ type: "move", object, container });
    return all.filter((a) => this.check(state, agent, a) === undefined);
  }

  check(state: TomiState, agent: string, action: TomiAction): string | undefined {
    const here = state.agentRoom.get(agent);
    switch (action.type) {
      case "none":
        return undefined;
      case "enter":
        if (!state.layout.rooms.includes(action.room)) return `there is no room "${action.room}"`;
        if (here === action.room) return `${agent} is already in the ${action.room}`;
        return undefined;
      case "exit":
        if (here === undefined) return `${agent} is not in any room`;
        if (action.room !== undefined && action.room !== here) return `${agent} is in the ${here}, not the ${action.room}`;
        return undefined;
      case "move": {
        if (here === undefined) return `${agent} is not in any room`;
        if (!state.layout.objects.includes(action.object)) return `there is no object "${action.object}"`;
        if (!state.layout.containers.includes(action.container)) return `there is no container "${action.container}"`;
        const from = state.objectContainer.get(action.object);
        if (from === undefined || state.containerRoom.get(from) !== here) return `the ${action.object} is not in the ${here}`;
        if (from === action.container) return `the ${action.object} is already in the ${action.container}`;
        const where = state.containerRoom.get(action.container);
        if (where !== undefined && where !== here) return `the ${action.container} is not in the ${here}`;
        return undefined;
      }
    }
  }

  observe(state: TomiState, agent: string): Observation {
    return observePlaces(state, agent, perception);
  }

  describe(state: TomiState): string {
    return describeEvents(state);
  }

  renderAction(state: TomiState, agent: string, action: TomiAction): string {
    switch (action.type) {
      case "none":
        return "none";
      case "enter":
        return `enters the ${action.room}`;
      case "exit":
        return `exits the ${state.agentRoom.get(agent) ?? "room"}`;
      case "move":
        return `moves the ${action.object} to the ${action.container}`;
    }
  }

  mentalState(state: TomiState, agent: string): string | undefined {
    return beliefsText(state, agent);
  }

  isTerminal(): boolean {
    return false;
  }

  step(state: TomiState, actions: ReadonlyMap<string, TomiAction>, ctx: StepContext<TomiNarration>): StepResult<TomiState> {
    const draft = new TomiDraft(state);
    for (const n of ctx.exogenous) draft.narrate(n);
    for (const agent of state.agents) {
      const action = actions.get(agent);
      if (action && action.type !== "none") draft.act(agent, action);
    }
    return { state: draft.finish(), events: draft.events };
  }
}

const NOOP: TomiAction = Object.freeze({ type: "none" });

/** One transition of a ToMi state (copy-on-write, see PlacesDraft). */
class TomiDraft extends PlacesDraft {
  declare protected readonly base: TomiState;

  /** An event its observers perceive, and what it shows them (which they now all know). */
  private seen(kind: TomiEventData["kind"], text: string, observers: string[], facts: readonly Fact[], actor?: string): void {
    this.reveal(observers, facts);
    const data: TomiEventData = { kind, facts };
    this.emit({ text, observers, actor, data });
  }

  narrate(n: TomiNarration): void {
    switch (n.type) {
      case "object_at": {
        // The narrator tells where the object is: where its script put it, unless an agent who
        // acts freely (a room's policy) has moved it since, in which case the narrator tells the truth.
        const container = this.objectContainer.get(n.object) ?? n.container;
        const observers = agentsIn(this, this.containerRoom.get(container));
        this.seen("object_at", `The ${n.object} is in the ${container}.`, observers, [[n.object, container]]);
        return;
      }
      case "container_at": {
        this.placeContainer(n.container, n.room);
        const facts: Fact[] = [];
        for (const obj of this.layout.objects) if (this.objectContainer.get(obj) === n.container) facts.push([obj, n.container]);
        this.seen("container_at", withFacts(`The ${n.container} is in the ${n.room}.`, facts), agentsIn(this, n.room), facts);
        return;
      }
      case "agents_at": {
        for (const a of n.agents) this.setRoom(a, n.room);
        const facts = visibleFacts(this, n.room);
        const text = renderSentence({ kind: "agents_at", agents: n.agents, room: n.room });
        this.seen("agents_at", withFacts(text, facts), agentsIn(this, n.room), facts);
        return;
      }
      case "remark":
        this.seen("remark", renderSentence({ kind: "remark", agent: n.agent, verb: n.verb, thing: n.thing, period: n.period }), [], NO_FACTS);
        return;
    }
  }

  act(agent: string, action: Exclude<TomiAction, { type: "none" }>): void {
    const here = this.agentRoom.get(agent);
    switch (action.type) {
      case "enter": {
        if (here !== undefined && here !== action.room) this.exit(agent, here);
        this.setRoom(agent, action.room);
        const facts = visibleFacts(this, action.room);
        this.seen("enter", withFacts(`${agent} entered the ${action.room}.`, facts), agentsIn(this, action.room), facts, agent);
        return;
      }
      case "exit":
        if (here !== undefined) this.exit(agent, here);
        return;
      case "move": {
        if (here === undefined) return;
        this.placeContainer(action.container, here);
        this.putObject(action.object, action.container);
        this.seen(
          "move",
          `${agent} moved the ${action.object} to the ${action.container}.`,
          agentsIn(this, here),
          [[action.object, action.container]],
          agent,
        );
        return;
      }
    }
  }

  private exit(agent: string, room: string): void {
    const observers = agentsIn(this, room);
    this.setRoom(agent, undefined);
    this.seen("exit", `${agent} exited the ${room}.`, observers, NO_FACTS, agent);
  }

  finish(): TomiState {
    // Field by field, not spread: a run makes a state per timestep of every story it replays.
    const b = this.base;
    return {
      layout: b.layout,
      agents: b.agents,
      depth: b.depth,
      containerRoom: this.containerRoom,
      objectContainer: this.objectContainer,
      initialContainer: b.initialContainer,
      agentRoom: this.agentRoom,
      beliefs: this.beliefs,
      last: this.events,
    };
  }
}

const NO_FACTS: readonly Fact[] = Object.freeze([]);

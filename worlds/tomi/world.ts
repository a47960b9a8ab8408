/**
 * The ToMi world: rooms, containers in rooms, objects in containers, and agents who enter, exit
 * and move objects. An agent perceives what happens in its room, and on entering it sees the room
 * (containers are open, so it sees where every object there is).
 *
 * Mental states are beliefs, tracked for every perspective up to `depth`: "Ella" (where Ella
 * thinks each object is), "Ella>Avery" (where Ella thinks Avery thinks it is), and so on. An event
 * updates the perspectives made only of agents who perceived it together: agents in one room see
 * each other, so what they all saw is common knowledge among them.
 */
import { z } from "zod";
import type { StepContext, StepResult, World, WorldEvent, Observation } from "../core/world.js";
import { renderSentence } from "./sentences.js";

export interface TomiLayout {
  readonly rooms: readonly string[];
  readonly containers: readonly string[];
  readonly objects: readonly string[];
}

export type Beliefs = Readonly<Record<string, Readonly<Record<string, string>>>>;

export interface TomiState {
  readonly layout: TomiLayout;
  readonly agents: readonly string[];
  readonly depth: number;
  readonly containerRoom: Readonly<Record<string, string | undefined>>;
  readonly objectContainer: Readonly<Record<string, string | undefined>>;
  /** Where each object was when the story began (for "Where was the X at the beginning?"). */
  readonly initialContainer: Readonly<Record<string, string | undefined>>;
  readonly agentRoom: Readonly<Record<string, string | undefined>>;
  /** Perspective ("Ella", "Ella>Avery") -> object -> container. */
  readonly beliefs: Beliefs;
  /** The events that led to this state (what the state field of the socialized context shows). */
  readonly last: readonly WorldEvent[];
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

/** What an event tells its observers: the object is in the container. */
export type TomiFact = readonly [object: string, container: string];

export interface TomiEventData {
  readonly kind: "enter" | "exit" | "move" | TomiNarration["type"];
  /**
   * What the observers now know, as pairs rather than an object keyed by object names: every
   * story names different objects, and objects with their own keys each get a hidden class of
   * their own, which sends the optimizing compiler back to work on every new story.
   */
  readonly facts: readonly TomiFact[];
}

export interface TomiInit {
  readonly agents: readonly string[];
  readonly layout: TomiLayout;
  readonly containerRoom: Readonly<Record<string, string | undefined>>;
  readonly objectContainer: Readonly<Record<string, string | undefined>>;
  readonly agentRoom?: Readonly<Record<string, string | undefined>>;
  /** How deep nested beliefs are tracked (2: "A thinks B thinks"; 0: none, for a simulation that needs only observations). */
  readonly depth?: number;
}

export function initialTomiState(init: TomiInit): TomiState {
  const agentRoom: Record<string, string | undefined> = {};
  for (const a of init.agents) agentRoom[a] = init.agentRoom?.[a];
  return {
    layout: init.layout,
    agents: init.agents.slice(),
    depth: init.depth ?? 2,
    containerRoom: { ...init.containerRoom },
    objectContainer: { ...init.objectContainer },
    initialContainer: { ...init.objectContainer },
    agentRoom,
    beliefs: {},
    last: [],
  };
}

/** Agents in `room`, in agent order. */
export function agentsIn(state: Pick<TomiState, "agents" | "agentRoom">, room: string | undefined): string[] {
  if (room === undefined) return [];
  return state.agents.filter((a) => state.agentRoom[a] === room);
}

/** Objects visible in `room` (in containers placed there), as object -> container. */
export function visibleIn(state: Pick<TomiState, "layout" | "objectContainer" | "containerRoom">, room: string | undefined): Record<string, string> {
  return Object.fromEntries(visibleFacts(state, room));
}

/** Objects visible in `room`, in layout order. */
function visibleFacts(state: Pick<TomiState, "layout" | "objectContainer" | "containerRoom">, room: string | undefined): TomiFact[] {
  const facts: TomiFact[] = [];
  if (room === undefined) return facts;
  for (const obj of state.layout.objects) {
    const c = state.objectContainer[obj];
    if (c !== undefined && state.containerRoom[c] === room) facts.push([obj, c]);
  }
  return facts;
}

export function perspectiveKey(path: readonly string[]): string {
  return path.join(">");
}

/** The container `path` believes `object` is in ("A" or "A>B" ...), if any. */
export function beliefOf(state: Pick<TomiState, "beliefs">, path: readonly string[], object: string): string | undefined {
  return state.beliefs[perspectiveKey(path)]?.[object];
}

/** An agent's surroundings: its room, who is there, and where the objects there are. */
export interface TomiPerception {
  readonly room: string | null;
  readonly present: readonly string[];
  readonly visible: Readonly<Record<string, string>>;
}

function perception(state: TomiState, agent: string): TomiPerception {
  const room = state.agentRoom[agent];
  return { room: room ?? null, present: agentsIn(state, room), visible: visibleIn(state, room) };
}

/**
 * An observation whose `data` (the agent's surroundings) is built only when read: replaying a
 * story observes every agent at every timestep, and only live agents look at their surroundings.
 */
class TomiObservation implements Observation {
  readonly sameAsState?: boolean;
  private perceived: TomiPerception | undefined;

  constructor(
    readonly text: string,
    sameAsState: boolean,
    private readonly state: TomiState,
    private readonly agent: string,
  ) {
    if (sameAsState) this.sameAsState = true;
  }

  get data(): TomiPerception {
    return (this.perceived ??= perception(this.state, this.agent));
  }

  toJSON(): Observation {
    return { text: this.text, ...(this.sameAsState ? { sameAsState: true } : {}), data: this.data };
  }
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

  check(state: TomiState, agent: string, action: TomiAction): string | undefined {
    const here = state.agentRoom[agent];
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
        const from = state.objectContainer[action.object];
        if (from === undefined || state.containerRoom[from] !== here) return `the ${action.object} is not in the ${here}`;
        if (from === action.container) return `the ${action.object} is already in the ${action.container}`;
        const where = state.containerRoom[action.container];
        if (where !== undefined && where !== here) return `the ${action.container} is not in the ${here}`;
        return undefined;
      }
    }
  }

  observe(state: TomiState, agent: string): Observation {
    let seen = 0;
    for (const e of state.last) if (e.observers.includes(agent)) seen++;
    if (seen === 0) return new TomiObservation("", false, state, agent);
    if (seen === state.last.length) return new TomiObservation(this.describe(state), true, state, agent);
    const text = state.last
      .filter((e) => e.observers.includes(agent))
      .map((e) => e.text)
      .join(" ");
    return new TomiObservation(text, false, state, agent);
  }

  describe(state: TomiState): string {
    if (state.last.length === 0) return "none";
    if (state.last.length === 1) return state.last[0]!.text;
    return state.last.map((e) => e.text).join(" ");
  }

  renderAction(state: TomiState, agent: string, action: TomiAction): string {
    switch (action.type) {
      case "none":
        return "none";
      case "enter":
        return `enters the ${action.room}`;
      case "exit":
        return `exits the ${state.agentRoom[agent] ?? "room"}`;
      case "move":
        return `moves the ${action.object} to the ${action.container}`;
    }
  }

  mentalState(state: TomiState, agent: string): string | undefined {
    const mine = state.beliefs[agent];
    if (!mine) return undefined;
    // (Not memoized in a WeakMap: weak tables cost every young-generation GC more than this saves.)
    let text = "";
    for (const obj of state.layout.objects) {
      const c = mine[obj];
      if (c !== undefined) text += `${text ? " " : ""}I believe the ${obj} is in the ${c}.`;
    }
    return text === "" ? undefined : text;
  }

  isTerminal(): boolean {
    return false;
  }

  step(state: TomiState, actions: ReadonlyMap<string, TomiAction>, ctx: StepContext<TomiNarration>): StepResult<TomiState> {
    const draft = new Draft(state);
    for (const n of ctx.exogenous) draft.narrate(n);
    for (const agent of state.agents) {
      const action = actions.get(agent);
      if (action && action.type !== "none") draft.act(agent, action);
    }
    return { state: draft.finish(), events: draft.events };
  }
}

const NOOP: TomiAction = Object.freeze({ type: "none" });

/** Copy-on-write state under construction during one transition. */
class Draft {
  readonly events: WorldEvent[] = [];
  readonly agents: readonly string[];
  readonly layout: TomiLayout;
  containerRoom: Record<string, string | undefined>;
  objectContainer: Record<string, string | undefined>;
  agentRoom: Record<string, string | undefined>;
  private beliefs: Record<string, Readonly<Record<string, string>>>;
  private readonly base: TomiState;
  private own = { containerRoom: false, objectContainer: false, agentRoom: false, beliefs: false };
  /** Perspectives whose belief map this transition already copied. */
  private copied: Set<string> | undefined;

  constructor(base: TomiState) {
    this.base = base;
    this.agents = base.agents;
    this.layout = base.layout;
    this.containerRoom = base.containerRoom as Record<string, string | undefined>;
    this.objectContainer = base.objectContainer as Record<string, string | undefined>;
    this.agentRoom = base.agentRoom as Record<string, string | undefined>;
    this.beliefs = base.beliefs as Record<string, Readonly<Record<string, string>>>;
  }

  private setRoom(agent: string, room: string | undefined): void {
    if (!this.own.agentRoom) {
      this.agentRoom = { ...this.agentRoom };
      this.own.agentRoom = true;
    }
    this.agentRoom[agent] = room;
  }

  private placeContainer(container: string, room: string): void {
    if (this.containerRoom[container] === room) return;
    if (!this.own.containerRoom) {
      this.containerRoom = { ...this.containerRoom };
      this.own.containerRoom = true;
    }
    this.containerRoom[container] = room;
  }

  private putObject(object: string, container: string): void {
    if (!this.own.objectContainer) {
      this.objectContainer = { ...this.objectContainer };
      this.own.objectContainer = true;
    }
    this.objectContainer[object] = container;
  }

  private emit(kind: TomiEventData["kind"], text: string, observers: string[], facts: readonly TomiFact[], actor?: string): void {
    this.reveal(observers, facts);
    const data: TomiEventData = { kind, facts };
    // One shape for every event (JSON leaves an undefined actor out, as it would an absent one).
    this.events.push({ text, observers, actor, data });
  }

  /** Everyone in `observers` now knows `facts`, and knows that the others know (to `depth`). */
  private reveal(observers: readonly string[], facts: readonly TomiFact[]): void {
    if (facts.length === 0 || observers.length === 0) return;
    if (!this.own.beliefs) {
      this.beliefs = { ...this.beliefs };
      this.own.beliefs = true;
    }
    const depth = this.base.depth;
    if (depth < 1) return;
    const copied = (this.copied ??= new Set());
    const path: string[] = [];
    const visit = (key: string) => {
      let b = this.beliefs[key] as Record<string, string> | undefined;
      if (!copied.has(key)) {
        b = { ...b };
        this.beliefs[key] = b;
        copied.add(key);
      }
      for (let i = 0; i < facts.length; i++) b![facts[i]![0]] = facts[i]![1];
      if (path.length >= depth) return;
      for (const next of observers) {
        if (path.includes(next)) continue;
        path.push(next);
        visit(`${key}>${next}`);
        path.pop();
      }
    };
    for (const a of observers) {
      path.push(a);
      visit(a);
      path.pop();
    }
  }

  narrate(n: TomiNarration): void {
    switch (n.type) {
      case "object_at": {
        const observers = agentsIn(this, this.containerRoom[n.container]);
        this.emit("object_at", `The ${n.object} is in the ${n.container}.`, observers, [[n.object, n.container]]);
        return;
      }
      case "container_at": {
        this.placeContainer(n.container, n.room);
        const facts: TomiFact[] = [];
        for (const obj of this.layout.objects) if (this.objectContainer[obj] === n.container) facts.push([obj, n.container]);
        this.emit("container_at", withFacts(`The ${n.container} is in the ${n.room}.`, facts), agentsIn(this, n.room), facts);
        return;
      }
      case "agents_at": {
        for (const a of n.agents) this.setRoom(a, n.room);
        const facts = visibleFacts(this, n.room);
        const text = renderSentence({ kind: "agents_at", agents: n.agents, room: n.room });
        this.emit("agents_at", withFacts(text, facts), agentsIn(this, n.room), facts);
        return;
      }
      case "remark":
        this.emit("remark", renderSentence({ kind: "remark", agent: n.agent, verb: n.verb, thing: n.thing, period: n.period }), [], NO_FACTS);
        return;
    }
  }

  act(agent: string, action: Exclude<TomiAction, { type: "none" }>): void {
    const here = this.agentRoom[agent];
    switch (action.type) {
      case "enter": {
        if (here !== undefined && here !== action.room) this.exit(agent, here);
        this.setRoom(agent, action.room);
        const facts = visibleFacts(this, action.room);
        this.emit("enter", withFacts(`${agent} entered the ${action.room}.`, facts), agentsIn(this, action.room), facts, agent);
        return;
      }
      case "exit":
        if (here !== undefined) this.exit(agent, here);
        return;
      case "move": {
        if (here === undefined) return;
        this.placeContainer(action.container, here);
        this.putObject(action.object, action.container);
        this.emit(
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
    this.emit("exit", `${agent} exited the ${room}.`, observers, NO_FACTS, agent);
  }

  finish(): TomiState {
    return {
      layout: this.layout,
      agents: this.agents,
      depth: this.base.depth,
      containerRoom: this.containerRoom,
      objectContainer: this.objectContainer,
      initialContainer: this.base.initialContainer,
      agentRoom: this.agentRoom,
      beliefs: this.beliefs,
      last: this.events,
    };
  }
}

const NO_FACTS: readonly TomiFact[] = Object.freeze([]);

function withFacts(text: string, facts: readonly TomiFact[]): string {
  for (let i = 0; i < facts.length; i++) text += ` The ${facts[i]![0]} is in the ${facts[i]![1]}.`;
  return text;
}

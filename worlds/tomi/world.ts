/**
 * The ToMi world: rooms, containers in rooms, objects in containers, and agents who enter, exit
 * and move objects. An agent perceives what happens in its room, and on entering it sees the room
 * (containers are open, so it sees where every object there is).
 *
 * Mental states are beliefs, tracked for every perspective up to `depth`: "Ella" (where Ella
 * thinks each object is), "Ella>Avery" (where Ella thinks Avery thinks it is), and so on. An event
 * updates the perspectives made only of agents who perceived it together: agents in one room see
 * each other, so what they all saw is common knowledge among them.
 *
 * Everything keyed by a story's names (rooms, containers, objects, agents, perspectives) is a Map,
 * not an object: every story names different things, and objects keyed by them each get hidden
 * classes of their own, which kept the replay's property reads megamorphic.
 */
import { z } from "zod";
import type { StepContext, StepResult, World, WorldEvent, Observation } from "../core/world.js";
import { renderSentence } from "./sentences.js";

export interface TomiLayout {
  readonly rooms: readonly string[];
  readonly containers: readonly string[];
  readonly objects: readonly string[];
}

/** Perspective ("Ella", "Ella>Avery") -> object -> container. */
export type Beliefs = ReadonlyMap<string, ReadonlyMap<string, string>>;

export interface TomiState {
  readonly layout: TomiLayout;
  readonly agents: readonly string[];
  readonly depth: number;
  /** Container -> room (absent: the story never says). */
  readonly containerRoom: ReadonlyMap<string, string>;
  /** Object -> container. */
  readonly objectContainer: ReadonlyMap<string, string>;
  /** Where each object was when the story began (for "Where was the X at the beginning?"). */
  readonly initialContainer: ReadonlyMap<string, string>;
  /** Agent -> room (absent: in no room). */
  readonly agentRoom: ReadonlyMap<string, string>;
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
  readonly containerRoom: ReadonlyMap<string, string>;
  readonly objectContainer: ReadonlyMap<string, string>;
  readonly agentRoom?: ReadonlyMap<string, string>;
  /** How deep nested beliefs are tracked (2: "A thinks B thinks"; 0: none, for a simulation that needs only observations). */
  readonly depth?: number;
}

const NO_BELIEFS: Beliefs = new Map();

export function initialTomiState(init: TomiInit): TomiState {
  const agentRoom = new Map<string, string>();
  for (let i = 0; i < init.agents.length; i++) {
    const a = init.agents[i]!;
    const room = init.agentRoom?.get(a);
    if (room !== undefined) agentRoom.set(a, room);
  }
  // States are copied on write (see Draft), so the init's maps can be shared, not copied.
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

/** Agents in `room`, in agent order. */
export function agentsIn(state: Pick<TomiState, "agents" | "agentRoom">, room: string | undefined): string[] {
  if (room === undefined) return [];
  const out: string[] = [];
  // Indexed loops on the replay's path: V8's baseline code runs a for-of as iterator calls.
  const agents = state.agents;
  for (let i = 0; i < agents.length; i++) if (state.agentRoom.get(agents[i]!) === room) out.push(agents[i]!);
  return out;
}

/** Objects visible in `room` (in containers placed there), as object -> container. */
export function visibleIn(state: Pick<TomiState, "layout" | "objectContainer" | "containerRoom">, room: string | undefined): Record<string, string> {
  return Object.fromEntries(visibleFacts(state, room));
}

/** Objects visible in `room`, in layout order. */
function visibleFacts(state: Pick<TomiState, "layout" | "objectContainer" | "containerRoom">, room: string | undefined): TomiFact[] {
  const facts: TomiFact[] = [];
  if (room === undefined) return facts;
  const objects = state.layout.objects;
  for (let i = 0; i < objects.length; i++) {
    const obj = objects[i]!;
    const c = state.objectContainer.get(obj);
    if (c !== undefined && state.containerRoom.get(c) === room) facts.push([obj, c]);
  }
  return facts;
}

export function perspectiveKey(path: readonly string[]): string {
  // Every question asks about one or two names: Array.join costs more than the lookup it keys.
  if (path.length === 1) return path[0]!;
  if (path.length === 2) return `${path[0]!}>${path[1]!}`;
  return path.join(">");
}

/** The container `path` believes `object` is in ("A" or "A>B" ...), if any. */
export function beliefOf(state: Pick<TomiState, "beliefs">, path: readonly string[], object: string): string | undefined {
  return state.beliefs.get(perspectiveKey(path))?.get(object);
}

/** An agent's surroundings: its room, who is there, and where the objects there are. */
export interface TomiPerception {
  readonly room: string | null;
  readonly present: readonly string[];
  readonly visible: Readonly<Record<string, string>>;
}

function perception(state: TomiState, agent: string): TomiPerception {
  const room = state.agentRoom.get(agent);
  return { room: room ?? null, present: agentsIn(state, room), visible: visibleIn(state, room) };
}

/**
 * An observation whose `data` (the agent's surroundings) is built only when read: replaying a
 * story observes every agent at every timestep, and only live agents look at their surroundings.
 */
class TomiObservation implements Observation {
  // Both fields are set in every observation (one hidden class for all): undefined, not absent.
  readonly sameAsState: true | undefined;
  private perceived: TomiPerception | undefined = undefined;

  constructor(
    readonly text: string,
    sameAsState: boolean,
    private readonly state: TomiState,
    private readonly agent: string,
  ) {
    this.sameAsState = sameAsState ? true : undefined;
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
    let seen = 0;
    const last = state.last;
    for (let i = 0; i < last.length; i++) if (last[i]!.observers.includes(agent)) seen++;
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
        return `exits the ${state.agentRoom.get(agent) ?? "room"}`;
      case "move":
        return `moves the ${action.object} to the ${action.container}`;
    }
  }

  mentalState(state: TomiState, agent: string): string | undefined {
    const mine = state.beliefs.get(agent);
    if (!mine) return undefined;
    // (Not memoized in a WeakMap: weak tables cost every young-generation GC more than this saves.)
    let text = "";
    const objects = state.layout.objects;
    for (let i = 0; i < objects.length; i++) {
      const obj = objects[i]!;
      const c = mine.get(obj);
      if (c !== undefined) text += `${text ? " " : ""}I believe the ${obj} is in the ${c}.`;
    }
    return text === "" ? undefined : text;
  }

  isTerminal(): boolean {
    return false;
  }

  step(state: TomiState, actions: ReadonlyMap<string, TomiAction>, ctx: StepContext<TomiNarration>): StepResult<TomiState> {
    const draft = new Draft(state);
    const { exogenous } = ctx;
    for (let i = 0; i < exogenous.length; i++) draft.narrate(exogenous[i]!);
    const agents = state.agents;
    for (let i = 0; i < agents.length; i++) {
      const agent = agents[i]!;
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
  containerRoom: ReadonlyMap<string, string>;
  objectContainer: ReadonlyMap<string, string>;
  agentRoom: ReadonlyMap<string, string>;
  private beliefs: ReadonlyMap<string, ReadonlyMap<string, string>>;
  private readonly base: TomiState;
  // The maps this transition already copied (a transition changes few of them, most none).
  // Each starts as undefined here, not when first copied: drafts then share one hidden class,
  // whatever they copy and in what order, and their property reads stay monomorphic.
  private ownContainerRoom: Map<string, string> | undefined = undefined;
  private ownObjectContainer: Map<string, string> | undefined = undefined;
  private ownAgentRoom: Map<string, string> | undefined = undefined;
  private ownBeliefs: Map<string, ReadonlyMap<string, string>> | undefined = undefined;
  /** Perspectives whose belief map this transition already copied. */
  private copied: Map<string, Map<string, string>> | undefined = undefined;

  constructor(base: TomiState) {
    this.base = base;
    this.agents = base.agents;
    this.layout = base.layout;
    this.containerRoom = base.containerRoom;
    this.objectContainer = base.objectContainer;
    this.agentRoom = base.agentRoom;
    this.beliefs = base.beliefs;
  }

  private setRoom(agent: string, room: string | undefined): void {
    const own = (this.ownAgentRoom ??= new Map(this.agentRoom));
    this.agentRoom = own;
    if (room === undefined) own.delete(agent);
    else own.set(agent, room);
  }

  private placeContainer(container: string, room: string): void {
    if (this.containerRoom.get(container) === room) return;
    const own = (this.ownContainerRoom ??= new Map(this.containerRoom));
    this.containerRoom = own;
    own.set(container, room);
  }

  private putObject(object: string, container: string): void {
    const own = (this.ownObjectContainer ??= new Map(this.objectContainer));
    this.objectContainer = own;
    own.set(object, container);
  }

  private emit(kind: TomiEventData["kind"], text: string, observers: string[], facts: readonly TomiFact[], actor?: string): void {
    this.reveal(observers, facts);
    const data: TomiEventData = { kind, facts };
    // One shape for every event (JSON leaves an undefined actor out, as it would an absent one).
    this.events.push({ text, observers, actor, data });
  }

  /** Everyone in `observers` now knows `facts`, and knows that the others know (to `depth`). */
  private reveal(observers: readonly string[], facts: readonly TomiFact[]): void {
    const depth = this.base.depth;
    if (depth < 1 || facts.length === 0 || observers.length === 0) return;
    const beliefs = (this.ownBeliefs ??= new Map(this.beliefs));
    this.beliefs = beliefs;
    const copied = (this.copied ??= new Map());
    const path: string[] = [];
    const visit = (key: string) => {
      let b = copied.get(key);
      if (b === undefined) {
        b = new Map(beliefs.get(key));
        beliefs.set(key, b);
        copied.set(key, b);
      }
      for (let i = 0; i < facts.length; i++) b.set(facts[i]![0], facts[i]![1]);
      if (path.length >= depth) return;
      for (let i = 0; i < observers.length; i++) {
        const next = observers[i]!;
        if (path.includes(next)) continue;
        path.push(next);
        visit(`${key}>${next}`);
        path.pop();
      }
    };
    for (let i = 0; i < observers.length; i++) {
      const a = observers[i]!;
      path.push(a);
      visit(a);
      path.pop();
    }
  }

  narrate(n: TomiNarration): void {
    switch (n.type) {
      case "object_at": {
        const observers = agentsIn(this, this.containerRoom.get(n.container));
        this.emit("object_at", `The ${n.object} is in the ${n.container}.`, observers, [[n.object, n.container]]);
        return;
      }
      case "container_at": {
        this.placeContainer(n.container, n.room);
        const facts: TomiFact[] = [];
        for (const obj of this.layout.objects) if (this.objectContainer.get(obj) === n.container) facts.push([obj, n.container]);
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
    const here = this.agentRoom.get(agent);
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

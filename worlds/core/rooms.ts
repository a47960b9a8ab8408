/**
 * Rooms, containers in rooms, objects in containers, agents who move between rooms, and what
 * every perspective believes: the physics ToMi and Hi-ToM share, so that a belief fix is made once.
 *
 * An agent perceives what happens in its room. Mental states are beliefs, tracked for every
 * perspective of distinct agents up to the world's depth: "Ella" (where Ella thinks each object
 * is), "Ella>Avery" (where Ella thinks Avery thinks it is), and so on. What agents see together is
 * common knowledge among them: a seen event updates every perspective made of its witnesses.
 *
 * Everything keyed by a story's names (rooms, containers, objects, agents, perspectives) is a Map,
 * so that a room or an object called "constructor" is a name like any other. The loops here are
 * indexed: they run per agent and timestep of every story a benchmark run replays.
 */
import type { Observation, WorldEvent } from "./world.js";

export interface Layout {
  readonly rooms: readonly string[];
  readonly containers: readonly string[];
  readonly objects: readonly string[];
}

/** Perspective ("Ella", "Ella>Avery") -> object -> container. */
export type Beliefs = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** What an event tells its observers: the object is in the container. */
export type Fact = readonly [object: string, container: string];

/** The part of a world's state that this physics keeps. */
export interface Places {
  readonly layout: Layout;
  readonly agents: readonly string[];
  /** How deep nested beliefs are tracked (2: "A thinks B thinks"; 0: none, for a replay that needs only observations). */
  readonly depth: number;
  /** Container -> room (absent: the story never says). */
  readonly containerRoom: ReadonlyMap<string, string>;
  /** Object -> container. */
  readonly objectContainer: ReadonlyMap<string, string>;
  /** Agent -> room (absent: in no room). */
  readonly agentRoom: ReadonlyMap<string, string>;
  readonly beliefs: Beliefs;
  /** The events that led to this state (what the state field of the socialized context shows). */
  readonly last: readonly WorldEvent[];
}

/** An agent's surroundings, for programs (the web client, scripted and random agents). */
export interface Perception {
  readonly room: string | null;
  readonly present: readonly string[];
  readonly visible: Readonly<Record<string, string>>;
}

/** A map from a record's defined entries (a story's init gives records). */
export function mapOf(record: Readonly<Record<string, string | undefined>>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(record)) if (v !== undefined) out.set(k, v);
  return out;
}

export function perspectiveKey(path: readonly string[]): string {
  return path.join(">");
}

/** The container `path` believes `object` is in ("A", "A>B", ...), if any. */
export function beliefOf(state: Pick<Places, "beliefs">, path: readonly string[], object: string): string | undefined {
  return state.beliefs.get(perspectiveKey(path))?.get(object);
}

/** Agents in `room`, in agent order. */
export function agentsIn(state: Pick<Places, "agents" | "agentRoom">, room: string | undefined): string[] {
  const out: string[] = [];
  if (room === undefined) return out;
  const agents = state.agents;
  for (let i = 0; i < agents.length; i++) if (state.agentRoom.get(agents[i]!) === room) out.push(agents[i]!);
  return out;
}

/** Objects visible in `room` (in containers placed there), in layout order. */
export function visibleFacts(state: Pick<Places, "layout" | "objectContainer" | "containerRoom">, room: string | undefined): Fact[] {
  const facts: Fact[] = [];
  if (room === undefined) return facts;
  const objects = state.layout.objects;
  for (let i = 0; i < objects.length; i++) {
    const c = state.objectContainer.get(objects[i]!);
    if (c !== undefined && state.containerRoom.get(c) === room) facts.push([objects[i]!, c]);
  }
  return facts;
}

/** Objects visible in `room`, as object -> container. */
export function visibleIn(state: Pick<Places, "layout" | "objectContainer" | "containerRoom">, room: string | undefined): Record<string, string> {
  return Object.fromEntries(visibleFacts(state, room));
}

/** Every sequence of distinct agents from `agents`, of length 1 to `depth`. */
export function allChains(agents: readonly string[], depth: number): string[][] {
  const out: string[][] = [];
  const grow = (path: string[]) => {
    out.push(path);
    if (path.length < depth) for (const a of agents) if (!path.includes(a)) grow([...path, a]);
  };
  for (const a of agents) grow([a]);
  return out;
}

/** An event's sentence followed by what the witnesses now see ("Ella entered the garage. The apple is in the box."). */
export function withFacts(text: string, facts: readonly Fact[]): string {
  for (let i = 0; i < facts.length; i++) text += ` The ${facts[i]![0]} is in the ${facts[i]![1]}.`;
  return text;
}

/** The socialized context's state field: the events that led to the state ("none" when there were none). */
export function describeEvents(state: Pick<Places, "last">): string {
  const last = state.last;
  if (last.length === 0) return "none";
  if (last.length === 1) return last[0]!.text;
  return last.map((e) => e.text).join(" ");
}

/**
 * What `agent` perceived of the events that led to `state`: nothing, the whole state
 * (`<same_as_state />`), or the events it witnessed. Its surroundings (`perceive`) are worked out
 * only when read: a replay observes every agent at every timestep, and only live agents look.
 */
export function observePlaces<S extends Places>(state: S, agent: string, perceive: (state: S, agent: string) => Perception): Observation {
  const last = state.last;
  let seen = 0;
  for (let i = 0; i < last.length; i++) if (last[i]!.observers.includes(agent)) seen++;
  const all = seen > 0 && seen === last.length;
  const text = seen === 0 ? "" : all ? describeEvents(state) : last.filter((e) => e.observers.includes(agent)).map((e) => e.text).join(" ");
  return new PlacesObservation(text, all, state, agent, perceive);
}

class PlacesObservation<S extends Places> implements Observation {
  readonly sameAsState: true | undefined;
  private perceived: Perception | undefined;

  constructor(
    readonly text: string,
    sameAsState: boolean,
    private readonly state: S,
    private readonly agent: string,
    private readonly perceive: (state: S, agent: string) => Perception,
  ) {
    this.sameAsState = sameAsState ? true : undefined;
  }

  get data(): Perception {
    return (this.perceived ??= this.perceive(this.state, this.agent));
  }

  toJSON(): Observation {
    return { text: this.text, ...(this.sameAsState ? { sameAsState: true } : {}), data: this.data };
  }
}

/** `agent`'s own beliefs as the socialized context writes them ("I believe the X is in the Y."), in layout order. */
export function beliefsText(state: Pick<Places, "beliefs" | "layout">, agent: string): string | undefined {
  const mine = state.beliefs.get(agent);
  if (!mine) return undefined;
  let text = "";
  const objects = state.layout.objects;
  for (let i = 0; i < objects.length; i++) {
    const c = mine.get(objects[i]!);
    if (c !== undefined) text += `${text ? " " : ""}I believe the ${objects[i]!} is in the ${c}.`;
  }
  return text === "" ? undefined : text;
}

/**
 * A state's places and beliefs under construction during one transition, copied on write: a
 * transition changes few of the maps, most none, and the states before it stay as they were.
 * A world's draft extends it with its own rules (who perceives what, claims, exits).
 */
export class PlacesDraft {
  readonly events: WorldEvent[] = [];
  containerRoom: ReadonlyMap<string, string>;
  objectContainer: ReadonlyMap<string, string>;
  agentRoom: ReadonlyMap<string, string>;
  beliefs: Beliefs;
  // The maps this transition has copied already (undefined: still the base state's).
  private ownContainerRoom: Map<string, string> | undefined;
  private ownObjectContainer: Map<string, string> | undefined;
  private ownAgentRoom: Map<string, string> | undefined;
  private ownBeliefs: Map<string, ReadonlyMap<string, string>> | undefined;
  /** Perspectives whose belief map this transition has copied already. */
  private readonly copied = new Map<string, Map<string, string>>();

  constructor(protected readonly base: Places) {
    this.containerRoom = base.containerRoom;
    this.objectContainer = base.objectContainer;
    this.agentRoom = base.agentRoom;
    this.beliefs = base.beliefs;
  }

  get layout(): Layout {
    return this.base.layout;
  }

  get agents(): readonly string[] {
    return this.base.agents;
  }

  setRoom(agent: string, room: string | undefined): void {
    const own = (this.ownAgentRoom ??= new Map(this.agentRoom));
    this.agentRoom = own;
    if (room === undefined) own.delete(agent);
    else own.set(agent, room);
  }

  placeContainer(container: string, room: string): void {
    if (this.containerRoom.get(container) === room) return;
    const own = (this.ownContainerRoom ??= new Map(this.containerRoom));
    this.containerRoom = own;
    own.set(container, room);
  }

  putObject(object: string, container: string): void {
    const own = (this.ownObjectContainer ??= new Map(this.objectContainer));
    this.objectContainer = own;
    own.set(object, container);
  }

  /** The perspective `path` ("A", "A>B") now believes `facts`. */
  believe(path: readonly string[], facts: readonly Fact[]): void {
    this.believeAt(perspectiveKey(path), facts);
  }

  /** Everyone in `observers` now knows `facts`, and knows that the others know (every chain of distinct observers, to the depth). */
  reveal(observers: readonly string[], facts: readonly Fact[]): void {
    const depth = this.base.depth;
    if (depth < 1 || facts.length === 0) return;
    const path: string[] = [];
    const visit = (key: string) => {
      this.believeAt(key, facts);
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
      path.push(observers[i]!);
      visit(observers[i]!);
      path.pop();
    }
  }

  emit(event: WorldEvent): void {
    this.events.push(event);
  }

  private believeAt(key: string, facts: readonly Fact[]): void {
    let b = this.copied.get(key);
    if (b === undefined) {
      const beliefs = (this.ownBeliefs ??= new Map(this.beliefs));
      this.beliefs = beliefs;
      b = new Map(beliefs.get(key));
      beliefs.set(key, b);
      this.copied.set(key, b);
    }
    for (let i = 0; i < facts.length; i++) b.set(facts[i]![0], facts[i]![1]);
  }
}

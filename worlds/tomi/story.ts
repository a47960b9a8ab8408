/**
 * A ToMi story as the world model sees it: the initial state the sentences imply, and a script
 * with one step per sentence (an agent's action, or a narrator's statement).
 *
 * Stories leave some of the world implicit. A container is in the room where someone moves an
 * object into or out of it; failing that, where a sentence ("The box is in the hallway.") puts
 * it; failing both, in the room where most characters are when the story first mentions it.
 * "The A is in the B." places a container when B is a room of the story (and A is not an object
 * the story moves), else an object.
 */
import { DataError } from "../core/errors.js";
import type { TomiSentence } from "./sentence.js";
import type { TomiAction, TomiInit, TomiNarration } from "./world.js";

export interface ScriptStep {
  readonly text: string;
  /** 1-based line in the source file (for error messages); 0 for generated stories. */
  readonly line: number;
  readonly actor?: string;
  readonly action?: TomiAction;
  readonly narration?: TomiNarration;
}

export interface TomiScenario {
  readonly init: TomiInit;
  readonly script: readonly ScriptStep[];
}

export interface SentenceAt {
  readonly sentence: TomiSentence;
  readonly text: string;
  readonly line: number;
}

export function buildScenario(sentences: readonly SentenceAt[], file: string, depth = 2): TomiScenario {
  const agents: string[] = [];
  const rooms = new Set<string>();
  const addAgent = (a: string) => {
    if (!agents.includes(a)) agents.push(a);
  };
  // "pantry" is both a room and a container in ToMi's vocabulary: an object the story moves is never a container.
  const movedObjects = new Set<string>();
  for (let i = 0; i < sentences.length; i++) {
    const s = sentences[i]!.sentence;
    if (s.kind === "enter" || s.kind === "exit" || s.kind === "agents_at") rooms.add(s.room);
    else if (s.kind === "move") movedObjects.add(s.object);
  }
  const isContainerAt = (s: { subject: string; place: string }): boolean => rooms.has(s.place) && !movedObjects.has(s.subject);

  // First pass: follow agents' rooms to find where containers must be.
  const agentRoom = new Map<string, string | undefined>();
  const objectContainer = new Map<string, string>();
  const initial = new Map<string, string>();
  const explicitRoom = new Map<string, { room: string; line: number }>();
  const movedRoom = new Map<string, { room: string; line: number }>();
  const crowdRoom = new Map<string, string | undefined>();
  const containers: string[] = [];
  const objects: string[] = [];
  const addContainer = (c: string) => {
    if (!containers.includes(c)) containers.push(c);
  };
  const crowd = (): string | undefined => {
    const counts = new Map<string, number>();
    agentRoom.forEach((r) => {
      if (r !== undefined) counts.set(r, (counts.get(r) ?? 0) + 1);
    });
    let best: string | undefined;
    let bestN = 0;
    counts.forEach((n, r) => {
      if (n > bestN) {
        best = r;
        bestN = n;
      }
    });
    return best;
  };
  for (let i = 0; i < sentences.length; i++) {
    const { sentence: s, line } = sentences[i]!;
    switch (s.kind) {
      case "enter":
        addAgent(s.agent);
        agentRoom.set(s.agent, s.room);
        break;
      case "exit":
        addAgent(s.agent);
        agentRoom.set(s.agent, undefined);
        break;
      case "agents_at":
        for (const a of s.agents) {
          addAgent(a);
          agentRoom.set(a, s.room);
        }
        break;
      case "remark":
        addAgent(s.agent);
        break;
      case "move": {
        addAgent(s.agent);
        const room = agentRoom.get(s.agent);
        if (room === undefined) throw new DataError(file, { line }, `${s.agent} moves the ${s.object} but is not in any room`);
        const from = objectContainer.get(s.object);
        if (from === undefined) throw new DataError(file, { line }, `the ${s.object} is moved before the story says where it is`);
        if (!objects.includes(s.object)) objects.push(s.object);
        addContainer(s.container);
        for (let k = 0; k < 2; k++) {
          const c = k === 0 ? from : s.container;
          const known = movedRoom.get(c);
          if (known && known.room !== room) {
            throw new DataError(file, { line }, `the ${c} would be in the ${room}, but line ${known.line} has it in the ${known.room}`);
          }
          if (!known) movedRoom.set(c, { room, line });
        }
        objectContainer.set(s.object, s.container);
        break;
      }
      case "located": {
        if (isContainerAt(s)) {
          addContainer(s.subject);
          const known = explicitRoom.get(s.subject);
          if (known && known.room !== s.place) {
            throw new DataError(file, { line }, `the ${s.subject} is in the ${s.place}, but line ${known.line} says the ${known.room}`);
          }
          explicitRoom.set(s.subject, { room: s.place, line });
        } else {
          if (!objects.includes(s.subject)) objects.push(s.subject);
          addContainer(s.place);
          if (!crowdRoom.has(s.place)) crowdRoom.set(s.place, crowd());
          const now = objectContainer.get(s.subject);
          if (now === undefined) {
            initial.set(s.subject, s.place);
            objectContainer.set(s.subject, s.place);
          } else if (now !== s.place) {
            throw new DataError(file, { line }, `the story says the ${s.subject} is in the ${s.place}, but it is in the ${now}`);
          }
        }
        break;
      }
    }
  }

  const containerRoom = new Map<string, string>();
  for (let i = 0; i < containers.length; i++) {
    const c = containers[i]!;
    const explicit = explicitRoom.get(c);
    const moved = movedRoom.get(c);
    if (explicit && moved && explicit.room !== moved.room) {
      throw new DataError(file, { line: explicit.line }, `the ${c} is said to be in the ${explicit.room}, but line ${moved.line} uses it in the ${moved.room}`);
    }
    const room = moved?.room ?? explicit?.room ?? crowdRoom.get(c);
    if (room !== undefined) {
      containerRoom.set(c, room);
      rooms.add(room);
    }
  }

  // One step per sentence: an agent's action, or what the narrator states (every step with the same
  // five fields: a run builds the script of every story it replays, twice).
  const script: ScriptStep[] = [];
  for (let i = 0; i < sentences.length; i++) {
    const { sentence: s, text, line } = sentences[i]!;
    let actor: string | undefined;
    let action: TomiAction | undefined;
    let narration: TomiNarration | undefined;
    switch (s.kind) {
      case "enter":
        actor = s.agent;
        action = { type: "enter", room: s.room };
        break;
      case "exit":
        actor = s.agent;
        action = { type: "exit", room: s.room };
        break;
      case "move":
        actor = s.agent;
        action = { type: "move", object: s.object, container: s.container };
        break;
      case "agents_at":
        narration = { type: "agents_at", agents: s.agents, room: s.room };
        break;
      case "remark":
        narration = { type: "remark", agent: s.agent, verb: s.verb, thing: s.thing, period: s.period };
        break;
      case "located":
        narration = isContainerAt(s)
          ? { type: "container_at", container: s.subject, room: s.place }
          : { type: "object_at", object: s.subject, container: s.place };
        break;
    }
    script.push({ text, line, actor, action, narration });
  }

  return {
    init: {
      agents,
      layout: { rooms: [...rooms], containers, objects },
      containerRoom,
      objectContainer: initial,
      depth,
    },
    script,
  };
}

/**
 * A Hi-ToM story as the world model sees it: its text read into sentences, the initial state the
 * sentences imply, and a script with one step per sentence (the actions of the agents who act,
 * or a narrator's statement).
 *
 * Stories leave some of the world implicit. An object is where the story first says it is, from
 * the start. A container is in the room where someone moves an object into or out of it; failing
 * that, in the room the story last entered when it first names the container ("A, B and C entered
 * the attic. The onion is in the red_box."). Containers only named in claims have no room.
 */
import { clip, DataError } from "../core/errors.js";
import { parseSentence, type HitomSentence } from "./sentences.js";
import type { HitomAction, HitomInit, HitomNarration } from "./world.js";

export interface SentenceAt {
  readonly sentence: HitomSentence;
  readonly text: string;
  /** 1-based line in the story text (for error messages). */
  readonly line: number;
}

export interface StoryText {
  /** The instruction line a VP story starts with, if any. */
  readonly instruction?: string;
  readonly sentences: readonly SentenceAt[];
}

/** Where a problem in a story is: builds the DataError naming the file and the story line. */
export type Locate = (line: number, message: string) => DataError;

export function locateIn(file: string, field?: string): Locate {
  return (line, message) => new DataError(file, field === undefined ? { line } : { field: `${field} line ${line}` }, message);
}

/**
 * Reads a story: numbered sentences ("1 Ella entered the attic.") in order, blank lines anywhere,
 * an optional unnumbered instruction line first (VP prompts), and an optional "***" end marker.
 */
export function parseStoryText(text: string, locate: Locate): StoryText {
  const sentences: SentenceAt[] = [];
  let instruction: string | undefined;
  let ended = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = i + 1;
    const raw = lines[i]!.replace(/\r$/, "").trim();
    if (raw === "") continue;
    if (ended) throw locate(line, `text after the end marker "***" on line ${ended}: "${clip(raw)}"`);
    if (raw === "***") {
      ended = line;
      continue;
    }
    const m = /^(\d+)\s+(.*)$/.exec(raw);
    if (!m) {
      if (sentences.length === 0 && instruction === undefined) {
        instruction = raw;
        continue;
      }
      throw locate(line, `expected "<number> <sentence>", got "${clip(raw)}"`);
    }
    const n = Number(m[1]);
    if (n !== sentences.length + 1) throw locate(line, `sentence number ${n} where ${sentences.length + 1} was expected`);
    const body = m[2]!.trim();
    const sentence = parseSentence(body);
    if (!sentence) throw locate(line, `unknown sentence: "${clip(body)}"`);
    sentences.push({ sentence, text: body, line });
  }
  if (sentences.length === 0) throw locate(1, "the story has no sentences");
  return instruction === undefined ? { sentences } : { instruction, sentences };
}

export interface ScriptStep {
  readonly text: string;
  readonly line: number;
  /** The agents acting at this step (a group enters together). */
  readonly actions?: Readonly<Record<string, HitomAction>>;
  readonly narration?: HitomNarration;
}

export interface HitomScenario {
  readonly init: HitomInit;
  readonly script: readonly ScriptStep[];
}

export function buildHitomScenario(sentences: readonly SentenceAt[], locate: Locate): HitomScenario {
  const agents: string[] = [];
  const rooms: string[] = [];
  const containers: string[] = [];
  const objects: string[] = [];
  const add = (list: string[], x: string) => {
    if (!list.includes(x)) list.push(x);
  };

  // Follow the agents through the story to place containers and objects.
  const agentRoom = new Map<string, string | undefined>();
  const objectContainer = new Map<string, string>();
  const initial: Record<string, string> = {};
  const placed = new Map<string, { room: string; line: number; moved: boolean }>();
  let scene: string | undefined;
  const place = (c: string, room: string, line: number, moved: boolean) => {
    const known = placed.get(c);
    if (known && known.room !== room) {
      throw locate(line, `the ${c} would be in the ${room}, but line ${known.line} has it in the ${known.room}`);
    }
    if (!known || (moved && !known.moved)) placed.set(c, { room, line, moved });
  };
  const roomOf = (agent: string, line: number, doing: string): string => {
    const room = agentRoom.get(agent);
    if (room === undefined) throw locate(line, `${agent} ${doing} but is not in any room`);
    return room;
  };

  for (const { sentence: s, line } of sentences) {
    switch (s.kind) {
      case "enter":
        add(rooms, s.room);
        for (const a of s.agents) {
          add(agents, a);
          if (agentRoom.get(a) === s.room) throw locate(line, `${a} is already in the ${s.room}`);
          agentRoom.set(a, s.room);
        }
        scene = s.room;
        break;
      case "exit":
        add(rooms, s.room);
        for (const a of s.agents) {
          add(agents, a);
          const here = agentRoom.get(a);
          if (here !== s.room) throw locate(line, here === undefined ? `${a} exits the ${s.room} but is not in any room` : `${a} is in the ${here}, not the ${s.room}`);
          agentRoom.set(a, undefined);
        }
        break;
      case "stay": {
        add(agents, s.agent);
        add(rooms, s.room);
        const here = roomOf(s.agent, line, "stays");
        if (here !== s.room) throw locate(line, `${s.agent} is in the ${here}, not the ${s.room}`);
        break;
      }
      case "located": {
        add(objects, s.object);
        add(containers, s.container);
        const now = objectContainer.get(s.object);
        if (now === undefined) {
          initial[s.object] = s.container;
          objectContainer.set(s.object, s.container);
        } else if (now !== s.container) {
          throw locate(line, `the story says the ${s.object} is in the ${s.container}, but it is in the ${now}`);
        }
        if (scene !== undefined && !placed.has(s.container)) place(s.container, scene, line, false);
        break;
      }
      case "move": {
        add(agents, s.agent);
        const room = roomOf(s.agent, line, `moves the ${s.object}`);
        const from = objectContainer.get(s.object);
        if (from === undefined) throw locate(line, `the ${s.object} is moved before the story says where it is`);
        add(objects, s.object);
        add(containers, s.container);
        for (const c of [from, s.container]) {
          const known = placed.get(c);
          // A container first placed by the scene it was named in moves with the evidence of a move.
          if (known && !known.moved && known.room !== room) placed.delete(c);
          place(c, room, line, true);
        }
        objectContainer.set(s.object, s.container);
        break;
      }
      case "public_claim":
      case "private_claim":
        add(agents, s.agent);
        if (s.kind === "private_claim") add(agents, s.listener);
        roomOf(s.agent, line, "makes a claim");
        if (s.kind === "private_claim" && agentRoom.get(s.listener) !== agentRoom.get(s.agent)) {
          throw locate(line, `${s.listener} is not in the ${agentRoom.get(s.agent)!} with ${s.agent}`);
        }
        add(objects, s.object);
        add(containers, s.container);
        break;
      case "remark":
        add(agents, s.agent);
        break;
    }
  }

  const containerRoom: Record<string, string | undefined> = {};
  for (const c of containers) containerRoom[c] = placed.get(c)?.room;

  const script: ScriptStep[] = sentences.map(({ sentence: s, text, line }): ScriptStep => {
    switch (s.kind) {
      case "enter":
        return { text, line, actions: Object.fromEntries(s.agents.map((a) => [a, { type: "enter", room: s.room, together: s.agents }])) };
      case "exit":
        return { text, line, actions: Object.fromEntries(s.agents.map((a) => [a, { type: "exit", room: s.room }])) };
      case "stay":
        return { text, line, actions: { [s.agent]: { type: "stay" } } };
      case "move":
        return { text, line, actions: { [s.agent]: { type: "move", object: s.object, container: s.container } } };
      case "public_claim":
        return { text, line, actions: { [s.agent]: { type: "claim", object: s.object, container: s.container } } };
      case "private_claim":
        return { text, line, actions: { [s.agent]: { type: "claim", object: s.object, container: s.container, to: s.listener } } };
      case "located":
        return { text, line, narration: { type: "object_at", object: s.object, container: s.container } };
      case "remark":
        return { text, line, narration: { type: "remark", agent: s.agent, verb: s.verb, thing: s.thing } };
    }
  });

  return { init: { agents, layout: { rooms, containers, objects }, containerRoom, objectContainer: initial }, script };
}

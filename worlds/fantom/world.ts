/**
 * The FANToM world: a multi-party conversation. Characters are present or away; an utterance is
 * perceived by everyone present (the speaker included); characters leave (after saying so) and
 * rejoin, and miss what was said meanwhile.
 *
 * Mental states are knowledge of facts, tracked for every perspective up to `depth`: "Linda"
 * (the facts Linda knows) and "Linda>David" (the facts Linda believes David knows). An utterance
 * that conveys a fact updates every perspective made of characters who heard it together:
 * present characters hear each other, so what they heard together is common knowledge among them.
 * That is FANToM's notion of access: a character knows a fact only if it was present when the
 * fact was said, and believes another knows it only if it saw that character hear it.
 */
import { z } from "zod";
import type { Observation, StepContext, StepResult, World, WorldEvent } from "../core/world.js";
import { dict } from "../core/dict.js";

export type FantomAction =
  | { readonly type: "none" }
  | { readonly type: "say"; readonly text: string; readonly facts?: readonly string[] }
  | { readonly type: "leave" }
  | { readonly type: "join" };

/** FANToM's actions, `facts` being the ids an utterance may name. */
function fantomActionSchema(facts: z.ZodType<string[]>): z.ZodType<FantomAction> {
  return z.discriminatedUnion("type", [
    z.object({ type: z.literal("none") }).describe("Do nothing."),
    z
      .object({
        type: z.literal("say"),
        text: z.string().min(1).max(2000).describe("What the character says to everyone present."),
        facts: facts.optional().describe("Ids of the facts this utterance conveys: facts the character has heard."),
      })
      .describe("Say something to everyone present."),
    z.object({ type: z.literal("leave") }).describe("Leave the conversation."),
    z.object({ type: z.literal("join") }).describe("Join (or rejoin) the conversation."),
  ]) as z.ZodType<FantomAction>;
}

export interface FantomEventData {
  readonly kind: "say" | "leave" | "join";
  readonly facts: readonly string[];
}

export interface FantomState {
  readonly characters: readonly string[];
  readonly present: Readonly<Record<string, boolean>>;
  /** Fact id -> the statement it stands for ("Linda's dog is a beagle."). */
  readonly facts: Readonly<Record<string, string>>;
  readonly depth: number;
  /** Perspective ("Linda", "Linda>David") -> ids of the facts it holds as known, in the order learned. */
  readonly knows: Readonly<Record<string, readonly string[]>>;
  /** What the last timestep's actions caused. */
  readonly last: readonly WorldEvent[];
}

export interface FantomInit {
  readonly characters: readonly string[];
  /** Who is in the conversation when it starts (default: everyone). */
  readonly present?: readonly string[];
  readonly facts?: Readonly<Record<string, string>>;
  readonly depth?: number;
}

export function initialFantomState(init: FantomInit): FantomState {
  const here = new Set(init.present ?? init.characters);
  return {
    characters: init.characters.slice(),
    present: dict(Object.fromEntries(init.characters.map((c) => [c, here.has(c)]))),
    facts: dict(init.facts),
    depth: init.depth ?? 2,
    knows: dict(),
    last: [],
  };
}

export function perspectiveKey(path: readonly string[]): string {
  return path.join(">");
}

/** The ids of the facts `agent` has heard, in the order heard. */
export function heardBy(state: Pick<FantomState, "knows">, agent: string): readonly string[] {
  return state.knows[perspectiveKey([agent])] ?? [];
}

/** Does `path` ("Linda", or "Linda" then "David": what Linda thinks David knows) hold `fact` as known? */
export function knowsFact(state: Pick<FantomState, "knows">, path: readonly string[], fact: string): boolean {
  return state.knows[perspectiveKey(path)]?.includes(fact) ?? false;
}

export function presentCharacters(state: Pick<FantomState, "characters" | "present">): string[] {
  return state.characters.filter((c) => state.present[c]);
}

/** The quoted form an utterance takes in the socialized context's `actions` ("Says: '...'"). */
export function renderSay(text: string): string {
  return `Says: '${text}'`;
}

const NOOP: FantomAction = Object.freeze({ type: "none" });

export class FantomWorld implements World<FantomState, FantomAction> {
  readonly name = "fantom";

  agents(state: FantomState): readonly string[] {
    return state.characters;
  }

  /**
   * What an untrusted agent (a person, an LLM) may send: `facts` only names facts the character
   * has heard. A scripted speaker (trusted, not checked against this schema) introduces new ones.
   * Otherwise a person could claim to say a fact it never heard and read its text back in its own
   * mental state, or probe which fact ids exist.
   */
  actionSchema(state: FantomState, agent: string): z.ZodType<FantomAction> {
    const known = heardBy(state, agent);
    const facts =
      known.length === 0
        ? z.array(z.string()).max(0, { error: `${agent} has heard no fact yet` })
        : z.array(z.enum(known as [string, ...string[]], { error: `not a fact ${agent} has heard (heard: ${known.join(", ")})` }));
    return fantomActionSchema(facts);
  }

  noop(): FantomAction {
    return NOOP;
  }

  isNoop(action: FantomAction): boolean {
    return action.type === "none";
  }

  /**
   * Every action `check` allows now, saying a fact the agent knows standing for free speech:
   * the random baseline's choices and a person's quick buttons.
   */
  options(state: FantomState, agent: string): FantomAction[] {
    const all: FantomAction[] = [NOOP, { type: "leave" }, { type: "join" }];
    // Only the facts the agent has learned: the options go to a person in the seat (quick buttons),
    // and the others are what FANToM asks about (not yet said, or said while the agent was away).
    for (const id of heardBy(state, agent)) {
      const text = state.facts[id];
      if (text !== undefined) all.push({ type: "say", text, facts: [id] });
    }
    return all.filter((a) => this.check(state, agent, a) === undefined);
  }

  check(state: FantomState, agent: string, action: FantomAction): string | undefined {
    const here = state.present[agent] ?? false;
    switch (action.type) {
      case "none":
        return undefined;
      case "say":
        if (!here) return `${agent} is not in the conversation`;
        for (const f of action.facts ?? []) if (state.facts[f] === undefined) return `there is no fact "${f}"`;
        return undefined;
      case "leave":
        return here ? undefined : `${agent} is not in the conversation`;
      case "join":
        return here ? `${agent} is already in the conversation` : undefined;
    }
  }

  observe(state: FantomState, agent: string): Observation {
    let seen = 0;
    for (const e of state.last) if (e.observers.includes(agent)) seen++;
    const data = { present: state.present[agent] ?? false, others: presentCharacters(state).filter((c) => c !== agent) };
    if (seen === 0) return { text: "", data };
    if (seen === state.last.length) return { text: this.describe(state), sameAsState: true, data };
    return { text: state.last.filter((e) => e.observers.includes(agent)).map((e) => e.text).join(" "), data };
  }

  describe(state: FantomState): string {
    return state.last.length === 0 ? "none" : state.last.map((e) => e.text).join(" ");
  }

  renderAction(_state: FantomState, _agent: string, action: FantomAction): string {
    switch (action.type) {
      case "none":
        return "none";
      case "say":
        return renderSay(action.text);
      case "leave":
        return "leaves the conversation";
      case "join":
        return "joins the conversation";
    }
  }

  /** "I know that Linda's dog is a beagle. I think Kailey and Linda know it too." */
  mentalState(state: FantomState, agent: string): string | undefined {
    const mine = heardBy(state, agent);
    if (mine.length === 0) return undefined;
    return mine
      .map((f) => {
        const others = state.characters.filter((o) => o !== agent && knowsFact(state, [agent, o], f));
        const fact = state.facts[f] ?? f;
        const statement = fact.replace(/[.!?]+$/, "");
        const tail = others.length === 0 ? "I think nobody else knows it." : `I think ${listNames(others)} ${others.length === 1 ? "knows" : "know"} it too.`;
        return `I know that ${lowerFirst(statement)}. ${tail}`;
      })
      .join(" ");
  }

  isTerminal(): boolean {
    return false;
  }

  step(state: FantomState, actions: ReadonlyMap<string, FantomAction>, _ctx: StepContext<never>): StepResult<FantomState> {
    const present: Record<string, boolean> = dict(state.present);
    let knows = state.knows;
    const events: WorldEvent[] = [];
    const here = () => state.characters.filter((c) => present[c]);
    for (const agent of state.characters) {
      const action = actions.get(agent);
      if (!action || action.type === "none") continue;
      switch (action.type) {
        case "say": {
          if (!present[agent]) continue;
          const observers = here();
          const facts = (action.facts ?? []).filter((f) => state.facts[f] !== undefined);
          knows = reveal(knows, observers, facts, state.depth);
          const data: FantomEventData = { kind: "say", facts };
          events.push({ text: `${agent} said: "${action.text}"`, observers, actor: agent, data });
          break;
        }
        case "leave": {
          if (!present[agent]) continue;
          const observers = here();
          present[agent] = false;
          events.push({ text: `${agent} left the conversation.`, observers, actor: agent, data: { kind: "leave", facts: [] } });
          break;
        }
        case "join": {
          if (present[agent]) continue;
          present[agent] = true;
          events.push({ text: `${agent} joined the conversation.`, observers: here(), actor: agent, data: { kind: "join", facts: [] } });
          break;
        }
      }
    }
    return { state: { ...state, present, knows, last: events }, events };
  }
}

/** Everyone in `observers` now knows `facts`, and knows that the others know (to `depth`). */
function reveal(
  knows: FantomState["knows"],
  observers: readonly string[],
  facts: readonly string[],
  depth: number,
): FantomState["knows"] {
  if (facts.length === 0 || observers.length === 0) return knows;
  const out: Record<string, readonly string[]> = dict(knows);
  const visit = (path: string[]) => {
    const key = perspectiveKey(path);
    const had = out[key] ?? [];
    const add = facts.filter((f) => !had.includes(f));
    if (add.length) out[key] = [...had, ...add];
    if (path.length < depth) for (const next of observers) if (!path.includes(next)) visit([...path, next]);
  };
  for (const a of observers) visit([a]);
  return out;
}

export function listNames(names: readonly string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

function lowerFirst(s: string): string {
  // Keep names and other capitalised words ("Linda's dog") as they are; lower only a leading "The".
  return /^(The|A|An) /.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

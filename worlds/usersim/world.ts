/**
 * The user-simulation world: a conversation (a forum thread, product reviews, a chat with an
 * assistant, an e-mail thread) and one simulated user who replies to it. The others in the
 * conversation write messages; the user writes the hierarchical reply (reply.ts): its latent
 * states, in the hierarchy's order, then the response.
 *
 * Who sees what:
 *   - the user observes its own profile, its earlier replies and the conversation;
 *   - everyone else observes the conversation only: the user's response joins it, its states do
 *     not (they are the user's mental state: a room shows them to spectators, never to the
 *     other participants);
 *   - nobody observes the reference (the real reply and the true states): it is the ground
 *     truth the step scores the user's next reply against, then drops.
 */
import { z } from "zod";
import { dict } from "../core/dict.js";
import type { Observation, StepContext, StepResult, World, WorldEvent } from "../core/world.js";
import { DEFAULT_HIERARCHY, type Hierarchy } from "./hierarchy.js";
import { judgeReply, type JudgeOptions, type Reference } from "./judge.js";
import { renderProfile, type Persona } from "./profile.js";
import type { PastReply, ThreadMessage } from "./records.js";
import { replyShape, type Reply } from "./reply.js";

export type UsersimAction =
  | { readonly type: "none" }
  | { readonly type: "say"; readonly text: string }
  | ({ readonly type: "reply" } & Reply);

export interface UsersimState {
  readonly hierarchy: Hierarchy;
  /** Where the conversation happens ("forum", "reddit", "email"...); "" when unknown. */
  readonly platform: string;
  /** The simulated user's seat. */
  readonly user: string;
  /** The user's profile as it reads it. */
  readonly profile: string;
  readonly history: readonly PastReply[];
  /** Everyone else, in the order they act. */
  readonly participants: readonly string[];
  readonly thread: readonly ThreadMessage[];
  /** The states the user wrote with its last reply (its mental state; hidden from the others). */
  readonly stated?: Readonly<Record<string, string>>;
  /** The ground truth of the user's next reply, when there is one (observed by nobody). */
  readonly reference?: Reference;
  readonly replies: number;
  /** The conversation ends after this many replies of the user (none: it goes on). */
  readonly maxReplies?: number;
  /** What the last timestep's actions caused. */
  readonly last: readonly WorldEvent[];
}

export interface UsersimInit {
  readonly user: string;
  readonly hierarchy?: Hierarchy;
  readonly platform?: string;
  readonly profile?: string | Persona;
  readonly history?: readonly PastReply[];
  /** Default: the thread's authors other than the user, in order of appearance. */
  readonly participants?: readonly string[];
  readonly thread?: readonly ThreadMessage[];
  readonly reference?: Reference;
  readonly maxReplies?: number;
}

/** Seat names go into "Name: text" lines: no colon, no line break, not empty, not too long. */
export function checkName(name: string): string | undefined {
  if (name.trim() === "" || name !== name.trim()) return `the name "${name}" is empty or has spaces around it`;
  if (/[:\r\n]/.test(name)) return `the name "${name}" has a colon or a line break`;
  if (name.length > 64) return `the name "${name.slice(0, 20)}..." is longer than 64 characters`;
  return undefined;
}

export function initialUsersimState(init: UsersimInit): UsersimState {
  const thread = (init.thread ?? []).map((m) => ({ author: m.author, text: m.text }));
  const participants = init.participants ?? [...new Set(thread.map((m) => m.author).filter((a) => a !== init.user))];
  const names = [...participants, init.user];
  for (const n of names) {
    const bad = checkName(n);
    if (bad) throw new Error(bad);
  }
  if (new Set(names).size !== names.length) throw new Error(`two seats share a name: ${names.join(", ")}`);
  return {
    hierarchy: init.hierarchy ?? DEFAULT_HIERARCHY,
    platform: init.platform ?? "",
    user: init.user,
    profile: typeof init.profile === "string" ? init.profile : renderProfile(init.profile),
    history: (init.history ?? []).slice(),
    participants: participants.slice(),
    thread,
    ...(init.reference ? { reference: init.reference } : {}),
    replies: 0,
    ...(init.maxReplies !== undefined ? { maxReplies: init.maxReplies } : {}),
    last: [],
  };
}

/** A message of the conversation as everyone reads it. */
export function renderThread(thread: readonly ThreadMessage[], viewer?: string): string {
  if (thread.length === 0) return "(nobody has written anything yet)";
  return thread.map((m) => `${m.author}${m.author === viewer ? " (you)" : ""} wrote:\n${m.text}`).join("\n\n");
}

/** What the user reads before replying: who it is, its profile, its earlier replies, the conversation. */
export function renderUserView(s: Pick<UsersimState, "user" | "platform" | "profile" | "history" | "thread">): string {
  const parts = [`You are ${s.user}${s.platform ? ` (on ${s.platform})` : ""}.`, `Your profile:\n${s.profile}`];
  if (s.history.length) {
    const past = s.history.map((h, i) => `${i + 1}. ${h.context ? `(replying to "${h.context.split("\n")[0]}") ` : ""}${h.text}`);
    parts.push(`Some of your earlier replies:\n${past.join("\n")}`);
  }
  parts.push(`The conversation:\n${renderThread(s.thread, s.user)}`);
  return parts.join("\n\n");
}

const MAX_MESSAGE = 8000;
const NONE_SCHEMA = z.strictObject({ type: z.literal("none") }).describe("Do nothing this timestep.");
const NOOP: UsersimAction = Object.freeze({ type: "none" });

export class UsersimWorld implements World<UsersimState, UsersimAction> {
  readonly name = "usersim";
  private readonly judge: JudgeOptions;

  /** `judge`: the weights (and free-text similarity) the step's reward uses. */
  constructor(judge: JudgeOptions = {}) {
    this.judge = judge;
  }

  agents(state: UsersimState): readonly string[] {
    return [...state.participants, state.user];
  }

  actionSchema(state: UsersimState, agent: string): z.ZodType<UsersimAction> {
    if (agent === state.user) {
      const reply = z.strictObject({ type: z.literal("reply"), ...replyShape(state.hierarchy) }).describe("Reply: your states, in order, then what you write.");
      return z.discriminatedUnion("type", [NONE_SCHEMA, reply]) as unknown as z.ZodType<UsersimAction>;
    }
    if (!state.participants.includes(agent)) return NONE_SCHEMA as z.ZodType<UsersimAction>;
    const say = z
      .strictObject({ type: z.literal("say"), text: z.string().trim().min(1, "the message is empty").max(MAX_MESSAGE, `a message is at most ${MAX_MESSAGE} characters`).describe("What you write.") })
      .describe("Write a message to the conversation.");
    return z.discriminatedUnion("type", [NONE_SCHEMA, say]) as unknown as z.ZodType<UsersimAction>;
  }

  noop(): UsersimAction {
    return NOOP;
  }

  isNoop(action: UsersimAction): boolean {
    return action.type === "none";
  }

  check(state: UsersimState, agent: string, action: UsersimAction): string | undefined {
    switch (action.type) {
      case "none":
        return undefined;
      case "say":
        return state.participants.includes(agent) ? undefined : `${agent} ${agent === state.user ? "replies with its states (a reply), not a message" : "is not in the conversation"}`;
      case "reply": {
        if (agent !== state.user) return `only ${state.user} replies with states; ${agent} writes messages`;
        if (this.isTerminal(state)) return "the conversation is over";
        const want = state.hierarchy.states.map((d) => d.name);
        const got = Object.keys(action.states);
        if (want.length !== got.length || want.some((n) => !(n in action.states))) return `the reply's states are ${got.join(", ") || "none"}, expected ${want.join(", ") || "none"}`;
        return undefined;
      }
    }
  }

  observe(state: UsersimState, agent: string): Observation {
    if (agent === state.user) {
      return {
        text: renderUserView(state),
        data: { role: "user", user: state.user, platform: state.platform, profile: state.profile, history: state.history, thread: state.thread, tags: [...state.hierarchy.states.map((d) => d.name), state.hierarchy.response.name] },
      };
    }
    if (!state.participants.includes(agent)) return { text: "" };
    return { text: `The conversation:\n${renderThread(state.thread, agent)}`, data: { role: "participant", thread: state.thread } };
  }

  describe(state: UsersimState): string {
    return state.last.length === 0 ? "none" : state.last.map((e) => e.text).join(" ");
  }

  renderAction(_state: UsersimState, _agent: string, action: UsersimAction): string {
    switch (action.type) {
      case "none":
        return "none";
      case "say":
        return `writes: "${action.text}"`;
      case "reply":
        // The response only: the states stay in the user's mind.
        return `replies: "${action.response}"`;
    }
  }

  /** The user's states as its last reply wrote them ("Stance: ... Emotion: ..."). */
  mentalState(state: UsersimState, agent: string): string | undefined {
    if (agent !== state.user || !state.stated) return undefined;
    const lines = state.hierarchy.states.map((d) => `${d.name.charAt(0).toUpperCase()}${d.name.slice(1)}: ${state.stated![d.name] ?? ""}.`);
    return lines.length ? lines.join(" ") : undefined;
  }

  isTerminal(state: UsersimState): boolean {
    return state.maxReplies !== undefined && state.replies >= state.maxReplies;
  }

  step(state: UsersimState, actions: ReadonlyMap<string, UsersimAction>, _ctx: StepContext<never>): StepResult<UsersimState> {
    const everyone = this.agents(state);
    const thread = state.thread.slice();
    const events: WorldEvent[] = [];
    let { stated, reference, replies } = state;
    const rewards: Record<string, number> = dict();
    for (const agent of everyone) {
      const action = actions.get(agent);
      if (!action || action.type === "none" || this.check(state, agent, action) !== undefined) continue;
      if (action.type === "say") {
        thread.push({ author: agent, text: action.text });
        events.push({ text: `${agent} wrote: "${action.text}"`, observers: everyone, actor: agent, data: { kind: "say" } });
        continue;
      }
      thread.push({ author: agent, text: action.response });
      // No states in the event: events reach every observer.
      events.push({ text: `${agent} replied: "${action.response}"`, observers: everyone, actor: agent, data: { kind: "reply" } });
      stated = dict(action.states);
      replies++;
      if (reference) {
        rewards[agent] = judgeReply(action, reference, state.hierarchy, this.judge).reward;
        reference = undefined;
      }
    }
    const { stated: _stated, reference: _reference, ...rest } = state;
    const next: UsersimState = { ...rest, thread, replies, last: events, ...(stated ? { stated } : {}), ...(reference ? { reference } : {}) };
    return Object.keys(rewards).length ? { state: next, events, rewards } : { state: next, events };
  }
}

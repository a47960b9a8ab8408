/**
 * Episodes of the world: a record's conversation as a state (the benchmark's: the user replies
 * once, against the record's ground truth), and a generated conversation for a room (the same
 * first reply is scored; the conversation then goes on as long as the room lets it).
 */
import type { Agent } from "../core/agent.js";
import { Rng } from "../core/rng.js";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import { ScriptedAgent } from "../core/scripted-agent.js";
import { DEFAULT_HIERARCHY, type Hierarchy } from "./hierarchy.js";
import type { Reference } from "./judge.js";
import { generateConversation } from "./generator.js";
import { parseConversationsJsonl, type ConversationRecord } from "./records.js";
import { renderReply, type Reply } from "./reply.js";
import { simulationReply } from "./baselines.js";
import { FollowUpAgent, SimulatedUser } from "./simulated-user.js";
import { initialUsersimState, UsersimWorld, type UsersimAction, type UsersimState } from "./world.js";

export function referenceOf(record: ConversationRecord): Reference {
  return { states: record.states, ...(record.latent ? { latent: record.latent } : {}), response: record.reply };
}

/**
 * The ground truth as the text a model is trained to write (SFT on ground-truth hierarchies),
 * or undefined when a state of the hierarchy has no ground truth in the record.
 */
export function referenceText(record: ConversationRecord, h: Hierarchy): string | undefined {
  if (h.states.some((d) => record.states[d.name] === undefined)) return undefined;
  return renderReply({ states: Object.fromEntries(h.states.map((d) => [d.name, record.states[d.name]!])), response: record.reply }, h);
}

/** Ids from data as seat names: no colon or line break, at most 64 characters, distinct. */
function seatNames(ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const id of ids) {
    if (out.has(id)) continue;
    const base = id.replace(/[:\r\n]+/g, "_").replace(/\s+/g, " ").trim().slice(0, 60) || "someone";
    let name = base;
    for (let k = 2; taken.has(name); k++) name = `${base}#${k}`;
    taken.add(name);
    out.set(id, name);
  }
  return out;
}

export interface RecordStateOptions {
  /** The conversation goes on after the user's reply (a room); otherwise the reply ends it. */
  readonly live?: boolean;
}

export function stateOfRecord(record: ConversationRecord, h: Hierarchy = DEFAULT_HIERARCHY, opts: RecordStateOptions = {}): UsersimState {
  const names = seatNames([record.user, ...record.thread.map((m) => m.author)]);
  return initialUsersimState({
    hierarchy: h,
    user: names.get(record.user)!,
    platform: record.platform ?? "",
    ...(record.persona !== undefined ? { profile: record.persona } : {}),
    history: record.history,
    thread: record.thread.map((m) => ({ author: names.get(m.author)!, text: m.text })),
    reference: referenceOf(record),
    ...(opts.live ? {} : { maxReplies: 1 }),
  });
}

export interface UsersimScenario extends Scenario<UsersimState, UsersimAction> {
  readonly record: ConversationRecord;
  /** What the simulated user really replies first (its states and response): what its first reply is scored against. */
  readonly truth: Reply;
}

/** The user's replies in a generated room conversation: the first, then one per follow-up. */
const FOLLOW_UPS = 3;

/**
 * A generated conversation for a room: the simulated user (SimulatedUser, which keeps replying as
 * the generator's user would) and the others of the thread; the author the user replies to
 * answers it a few times (FollowUpAgent). A person can take the user's seat (its first reply is
 * scored against the truth) or another seat, and talk to the simulated user.
 */
export function usersimScenario(seed: number, h: Hierarchy = DEFAULT_HIERARCHY): UsersimScenario {
  const conv = generateConversation(Rng.seeded(`room:usersim:${seed}`).uint32(), 0, 1);
  const generated = conv.record;
  const record = parseConversationsJsonl(JSON.stringify(generated), `usersim scenario ${seed}`)[0]!;
  const initialState = { ...stateOfRecord(record, h, { live: true }), maxReplies: 1 + FOLLOW_UPS };
  const user = initialState.user;
  const others = initialState.participants.filter((p) => p !== LISTING);
  // Who the user answers: the last one who wrote.
  const answerer = [...initialState.thread].reverse().find((m) => others.includes(m.author))?.author;
  const scripted: Record<string, Agent<UsersimAction>> = { [user]: new SimulatedUser(conv.user, conv.topic, generated.latent, h, seed) };
  for (const p of initialState.participants) scripted[p] = p === answerer ? new FollowUpAgent(user, conv.topic, FOLLOW_UPS, seed) : new ScriptedAgent(new Map(), WORLD.noop());
  return {
    world: WORLD as UsersimWorld,
    title: `User simulation: ${generated.user_id} on a ${generated.platform} thread, "${conv.topic.title}"`,
    initialState,
    scripted,
    // Two timesteps an exchange (a message, then the reply to it), and one to spare.
    maxSteps: 2 * (1 + FOLLOW_UPS) + 2,
    record,
    truth: simulationReply(generated.latent, h, record.states),
  };
}

/** The product a review thread is about: it posts the listing, and says nothing after. */
const LISTING = "listing";

const WORLD = new UsersimWorld();

export const usersimScenarios: ScenarioFactory = {
  episodes: "conversations",
  describe: "a generated conversation (a forum thread, reviews, a chat with an assistant, an e-mail thread) and a simulated user who replies with its latent states; a person can take the user's seat or talk to it",
  async create(seed) {
    return usersimScenario(seed) as Scenario;
  },
};

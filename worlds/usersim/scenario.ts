/**
 * Episodes of the world: a record's conversation as a state (the benchmark's: the user replies
 * once, against the record's ground truth), and a generated conversation for a room (the same
 * first reply is scored; the conversation then goes on as long as the room lets it).
 */
import { Rng } from "../core/rng.js";
import { DEFAULT_HIERARCHY, type Hierarchy } from "./hierarchy.js";
import type { Reference } from "./judge.js";
import { generateRecord } from "./generator.js";
import { parseConversationsJsonl, type ConversationRecord } from "./records.js";
import { renderReply } from "./reply.js";
import { simulationReply } from "./baselines.js";
import { initialUsersimState, type UsersimState } from "./world.js";

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

export interface UsersimScenario {
  readonly title: string;
  readonly record: ConversationRecord;
  readonly initialState: UsersimState;
  /** What the simulated user would really reply first (its states and response). */
  readonly truth: ReturnType<typeof simulationReply>;
}

/** A generated conversation for a room: a person can take the user's seat or talk to it. */
export function usersimScenario(seed: number, h: Hierarchy = DEFAULT_HIERARCHY): UsersimScenario {
  const generated = generateRecord(Rng.seeded(`room:usersim:${seed}`).uint32(), 0, 1);
  const record = parseConversationsJsonl(JSON.stringify(generated), `usersim scenario ${seed}`)[0]!;
  return {
    title: `User simulation: ${generated.user_id} replies on a ${generated.platform} thread`,
    record,
    initialState: stateOfRecord(record, h, { live: true }),
    truth: simulationReply(generated.latent, h, record.states),
  };
}

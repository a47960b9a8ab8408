/**
 * The agents of a live conversation (a room): the simulated user, who keeps replying as the
 * generator's user would, and the scripted others, who answer it.
 *
 *   SimulatedUser      replies whenever someone else has written since its last message. Its first
 *                      reply is the record's (the ground truth the room scores); each later one
 *                      comes from its lasting traits (generator.ts's latentFor): the target the
 *                      newest messages name (else the thread's), and whether they speak for or
 *                      against it, as the post's stance does for a first reply. So a person who
 *                      talks to it gets the replies, and the latent states, this user would have.
 *   FollowUpAgent      a participant who answers the user's replies with a comment on the thread's
 *                      targets, a few times: the script that keeps a conversation going without a person.
 */
import type { Agent, AgentReply, AgentTurn } from "../core/agent.js";
import { Rng } from "../core/rng.js";
import { replyFromLatent } from "./baselines.js";
import { latentFor, type GeneratedUser } from "./generator.js";
import type { Hierarchy } from "./hierarchy.js";
import { normalizeTarget, type Latent } from "./latent.js";
import type { ThreadMessage } from "./records.js";
import { COMMENTS, TOPICS, type Topic } from "./vocabulary.js";
import type { UsersimAction } from "./world.js";

const NONE: UsersimAction = Object.freeze({ type: "none" });

/** The thread as the observation gives it (both the user's and a participant's observations carry it). */
function threadOf(turn: AgentTurn): readonly ThreadMessage[] {
  const data = turn.observation.data as { thread?: readonly ThreadMessage[] } | undefined;
  return data?.thread ?? [];
}

/** The messages others wrote after `me` last wrote (all of them when `me` never did). */
export function newSince(thread: readonly ThreadMessage[], me: string): ThreadMessage[] {
  let last = -1;
  for (let i = 0; i < thread.length; i++) if (thread[i]!.author === me) last = i;
  return thread.slice(last + 1).filter((m) => m.author !== me);
}

const FOR = /\b(agree|agreed|love|great|good idea|support|in favou?r|all for|overdue|went well|works|yes)\b/i;
const AGAINST = /\b(disagree|against|oppose|hate|terrible|bad idea|not convinced|badly|doubt|worse|no way|never)\b/i;

/** Whether a message speaks for (1), against (-1) or neither (0) of what it names: by its words. */
export function leaning(text: string): number {
  const f = FOR.test(text);
  const a = AGAINST.test(text);
  return f === a ? 0 : f ? 1 : -1;
}

/** The first target of the vocabulary a text names, and a topic that leads with it. */
export function topicNamed(text: string, fallback: Topic): Topic {
  const lower = text.toLowerCase();
  for (const t of TOPICS) {
    for (const target of t.targets) {
      if (!lower.includes(normalizeTarget(target))) continue;
      return target === t.targets[0] ? t : { ...t, targets: [t.targets[1], t.targets[0]] };
    }
  }
  return fallback;
}

export class SimulatedUser implements Agent<UsersimAction> {
  readonly id = "simulated-user";
  readonly trusted = true;
  private replies = 0;

  constructor(
    private readonly user: GeneratedUser,
    private readonly topic: Topic,
    /** The record's latent: the first reply, the one the room scores. */
    private readonly first: Latent,
    private readonly hierarchy: Hierarchy,
    private readonly seed: number,
  ) {}

  act(turn: AgentTurn<UsersimAction>): AgentReply<UsersimAction> {
    const fresh = newSince(threadOf(turn), turn.agent);
    if (fresh.length === 0) return { action: NONE };
    const latent = this.replies === 0 ? this.first : this.latentFor(fresh, turn.timestep);
    this.replies++;
    return { action: { type: "reply", ...replyFromLatent(latent, this.hierarchy) } };
  }

  private latentFor(fresh: readonly ThreadMessage[], timestep: number): Latent {
    const text = fresh.map((m) => m.text).join("\n");
    const topic = topicNamed(text, this.topic);
    // A target outside its platform's topics: the user has no opinion on it yet.
    const user = topic.targets.every((t) => t in this.user.opinions) ? this.user : { ...this.user, opinions: { ...this.user.opinions, ...Object.fromEntries(topic.targets.filter((t) => !(t in this.user.opinions)).map((t) => [t, 0])) } };
    const rng = Rng.seeded(`usersim-room:${this.seed}:${timestep}`);
    // Someone who speaks for the target reads as a post for it (and against, against).
    const poster = leaning(text) || 1;
    return latentFor(user, { ...topic, platform: this.user.platform }, poster, rng);
  }
}

/** Answers each reply of the user with a comment on the thread's targets, `times` times at most. */
export class FollowUpAgent implements Agent<UsersimAction> {
  readonly id = "scripted";
  readonly trusted = true;
  private said = 0;

  constructor(
    private readonly user: string,
    private readonly topic: Topic,
    private readonly times: number,
    private readonly seed: number,
  ) {}

  act(turn: AgentTurn<UsersimAction>): AgentReply<UsersimAction> {
    if (this.said >= this.times) return { action: NONE };
    const fresh = newSince(threadOf(turn), turn.agent);
    if (!fresh.some((m) => m.author === this.user)) return { action: NONE };
    const rng = Rng.seeded(`usersim-follow-up:${this.seed}:${turn.agent}:${turn.timestep}`);
    const line = rng.pick([...COMMENTS.for, ...COMMENTS.against, ...COMMENTS.unsure]);
    this.said++;
    return { action: { type: "say", text: line.replace("{t}", rng.pick(this.topic.targets)) } };
  }
}

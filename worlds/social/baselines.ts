/**
 * The benchmark's reference predictors, each answering a task with a reply as a model would
 * (JSON text, read by the same reader):
 *
 * - random: a type uniformly among the four, seeded by the task id; a comment or repost says one
 *   of the user's past posts (or nothing).
 * - majority: the most frequent label type at the task's depth among the tasks it was fitted on
 *   (ties: the first in REACTION_TYPES order), with that type's most frequent content there.
 * - simulation: the ceiling. It knows the generator's latent user model (the tree's `latent`
 *   block) and recomputes each decision and text exactly as the generator took them.
 *   With `draws: false` it knows the profiles but not the per-decision draws: it says the most
 *   likely decision (what a model that learned the latent probabilities perfectly could reach).
 */
import { Rng } from "../core/rng.js";
import { REACTION_TYPES, type ReactionType } from "./action.js";
import { decide, IGNORE, likeliestDecision, type Decision } from "./behavior.js";
import type { Latent, SocialTree } from "./format.js";
import { COMMENT, REPOST } from "./items.js";
import { replyFor as reply, type SocialTask } from "./tasks.js";
import { writeText } from "./text.js";
import { styleIndex, topicIndex } from "./vocabulary.js";

export interface SocialPredictor {
  readonly id: string;
  /** The reply, as a model would write it. */
  predict(task: SocialTask): string;
}

export class RandomPredictor implements SocialPredictor {
  readonly id: string;

  constructor(private readonly seed = 0) {
    this.id = seed === 0 ? "random" : `random:${seed}`;
  }

  predict(task: SocialTask): string {
    const rng = Rng.seeded(`social-random|${this.seed}|${task.id}`);
    const type = rng.pick(REACTION_TYPES);
    const history = task.tree.users.find((u) => u.id === task.user)?.history ?? [];
    const content = history.length ? rng.pick(history).text : "";
    return reply(task, type, content);
  }
}

export class MajorityPredictor implements SocialPredictor {
  readonly id = "majority";
  private readonly byDepth = new Map<number, { type: ReactionType; content: string }>();

  /** Fitted on `tasks` (a training split; or the tasks being scored, which is the usual majority-class baseline). */
  constructor(tasks: readonly SocialTask[]) {
    const depths = [...new Set(tasks.map((t) => t.depth))];
    for (const d of depths) {
      const here = tasks.filter((t) => t.depth === d);
      const count = (type: ReactionType) => here.filter((t) => t.label.type === type).length;
      let best: ReactionType = REACTION_TYPES[0];
      for (const type of REACTION_TYPES) if (count(type) > count(best)) best = type;
      const texts = new Map<string, number>();
      for (const t of here) if (t.label.type === best && t.label.content !== "") texts.set(t.label.content, (texts.get(t.label.content) ?? 0) + 1);
      const content = [...texts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? "";
      this.byDepth.set(d, { type: best, content });
    }
  }

  /** The majority type and content at a depth ("ignore" at a depth it was not fitted on). */
  at(depth: number): { type: ReactionType; content: string } {
    return this.byDepth.get(depth) ?? { type: "ignore", content: "" };
  }

  predict(task: SocialTask): string {
    const m = this.at(task.depth);
    return reply(task, m.type, m.content);
  }
}

interface LatentIndex {
  readonly latent: Latent;
  readonly topic: number;
  readonly users: Map<string, Latent["users"][number]>;
  readonly stances: Map<string, number>;
  readonly decisions: Map<string, Latent["decisions"][number]>;
  readonly authors: Map<string, string>;
  readonly depths: Map<string, number>;
}

const indexes = new WeakMap<SocialTree, LatentIndex>();

function latentIndex(tree: SocialTree): LatentIndex {
  let ix = indexes.get(tree);
  if (ix) return ix;
  const latent = tree.latent;
  if (!latent) throw new Error(`the simulation agent needs the generator's latent ground truth, and tree "${tree.id}" has none (real data has no latent block)`);
  const topic = topicIndex(tree.post.topic ?? "");
  if (topic < 0) throw new Error(`tree "${tree.id}": post.topic "${tree.post.topic ?? ""}" is not a topic of the generator`);
  ix = {
    latent,
    topic,
    users: new Map(latent.users.map((u) => [u.id, u])),
    stances: new Map(latent.items.map((x) => [x.id, x.stance])),
    decisions: new Map(latent.decisions.map((d) => [`${d.user}\u0000${d.parent}`, d])),
    authors: new Map([[tree.post.id, tree.post.user], ...tree.interactions.map((x): [string, string] => [x.id, x.user])]),
    depths: new Map([[tree.post.id, -1], ...tree.interactions.map((x): [string, number] => [x.id, x.depth])]),
  };
  indexes.set(tree, ix);
  return ix;
}

export class SimulationPredictor implements SocialPredictor {
  readonly id: string;
  private readonly draws: boolean;

  constructor(opts: { draws?: boolean } = {}) {
    this.draws = opts.draws ?? true;
    this.id = this.draws ? "simulation" : "simulation:profile";
  }

  predict(task: SocialTask): string {
    const ix = latentIndex(task.tree);
    const where = `tree "${task.tree.id}"`;
    const user = ix.users.get(task.user);
    if (!user) throw new Error(`${where}: no latent profile for "${task.user}"`);
    const d = ix.decisions.get(`${task.user}\u0000${task.parent}`);
    if (!d) throw new Error(`${where}: no latent decision of "${task.user}" on "${task.parent}"`);
    const topicKey = task.tree.post.topic!;
    const itemStance = ix.stances.get(task.parent);
    if (itemStance === undefined) throw new Error(`${where}: no latent stance for "${task.parent}"`);
    const input = {
      interest: user.interests[topicKey] ?? 0,
      stance: d.stance,
      itemStance,
      direct: d.direct,
      earlier: d.earlier,
      style: styleIndex(user.style),
      canReact: ix.depths.get(task.parent)! + 1 <= ix.latent.config.maxDepth,
      engagement: ix.latent.config.engagement,
    };
    const decision: Decision = this.draws ? decide(input, { engage: d.draws[0], kind: d.draws[1], text: d.draws[2] }) : likeliestDecision(input);
    if (decision === IGNORE) return reply(task, "ignore", "");
    const type = (["ignore", "comment", "repost", "like"] as const)[decision];
    if (decision !== COMMENT && decision !== REPOST) return reply(task, type, "");
    const parentAuthor = ix.authors.get(task.parent)!;
    const content = writeText({
      kind: decision,
      topic: ix.topic,
      stance: d.stance,
      parentStance: itemStance,
      style: input.style,
      ...(decision === COMMENT && task.parent !== task.tree.post.id ? { replyTo: task.tree.users.find((u) => u.id === parentAuthor)?.name ?? parentAuthor } : {}),
      seed: this.draws ? d.draws[2] : 0,
    });
    return reply(task, type, content);
  }
}

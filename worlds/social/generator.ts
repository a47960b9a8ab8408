/**
 * Generated interaction trees with exact latent ground truth. Each tree is one cascade in its
 * own small network (network.ts): a popular user posts on the topic it cares most about, the
 * post spreads through feeds with every user played by the latent model (behavior.ts) until the
 * cascade dies out, and the tree records what happened (format.ts): the post, the depth-0 and
 * depth-1 interactions, the candidates (users who saw the post or a depth-0 comment or repost),
 * the users' visible profiles and post histories (their texts show their stances and styles), and
 * the latent block: profiles, item stances and each candidate's decision draws, from which the
 * `simulation` agent reproduces every label and text.
 *
 * Candidates who ignored are many (most viewers scroll past): `keepIgnores` keeps a seeded share
 * of them (default 0.25), every reacting candidate is kept.
 */
import { Rng } from "../core/rng.js";
import { IGNORE } from "./behavior.js";
import { followerCount, followingCount, follows } from "./graph.js";
import { KIND_NAMES, LIKE, POST } from "./items.js";
import type { Latent, SocialTree, TreeUser } from "./format.js";
import { serializeTrees } from "./format.js";
import { generateNetwork } from "./network.js";
import { TOPIC_COUNT, topInterest } from "./population.js";
import { SocialSim, type DecisionRecord } from "./sim.js";
import { writeText } from "./text.js";
import { STYLES, TOPICS } from "./vocabulary.js";

export const GENERATOR_ID = "socialworld/social-generator v1";

export interface SocialGeneratorOptions {
  /** Users per tree's network (default 60). */
  readonly users?: number;
  readonly meanFollowing?: number;
  readonly communitySize?: number;
  /** Share of ignoring candidates kept (default 0.25). */
  readonly keepIgnores?: number;
  /** Latent engagement offset (default 0). */
  readonly engagement?: number;
  /** Posts in each user's history (default 3). */
  readonly history?: number;
}

/** Steps after which a cascade that has not died out is a generator bug. */
const MAX_STEPS = 5000;

export function userKey(u: number): string {
  return `u${u}`;
}

/** One tree, the `index`-th of seed `seed`. */
export function generateSocialTree(seed: number, index: number, opts: SocialGeneratorOptions = {}): SocialTree {
  const users = opts.users ?? 60;
  const keepIgnores = opts.keepIgnores ?? 0.25;
  if (!(keepIgnores >= 0 && keepIgnores <= 1)) throw new RangeError(`keepIgnores must be in [0, 1], got ${keepIgnores}`);
  const rng = Rng.seeded(`social:${seed}:${index}`);
  const { population: pop, graph } = generateNetwork({
    users,
    seed: `${seed}:${index}`,
    meanFollowing: opts.meanFollowing ?? 8,
    communitySize: opts.communitySize ?? 15,
  });
  const sim = new SocialSim(pop, graph, { seed: rng.uint32(), engagement: opts.engagement ?? 0, maxDepth: 1 });
  const decisions: DecisionRecord[] = [];
  sim.onDecision = (d) => decisions.push(d);

  // The author: drawn by followers (popular accounts post the cascades people see).
  const weights = Array.from({ length: users }, (_, u) => followerCount(graph, u) + 1);
  let r = rng.next() * weights.reduce((a, b) => a + b, 0);
  let author = 0;
  while (r >= weights[author]! && author < users - 1) r -= weights[author++]!;
  const topic = topInterest(pop, author);
  sim.post(author, topic);
  const stepRng = rng.fork("steps");
  let steps = 0;
  while (!sim.isQuiet()) {
    if (++steps > MAX_STEPS) throw new Error(`generator bug: tree ${index} of seed ${seed} still spreading after ${MAX_STEPS} steps`);
    sim.stepRuleAgents(stepRng);
  }

  const items = sim.items;
  // Candidates: decisions on items one can still answer (the post, depth-0 comments and reposts).
  const candidates: DecisionRecord[] = [];
  const keepRng = rng.fork("keep");
  decisions.sort((a, b) => a.item - b.item || a.user - b.user);
  for (const d of decisions) {
    if (!d.canReact) continue;
    const reaction = sim.reactionOf(d.user, d.item);
    const did = reaction < 0 ? IGNORE : items.kind[reaction]!;
    if (did !== d.decision) throw new Error(`generator bug: user ${d.user} decided ${d.decision} on item ${d.item} but did ${did}`);
    if (d.decision === IGNORE && !keepRng.chance(keepIgnores)) continue;
    candidates.push(d);
  }

  const listed = new Set<number>([author]);
  for (const d of candidates) listed.add(d.user);
  for (let i = 1; i < items.length; i++) listed.add(items.author[i]!);
  const order = [...listed].sort((a, b) => a - b);

  const tree: SocialTree = {
    id: `social-${seed}-${index}`,
    post: { id: items.id(0), user: userKey(author), text: sim.textOf(0), time: 0, topic: TOPICS[topic]!.key },
    users: order.map((u) => visibleProfile(sim, u, rng.fork(`history ${u}`), opts.history ?? 3)),
    follows: order.flatMap((a) => order.filter((b) => b !== a && follows(graph, a, b)).map((b): [string, string] => [userKey(a), userKey(b)])),
    candidates: candidates.map((d) => ({ user: userKey(d.user), parent: items.id(d.item) })),
    interactions: Array.from({ length: items.length - 1 }, (_, k) => {
      const i = k + 1;
      return {
        id: items.id(i),
        user: userKey(items.author[i]!),
        parent: items.id(items.parent[i]!),
        depth: items.depth[i]!,
        type: KIND_NAMES[items.kind[i]!] as "comment" | "repost" | "like",
        text: items.kind[i] === LIKE ? "" : sim.textOf(i),
        time: items.time[i]!,
      };
    }),
    latent: latentOf(sim, order, candidates),
  };
  return tree;
}

function latentOf(sim: SocialSim, order: readonly number[], candidates: readonly DecisionRecord[]): Latent {
  const pop = sim.population;
  const items = sim.items;
  // Full precision: the simulation agent recomputes each decision from these numbers.
  const perTopic = (a: Float32Array, u: number) => Object.fromEntries(TOPICS.map((t, k) => [t.key, a[u * TOPIC_COUNT + k]!]));
  return {
    generator: GENERATOR_ID,
    seed: sim.config.seed,
    config: { engagement: sim.config.engagement, maxDepth: sim.config.maxDepth, influence: sim.config.influence },
    users: order.map((u) => ({ id: userKey(u), interests: perTopic(pop.interests, u), stances: perTopic(pop.stances, u), activity: pop.activity[u]!, style: STYLES[pop.styles[u]!]! })),
    items: Array.from({ length: items.length }, (_, i) => ({ id: items.id(i), stance: items.stance[i]! })),
    decisions: candidates.map((d) => ({
      user: userKey(d.user),
      parent: items.id(d.item),
      stance: d.stance,
      direct: d.direct,
      earlier: d.earlier,
      draws: [d.draws.engage, d.draws.kind, d.draws.text] as [number, number, number],
    })),
  };
}

/** What others see of a user: name, a description from their interests, counts, and past posts. */
function visibleProfile(sim: SocialSim, u: number, rng: Rng, historyLength: number): TreeUser {
  const pop = sim.population;
  const ranked = Array.from({ length: TOPIC_COUNT }, (_, t) => t).sort((a, b) => pop.interests[u * TOPIC_COUNT + b]! - pop.interests[u * TOPIC_COUNT + a]! || a - b);
  const description = `Into ${TOPICS[ranked[0]!]!.name} and ${TOPICS[ranked[1]!]!.name}.`;
  const history: { text: string; time: number; type: "post" }[] = [];
  let time = 0;
  for (let k = 0; k < historyLength; k++) {
    // Topics by interest: the top two 85% of the time.
    const t = rng.chance(0.85) ? ranked[rng.int(2)]! : rng.int(TOPIC_COUNT);
    time -= 1 + rng.int(40);
    history.push({ type: "post", time, text: writeText({ kind: POST, topic: t, stance: pop.stances[u * TOPIC_COUNT + t]!, parentStance: 0, style: pop.styles[u]!, seed: rng.uint32() }) });
  }
  return {
    id: userKey(u),
    name: sim.nameOf(u),
    description,
    followers: followerCount(sim.graph, u),
    following: followingCount(sim.graph, u),
    history: history.reverse(),
  };
}

export interface GeneratedSocial {
  readonly trees: SocialTree[];
  readonly jsonl: string;
}

/** `n` trees of seed `seed`, in the documented format. */
export function generateSocial(n: number, seed: number, opts: SocialGeneratorOptions = {}, onProgress?: (done: number) => void): GeneratedSocial {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`the number of trees must be a positive integer, got ${n}`);
  const trees: SocialTree[] = [];
  for (let i = 0; i < n; i++) {
    trees.push(generateSocialTree(seed, i, opts));
    onProgress?.(i + 1);
  }
  return { trees, jsonl: serializeTrees(trees) };
}

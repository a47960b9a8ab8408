/**
 * What a room plays: a generated network of `users` people and a schedule of root posts by
 * popular users on what they care about; every seat not taken by a person or a model is played
 * by the rule agent (world.ts: ruleAction). The episode ends when every cascade has died out
 * after the last scheduled post, or at `maxSteps`.
 */
import type { Director } from "../core/loop.js";
import { Rng } from "../core/rng.js";
import { followerCount } from "./graph.js";
import { generateNetwork } from "./network.js";
import { nameOf, topInterest } from "./population.js";
import { SocialSim } from "./sim.js";
import { TOPICS } from "./vocabulary.js";
import { initialSocialState, type SocialPost, type SocialState } from "./world.js";

export interface SocialScenarioOptions {
  /** People in the network (default 50). */
  readonly users?: number;
  /** Root posts, one every `every` steps from step 1 (default 3 posts, every 5 steps). */
  readonly posts?: number;
  readonly every?: number;
  readonly maxSteps?: number;
}

export interface SocialScenario {
  readonly title: string;
  readonly initialState: SocialState;
  /** The scheduled posts, by the step they are posted at. */
  readonly schedule: ReadonlyMap<number, readonly SocialPost[]>;
  readonly director: Director<SocialState, SocialPost>;
  readonly maxSteps: number;
}

export function socialScenario(seed: number, opts: SocialScenarioOptions = {}): SocialScenario {
  const users = opts.users ?? 50;
  const posts = opts.posts ?? 3;
  const every = opts.every ?? 5;
  const rng = Rng.seeded(`social-room:${seed}`);
  const { population, graph } = generateNetwork({ users, seed: `room:${seed}`, meanFollowing: Math.min(12, users - 1), communitySize: 15 });
  const sim = new SocialSim(population, graph, { seed: rng.uint32(), maxDepth: 3 });
  // Authors: the most followed users, in turn.
  const byFollowers = Array.from({ length: users }, (_, u) => u).sort((a, b) => followerCount(graph, b) - followerCount(graph, a) || a - b);
  const schedule = new Map<number, SocialPost[]>();
  for (let k = 0; k < posts; k++) {
    const author = byFollowers[k % byFollowers.length]!;
    const step = 1 + k * every;
    schedule.set(step, [...(schedule.get(step) ?? []), { author: nameOf(population, author), topic: TOPICS[topInterest(population, author)]!.key }]);
  }
  const last = 1 + (posts - 1) * every;
  // The loop's timestep t steps the world from time t - 1.
  const director: Director<SocialState, SocialPost> = { exogenous: (_state, t) => schedule.get(t) ?? [] };
  return {
    title: `Social media: ${users} users, ${posts} posts`,
    initialState: initialSocialState(sim, last),
    schedule,
    director,
    maxSteps: opts.maxSteps ?? 300,
  };
}

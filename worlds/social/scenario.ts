/**
 * What a room plays: a generated network of `users` people and a schedule of root posts by
 * popular users on what they care about; every seat not taken by a person or a model is played
 * by the rule agent (world.ts: ruleAction). The episode ends when every cascade has died out
 * after the last scheduled post, or at `maxSteps`.
 */
import type { Director } from "../core/loop.js";
import { Rng } from "../core/rng.js";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import { followerCount } from "./graph.js";
import { generateNetwork } from "./network.js";
import { nameOf, topInterest } from "./population.js";
import { SocialSim } from "./sim.js";
import { TOPICS } from "./vocabulary.js";
import { initialSocialState, RuleAgent, SocialWorld, type SocialPost, type SocialState } from "./world.js";

export interface SocialScenarioOptions {
  /** People in the network (default 50, at most 100,000). */
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

export const MAX_ROOM_USERS = 100_000;

export function socialScenario(seed: number, opts: SocialScenarioOptions = {}): SocialScenario {
  const users = opts.users ?? 50;
  const posts = opts.posts ?? 3;
  const every = opts.every ?? 5;
  if (!Number.isInteger(users) || users < 2 || users > MAX_ROOM_USERS) throw new RangeError(`users must be an integer in [2, ${MAX_ROOM_USERS}], got ${users}`);
  if (!Number.isInteger(posts) || posts < 1) throw new RangeError(`posts must be a positive integer, got ${posts}`);
  if (!Number.isInteger(every) || every < 1) throw new RangeError(`every must be a positive integer, got ${every}`);
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

const world = new SocialWorld();

/** The scenario as any room or trainer plays it: every user a seat, played by the rule agent unless someone else plays it. */
export function playableScenario(sc: SocialScenario): Scenario<SocialState, unknown, SocialPost> {
  const rule = new RuleAgent();
  const scripted = Object.fromEntries(world.agents(sc.initialState).map((name) => [name, rule]));
  return { world, title: sc.title, initialState: sc.initialState, director: sc.director, scripted, maxSteps: sc.maxSteps } as Scenario<SocialState, unknown, SocialPost>;
}

export const socialScenarios: ScenarioFactory = {
  episodes: "cascades",
  describe: "a generated network of 50 users; three popular users post, and the posts spread through feeds, played by the latent model's rule agents",
  async create(seed) {
    return playableScenario(socialScenario(seed)) as Scenario;
  },
};

/** Hand-built social worlds for tests: a few named users, chosen profiles, a chosen follow graph. */
import { buildFollowGraph } from "../../worlds/social/graph.js";
import { emptyPopulation, TOPIC_COUNT } from "../../worlds/social/population.js";
import { SocialSim, type SimConfig } from "../../worlds/social/sim.js";
import { styleIndex, topicIndex } from "../../worlds/social/vocabulary.js";

export interface UserSpec {
  readonly name: string;
  /** Interest in every topic (default 0.5). */
  readonly interest?: number;
  /** Stance on every topic (default 0.5). */
  readonly stance?: number;
  /** Default 1: opens the app whenever something is new. */
  readonly activity?: number;
  readonly style?: string;
  /** Interest by topic key, over `interest`. */
  readonly interests?: Readonly<Record<string, number>>;
}

/** `follows`: [follower, followee] names. */
export function handWorld(users: readonly UserSpec[], follows: readonly [string, string][], config: Partial<SimConfig> = {}): SocialSim {
  const pop = emptyPopulation(users.length, users.map((u) => u.name));
  users.forEach((u, i) => {
    for (let t = 0; t < TOPIC_COUNT; t++) {
      pop.interests[i * TOPIC_COUNT + t] = u.interest ?? 0.5;
      pop.stances[i * TOPIC_COUNT + t] = u.stance ?? 0.5;
    }
    for (const [key, v] of Object.entries(u.interests ?? {})) pop.interests[i * TOPIC_COUNT + topicIndex(key)] = v;
    pop.activity[i] = u.activity ?? 1;
    pop.styles[i] = styleIndex(u.style ?? "plain");
  });
  const index = (name: string) => {
    const i = users.findIndex((u) => u.name === name);
    if (i < 0) throw new Error(`no user ${name}`);
    return i;
  };
  const from = Uint32Array.from(follows.map(([a]) => index(a)));
  const to = Uint32Array.from(follows.map(([, b]) => index(b)));
  return new SocialSim(pop, buildFollowGraph(users.length, from, to), { seed: 1, ...config });
}

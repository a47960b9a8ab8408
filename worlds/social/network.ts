/**
 * A synthetic microblog network: users in communities that share focus topics and lean the same
 * way on them (echo chambers), following mostly inside their community and otherwise the popular
 * accounts (a heavy-tailed follower count, as on Weibo or Twitter). Linear in users and edges, so
 * a million users build in seconds.
 */
import { Rng } from "../core/rng.js";
import { buildFollowGraph, type FollowGraph } from "./graph.js";
import { emptyPopulation, TOPIC_COUNT, type Population } from "./population.js";
import { FAMILY_NAMES, GIVEN_NAMES, STYLES, userName } from "./vocabulary.js";

export interface NetworkOptions {
  readonly users: number;
  readonly seed: number | string;
  /** Mean number of accounts a user follows (default 20). */
  readonly meanFollowing?: number;
  /** Users per community (default 50). */
  readonly communitySize?: number;
  /** Share of follows inside the community (default 0.7); the rest go to popular accounts. */
  readonly localShare?: number;
  /** Popularity skew: a global follow picks rank floor(n * U^skew) (default 3; 1 is uniform). */
  readonly popularitySkew?: number;
}

export interface Network {
  readonly population: Population;
  readonly graph: FollowGraph;
}

/** How many names are unique without a number: populations up to this size get shuffled names. */
export const NAMED_POPULATION_LIMIT = GIVEN_NAMES.length * FAMILY_NAMES.length;

export function generateNetwork(opts: NetworkOptions): Network {
  const n = opts.users;
  if (!Number.isInteger(n) || n < 2) throw new RangeError(`a network needs at least 2 users, got ${n}`);
  const meanFollowing = Math.min(opts.meanFollowing ?? 20, n - 1);
  const communitySize = Math.max(2, Math.min(opts.communitySize ?? 50, n));
  const localShare = opts.localShare ?? 0.7;
  const skew = opts.popularitySkew ?? 3;
  const rng = Rng.seeded(`social-network:${opts.seed}`);

  const names = n <= NAMED_POPULATION_LIMIT ? rng.shuffle(Array.from({ length: NAMED_POPULATION_LIMIT }, (_, i) => userName(i))).slice(0, n) : undefined;
  const pop = emptyPopulation(n, names);

  // Communities: two focus topics each, and a lean on every topic (strong on the focus topics).
  const communities = Math.ceil(n / communitySize);
  const focusA = new Uint8Array(communities);
  const focusB = new Uint8Array(communities);
  const lean = new Float32Array(communities * TOPIC_COUNT);
  for (let c = 0; c < communities; c++) {
    focusA[c] = rng.int(TOPIC_COUNT);
    focusB[c] = (focusA[c]! + 1 + rng.int(TOPIC_COUNT - 1)) % TOPIC_COUNT;
    for (let t = 0; t < TOPIC_COUNT; t++) {
      const strong = t === focusA[c] || t === focusB[c];
      lean[c * TOPIC_COUNT + t] = (rng.next() * 2 - 1) * (strong ? 0.8 : 0.4);
    }
  }
  for (let u = 0; u < n; u++) {
    const c = Math.floor(u / communitySize);
    for (let t = 0; t < TOPIC_COUNT; t++) {
      const focus = t === focusA[c] || t === focusB[c];
      pop.interests[u * TOPIC_COUNT + t] = Math.min(1, focus ? 0.45 + 0.55 * rng.next() : 0.25 * rng.next());
      pop.stances[u * TOPIC_COUNT + t] = clamp(lean[c * TOPIC_COUNT + t]! + 0.7 * (rng.next() - 0.5), -1, 1);
    }
    // Most users open the app rarely, a few very often.
    const a = rng.next();
    pop.activity[u] = 0.05 + 0.6 * a * a;
    pop.styles[u] = rng.int(STYLES.length);
  }

  // Out-degrees: geometric-like around the mean, at least 1, at most 10x the mean.
  const degree = new Uint32Array(n);
  let edges = 0;
  const cap = Math.min(n - 1, Math.max(1, Math.round(meanFollowing * 10)));
  for (let u = 0; u < n; u++) {
    const k = Math.min(cap, 1 + Math.floor(-Math.log(1 - rng.next()) * (meanFollowing - 1)));
    degree[u] = k;
    edges += k;
  }
  const popularity = new Uint32Array(n);
  for (let i = 0; i < n; i++) popularity[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const tmp = popularity[i]!;
    popularity[i] = popularity[j]!;
    popularity[j] = tmp;
  }
  const from = new Uint32Array(edges);
  const to = new Uint32Array(edges);
  let e = 0;
  for (let u = 0; u < n; u++) {
    const c = Math.floor(u / communitySize);
    const lo = c * communitySize;
    const size = Math.min(communitySize, n - lo);
    for (let k = 0; k < degree[u]!; k++) {
      let v: number;
      if (size > 1 && rng.next() < localShare) v = lo + rng.int(size);
      else v = popularity[Math.floor(n * Math.pow(rng.next(), skew))]!;
      from[e] = u;
      to[e++] = v;
    }
  }
  return { population: pop, graph: buildFollowGraph(n, from, to, e) };
}

export function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

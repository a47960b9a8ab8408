import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";
import { buildFollowGraph, edgeList, followerCount, followersOf, followingOf, follows } from "../../worlds/social/graph.js";
import { generateNetwork } from "../../worlds/social/network.js";
import { PairTable } from "../../worlds/social/pair-table.js";
import { nameOf, TOPIC_COUNT } from "../../worlds/social/population.js";

describe("the follow graph (CSR)", () => {
  it("drops self-follows and repeats, sorts rows, and answers both directions", () => {
    const from = Uint32Array.from([0, 0, 0, 1, 2, 2, 3, 0]);
    const to = Uint32Array.from([2, 1, 2, 2, 2, 0, 0, 3]);
    const g = buildFollowGraph(4, from, to);
    expect(edgeList(g)).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 2],
      [2, 0],
      [3, 0],
    ]);
    expect(Array.from(followersOf(g, 2))).toEqual([0, 1]);
    expect(Array.from(followersOf(g, 0))).toEqual([2, 3]);
    expect(Array.from(followingOf(g, 3))).toEqual([0]);
    expect(followerCount(g, 1)).toBe(1);
    expect([follows(g, 0, 3), follows(g, 3, 0), follows(g, 1, 0), follows(g, 2, 2)]).toEqual([true, true, false, false]);
    expect(() => buildFollowGraph(2, Uint32Array.from([0]), Uint32Array.from([5]))).toThrow("edge 0: user 5 not below 2");
  });

  it("agrees with a set of edges on a random graph", () => {
    const rng = Rng.seeded("csr");
    const n = 200;
    const m = 3000;
    const from = new Uint32Array(m);
    const to = new Uint32Array(m);
    const edges = new Set<string>();
    for (let i = 0; i < m; i++) {
      from[i] = rng.int(n);
      to[i] = rng.int(n);
      if (from[i] !== to[i]) edges.add(`${from[i]}>${to[i]}`);
    }
    const g = buildFollowGraph(n, from, to);
    expect(g.following.length).toBe(edges.size);
    const wrong: string[] = [];
    for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) if (follows(g, a, b) !== edges.has(`${a}>${b}`)) wrong.push(`${a}>${b}`);
    expect(wrong).toEqual([]);
    for (let b = 0; b < n; b++) expect(Array.from(followersOf(g, b))).toEqual([...Array(n).keys()].filter((a) => edges.has(`${a}>${b}`)));
  });
});

describe("the generated network", () => {
  it("is seeded, has profiles in range, and a heavy-tailed follower count", () => {
    const a = generateNetwork({ users: 5000, seed: 1 });
    const b = generateNetwork({ users: 5000, seed: 1 });
    expect(Array.from(a.graph.following)).toEqual(Array.from(b.graph.following));
    expect(Array.from(a.population.stances)).toEqual(Array.from(b.population.stances));
    expect(Array.from(generateNetwork({ users: 5000, seed: 2 }).graph.following)).not.toEqual(Array.from(a.graph.following));
    const pop = a.population;
    expect(pop.stances.length).toBe(5000 * TOPIC_COUNT);
    expect([Math.min(...pop.stances), Math.max(...pop.stances)].map((x) => Math.abs(x) <= 1)).toEqual([true, true]);
    expect([Math.min(...pop.interests) >= 0, Math.max(...pop.interests) <= 1]).toEqual([true, true]);
    expect([Math.min(...pop.activity) > 0, Math.max(...pop.activity) < 1]).toEqual([true, true]);
    const mean = a.graph.following.length / 5000;
    expect(mean).toBeGreaterThan(15);
    expect(mean).toBeLessThan(22);
    const counts = Array.from({ length: 5000 }, (_, u) => followerCount(a.graph, u)).sort((x, y) => y - x);
    // The most followed accounts have many times the mean.
    expect(counts[0]!).toBeGreaterThan(10 * mean);
    // Small populations get shuffled unique names; large ones derive names from indices.
    const small = generateNetwork({ users: 800, seed: 1 }).population;
    expect(new Set(small.names).size).toBe(800);
    expect(pop.names).toBeUndefined();
    expect(new Set(Array.from({ length: 5000 }, (_, u) => nameOf(pop, u))).size).toBe(5000);
  });
});

describe("the (item, user) pair table", () => {
  it("stores, finds, keeps first values, counts, and survives growth", () => {
    const t = new PairTable(4);
    const rng = Rng.seeded("pairs");
    const ref = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const item = rng.int(3000);
      const user = rng.int(3000);
      const added = t.add(item, user, i, i % 4);
      if (added === ref.has(`${item},${user}`)) throw new Error(`add(${item}, ${user}) returned ${added}`);
      if (added) ref.set(`${item},${user}`, i);
    }
    expect(t.size).toBe(ref.size);
    const wrong: string[] = [];
    for (const [k, v] of ref) {
      const [item, user] = k.split(",").map(Number) as [number, number];
      if (t.get(item, user) !== v || t.tag(item, user) !== v % 4) wrong.push(k);
    }
    expect(wrong).toEqual([]);
    expect(t.get(3001, 0)).toBe(-1);
    expect(t.has(0, 3001)).toBe(false);
    const c = t.clone();
    c.add(5000, 5000, 1, 0);
    expect([c.has(5000, 5000), t.has(5000, 5000)]).toEqual([true, false]);
    expect([t.increment(7000, 1), t.increment(7000, 1), t.increment(7000, 1), t.get(7000, 1)]).toEqual([0, 1, 2, 3]);
  });
});

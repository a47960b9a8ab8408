import { describe, expect, it } from "vitest";
import { generateRec, leaveLastOut, parsePreferences, serializeMovieLens, utility } from "../../worlds/rec/index.js";
import { errorOf } from "../data-error.js";

const OPTS = { users: 60, items: 80, meanLength: 12 };

describe("the generator of users with latent preferences", () => {
  it("is seeded: the same seed writes the same files, another seed others", () => {
    const a = generateRec(OPTS, 7);
    const b = generateRec(OPTS, 7);
    const c = generateRec(OPTS, 8);
    expect(serializeMovieLens(a.dataset)).toEqual(serializeMovieLens(b.dataset));
    expect(JSON.stringify(a.preferences)).toBe(JSON.stringify(b.preferences));
    expect(serializeMovieLens(c.dataset).ratings).not.toBe(serializeMovieLens(a.dataset).ratings);
  });

  it("gives each user distinct items, in increasing time, lengths from 5 to 2 * mean - 5", () => {
    const { dataset } = generateRec(OPTS, 1);
    const byUser = new Map<number, { item: number; timestamp: number }[]>();
    for (const r of dataset.ratings) {
      expect(r.rating).toBeGreaterThanOrEqual(1);
      expect(r.rating).toBeLessThanOrEqual(5);
      byUser.set(r.user, [...(byUser.get(r.user) ?? []), r]);
    }
    expect(byUser.size).toBe(60);
    for (const seq of byUser.values()) {
      expect(seq.length).toBeGreaterThanOrEqual(5);
      expect(seq.length).toBeLessThanOrEqual(19);
      expect(new Set(seq.map((r) => r.item)).size).toBe(seq.length);
      for (let t = 1; t < seq.length; t++) expect(seq[t]!.timestamp).toBeGreaterThan(seq[t - 1]!.timestamp);
    }
  });

  it("chooses by the latent utility: items of high utility are chosen far more often than chance", () => {
    // For each choice, where the chosen item ranks among the unseen ones by its true utility.
    const { dataset, preferences: p } = generateRec({ users: 100, items: 100, meanLength: 10 }, 3);
    const items = new Map(p.items.map((i) => [i.id, i]));
    const users = new Map(p.users.map((u) => [u.id, u.vector]));
    let rankSum = 0;
    let n = 0;
    let prev: { user: number; seen: Set<number>; last?: readonly number[] } = { user: -1, seen: new Set() };
    for (const r of dataset.ratings) {
      if (r.user !== prev.user) prev = { user: r.user, seen: new Set() };
      const u = users.get(r.user)!;
      const mine = utility(p, u, prev.last, items.get(r.item)!);
      let above = 0;
      let unseen = 0;
      for (const it of p.items) {
        if (prev.seen.has(it.id)) continue;
        unseen++;
        if (utility(p, u, prev.last, it) > mine) above++;
      }
      rankSum += above / unseen;
      n++;
      prev.seen.add(r.item);
      prev.last = items.get(r.item)!.vector;
    }
    // Uniform choice would give a mean relative rank near 0.5.
    expect(rankSum / n).toBeLessThan(0.1);
  });

  it("writes its truth as preferences.json, which reads back and matches the data", () => {
    const g = generateRec(OPTS, 2);
    const p = parsePreferences(JSON.stringify(g.preferences), "preferences.json");
    expect(p).toEqual(g.preferences);
    const split = leaveLastOut(g.dataset);
    expect(split.users.every((u) => p.users.some((x) => x.id === u.user))).toBe(true);
  });

  it("names the field of a bad truth file", () => {
    const g = generateRec(OPTS, 2);
    const bad = { ...g.preferences, items: [{ ...g.preferences.items[0]!, vector: [1, 2] }] };
    expect(errorOf(() => parsePreferences(JSON.stringify(bad), "p.json")).message).toMatch(/p\.json \(items\.0\.vector\): has 2 numbers, dim is 8/);
    expect(errorOf(() => parsePreferences("{", "p.json")).message).toMatch(/p\.json: is not JSON/);
  });

  it("refuses options users would run out of items with", () => {
    expect(() => generateRec({ users: 2, items: 20, meanLength: 30 }, 0)).toThrow(/run out of items/);
  });
});

import { describe, expect, it } from "vitest";
import { RecentCache } from "../../worlds/core/recent-cache.js";

describe("RecentCache", () => {
  it("keeps the most recent `capacity` entries and forgets the oldest first", () => {
    const c = new RecentCache<string, number>(3);
    for (const [k, v] of [["a", 1], ["b", 2], ["c", 3]] as const) c.set(k, v);
    expect([c.get("a"), c.get("b"), c.get("c")]).toEqual([1, 2, 3]);
    c.set("d", 4);
    expect(c.get("a")).toBeUndefined();
    expect([c.get("b"), c.get("c"), c.get("d")]).toEqual([2, 3, 4]);
    c.set("e", 5);
    expect(c.get("b")).toBeUndefined();
    expect(c.get("e")).toBe(5);
  });

  it("replaces the value of a key it holds without evicting anything", () => {
    const c = new RecentCache<string, number>(2);
    c.set("a", 1);
    c.set("b", 2);
    c.set("a", 10);
    expect([c.get("a"), c.get("b")]).toEqual([10, 2]);
  });

  it("compares string keys by value, and clears", () => {
    const c = new RecentCache<string, number>(2);
    const k = ["st", "ory"].join("");
    c.set(k, 7);
    expect(c.get("story")).toBe(7);
    c.clear();
    expect(c.get("story")).toBeUndefined();
  });

  it("refuses a capacity that is not a positive integer", () => {
    expect(() => new RecentCache(0)).toThrow(/positive integer/);
    expect(() => new RecentCache(1.5)).toThrow(/positive integer/);
  });
});

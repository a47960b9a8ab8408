import { describe, expect, it } from "vitest";
import { casesOf, leaveLastOut, splitStats, type RecDataset } from "../../worlds/rec/index.js";

const movies = ["A", "B", "C", "D", "E"].map((title, i) => ({ id: 10 + i, title, genres: ["Drama"] }));
const [A, B, C, D, E] = [10, 11, 12, 13, 14];
// File order matters for ties: user 1 rated A and C at the same second, A first in the file.
const ds: RecDataset = {
  source: "hand",
  movies,
  ratings: [
    { user: 1, item: A, rating: 4, timestamp: 5 },
    { user: 1, item: B, rating: 4, timestamp: 3 },
    { user: 1, item: C, rating: 4, timestamp: 5 },
    { user: 1, item: D, rating: 4, timestamp: 1 },
    { user: 2, item: E, rating: 2, timestamp: 9 },
    { user: 2, item: A, rating: 2, timestamp: 0 },
    { user: 3, item: B, rating: 2, timestamp: 4 },
  ],
};

describe("leave-last-out split (RecBole's LS valid_and_test, TO order)", () => {
  const split = leaveLastOut(ds);
  const idx = (id: number) => split.itemIndex.get(id)!;

  it("indexes items by first appearance in the ratings file, and only rated ones", () => {
    expect(split.items.map((m) => m.title)).toEqual(["A", "B", "C", "D", "E"]);
    expect(leaveLastOut({ ...ds, ratings: ds.ratings.slice(4) }).items.map((m) => m.title)).toEqual(["E", "A", "B"]);
  });

  it("sorts by timestamp stably: the last is test, the one before valid, ties in file order", () => {
    const u1 = split.users.find((u) => u.user === 1)!;
    expect(u1.train).toEqual([idx(D), idx(B)]);
    expect(u1.valid).toBe(idx(A));
    expect(u1.test).toBe(idx(C));
  });

  it("leaves min(2, n - 1) out: two interactions give train and test, one gives train only", () => {
    const u2 = split.users.find((u) => u.user === 2)!;
    expect(u2).toEqual({ user: 2, train: [idx(A)], test: idx(E) });
    expect(split.users.find((u) => u.user === 3)).toEqual({ user: 3, train: [idx(B)] });
    // Users in order of first appearance after the sort (user 2's first item is at t = 0).
    expect(split.users.map((u) => u.user)).toEqual([2, 1, 3]);
  });

  it("valid cases see the training items; test cases see training and valid items", () => {
    const u1 = split.users.findIndex((u) => u.user === 1);
    const u2 = split.users.findIndex((u) => u.user === 2);
    expect(casesOf(split, "valid")).toEqual([{ user: u1, history: [idx(D), idx(B)], target: idx(A) }]);
    expect(casesOf(split, "test")).toEqual([
      { user: u2, history: [idx(A)], target: idx(E) },
      { user: u1, history: [idx(D), idx(B), idx(A)], target: idx(C) },
    ]);
    expect(splitStats(split)).toEqual({ users: 3, items: 5, interactions: 7, valid: 1, test: 2 });
  });
});

/** Type-balanced training data: the seeded equal selection the social demo's SFT data is drawn with. */
import { describe, expect, it } from "vitest";
import { balancedByType, countByType, equalByType } from "../../trainers/data/balanced-types.js";

describe("equalByType", () => {
  const types = Array.from({ length: 400 }, (_, i) => (i % 10 < 6 ? "ignore" : i % 10 < 8 ? "repost" : i % 10 < 9 ? "like" : "comment"));

  it("keeps as many of each type as the rarest has, drawn from the whole list, sorted", () => {
    const kept = equalByType(types, 1);
    expect(countByType(types, kept)).toEqual({ ignore: 40, repost: 40, like: 40, comment: 40 });
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
    expect(new Set(kept).size).toBe(kept.length);
    // The common type's items come from all over the list, not its first part (balancedByType's order).
    const ignores = kept.filter((i) => types[i] === "ignore");
    expect(Math.max(...ignores)).toBeGreaterThan(300);
    expect(Math.max(...balancedByType(types, 160).filter((i) => types[i] === "ignore"))).toBeLessThan(70);
  });

  it("is seeded: the same seed the same items, another seed others", () => {
    expect(equalByType(types, 1)).toEqual(equalByType(types, 1));
    expect(equalByType(types, 2)).not.toEqual(equalByType(types, 1));
    expect(countByType(types, equalByType(types, 2))).toEqual({ ignore: 40, repost: 40, like: 40, comment: 40 });
  });

  it("keeps everything when the types are already even, nothing of an empty list", () => {
    expect(equalByType(["a", "b", "b", "a"], 3)).toEqual([0, 1, 2, 3]);
    expect(equalByType([], 3)).toEqual([]);
  });
});

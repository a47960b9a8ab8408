/**
 * Context ids name a story's socialized context in every episode log (later questions about the
 * story refer to it by id, and a resumed run matches ids already logged), so they must not change.
 */
import { describe, expect, it } from "vitest";
import { contextIdOf } from "../../benchmarks/context-id.js";

describe("contextIdOf", () => {
  it("keeps the ids earlier logs hold", () => {
    // An id from a log of the ToMi val file (its first story).
    const story =
      "1 Ella entered the garage.\n2 Avery entered the garage.\n3 The spinach is in the green_crate.\n4 Ella exited the garage.\n5 Aiden loves the tangerine\n6 Avery moved the spinach to the green_treasure_chest.";
    expect(contextIdOf(story)).toBe("ctx-135bcd928f1e4a72");
  });
});

/**
 * Context ids name a story's socialized context in every episode log (later questions about the
 * story refer to it by id, and a resumed run matches ids already logged), so the one-pass hash
 * must give the ids the two hashString passes gave, for every kind of text.
 */
import { describe, expect, it } from "vitest";
import { contextIdOf } from "../../benchmarks/context-id.js";
import { hashString, Rng } from "../../worlds/core/rng.js";

function twoPass(story: string): string {
  const a = hashString(story).toString(16).padStart(8, "0");
  const b = hashString(`${story.length}:${story}`).toString(16).padStart(8, "0");
  return `ctx-${a}${b}`;
}

describe("contextIdOf", () => {
  it("is the two FNV-1a hashes of the story and of its length-prefixed text", () => {
    const rng = Rng.seeded("context-id");
    const stories = ["", "1 Ella entered the garage.", "Zoë 😀 \u0000 \uffff", "x".repeat(10_000)];
    for (let i = 0; i < 200; i++) {
      let s = "";
      const n = rng.int(300);
      for (let k = 0; k < n; k++) s += String.fromCharCode(rng.chance(0.9) ? 32 + rng.int(95) : rng.int(0x10000));
      stories.push(s);
    }
    for (const s of stories) expect(contextIdOf(s)).toBe(twoPass(s));
  });

  it("keeps the ids earlier logs hold", () => {
    // An id from a log written before the one-pass hash (the ToMi val file's first story).
    const story =
      "1 Ella entered the garage.\n2 Avery entered the garage.\n3 The spinach is in the green_crate.\n4 Ella exited the garage.\n5 Aiden loves the tangerine\n6 Avery moved the spinach to the green_treasure_chest.";
    expect(contextIdOf(story)).toBe("ctx-135bcd928f1e4a72");
  });
});

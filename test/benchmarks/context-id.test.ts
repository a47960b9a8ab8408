/**
 * Context ids name a story's socialized context in every episode log (later questions about the
 * story refer to it by id, and a resumed run matches ids already logged), so they must not change.
 */
import { describe, expect, it } from "vitest";
import { contextIdOf } from "../../worlds/question/context-id.js";
import { hashString, Rng } from "../../worlds/core/rng.js";

describe("contextIdOf", () => {
  it("keeps the ids earlier logs hold", () => {
    // An id from a log of the ToMi val file (its first story).
    const story =
      "1 Ella entered the garage.\n2 Avery entered the garage.\n3 The spinach is in the green_crate.\n4 Ella exited the garage.\n5 Aiden loves the tangerine\n6 Avery moved the spinach to the green_treasure_chest.";
    expect(contextIdOf(story)).toBe("ctx-135bcd928f1e4a72");
  });

  it("is the two FNV-1a hashes it is defined as, for any text", () => {
    const byDefinition = (t: string) => `ctx-${hashString(t).toString(16).padStart(8, "0")}${hashString(`${t.length}:${t}`).toString(16).padStart(8, "0")}`;
    const rng = Rng.seeded(11);
    const texts = ["", "a", "Zoë 👀 moved\nthe crate.", "x".repeat(1000)];
    for (let k = 0; k < 200; k++) texts.push(Array.from({ length: rng.int(60) }, () => String.fromCharCode(rng.int(0x3000))).join(""));
    for (const t of texts) expect(contextIdOf(t)).toBe(byDefinition(t));
  });
});

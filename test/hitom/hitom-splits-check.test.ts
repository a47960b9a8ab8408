/**
 * Hi-ToM's `story_length` (chapters) and `deception` (claims) describe the story, and the report's
 * splits are read from them: a value that disagrees with the story (an edited field, a story cut
 * at a chapter's end) is bad input naming the field, not a question counted in the wrong split.
 */
import { describe, expect, it } from "vitest";
import { parseHitom } from "../../worlds/hitom/dataset.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { errorOf } from "../data-error.js";

interface Entry {
  story: string;
  story_length: number;
  deception: boolean;
}

describe("Hi-ToM story_length and deception against the story", () => {
  it("reads generated entries of every length, with and without deception", async () => {
    const g = await generateHitom(60, 5);
    const items = parseHitom(g.json, "g.json");
    expect(new Set(items.map((i) => `${i.entry.story_length}/${i.entry.deception}`)).size).toBe(6);
  });

  it("refuses a story_length or a deception flag the story does not have", async () => {
    const g = await generateHitom(60, 5);
    const data = (JSON.parse(g.json) as { data: Entry[] }).data;
    const i = data.findIndex((e) => e.story_length === 2 && e.deception);
    const edit = (f: (e: Entry) => void) => {
      const copy = JSON.parse(g.json) as { data: Entry[] };
      f(copy.data[i]!);
      return JSON.stringify(copy);
    };
    expect(errorOf(() => parseHitom(edit((e) => (e.story_length = 3)), "g.json")).field).toBe(`data[${i}].story_length`);
    expect(errorOf(() => parseHitom(edit((e) => (e.deception = false)), "g.json")).field).toBe(`data[${i}].deception`);
    // Cut after the first chapter (its group entering the waiting_room): one chapter, and no claims yet.
    const cut = edit((e) => (e.story = e.story.slice(0, e.story.indexOf("entered the waiting_room.") + "entered the waiting_room.".length)));
    expect(errorOf(() => parseHitom(cut, "g.json")).field).toBe(`data[${i}].story_length`);
  });
});

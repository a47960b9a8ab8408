/**
 * The world model against upstream's own generator code. test/fixtures/hitom-upstream-labels.json
 * holds, for every entry of the dev slice, the label that upstream's Oracle and actions give when
 * the story is replayed through them (test/fixtures/hitom-upstream-oracle.py), at two commits:
 * 422f5cb (the generator the released data was made with) and 56dda76 (the last version, after
 * "fix permutation bug").
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readHitomFile, type HitomItem } from "../../worlds/hitom/dataset.js";
import { worldModelAnswer } from "../../worlds/hitom/questions.js";
import { replayHitom } from "../../worlds/hitom/replay.js";
import { HITOM_RELEASE_RULES, HITOM_RULES, type HitomRules } from "../../worlds/hitom/rules.js";
import { locateIn } from "../../worlds/hitom/story.js";
import { TOM_DATA, tomData } from "../data-paths.js";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/hitom-upstream-labels.json", import.meta.url), "utf8")) as {
  data: string;
  labels: Record<"422f5cb" | "56dda76", (string | null)[]>;
};

async function labels(items: readonly HitomItem[], rules: HitomRules): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = [];
  for (const item of items) {
    const { episode } = await replayHitom(item.story.scenario, locateIn(item.file, item.field), { rules, mentalStates: false });
    out.push(worldModelAnswer(episode.finalState, item.question));
  }
  return out;
}

const differing = (a: readonly (string | null | undefined)[], b: readonly (string | null | undefined)[]) => a.flatMap((x, i) => (x === b[i] ? [] : [i]));

describe.skipIf(!TOM_DATA)("Hi-ToM labels as upstream's generator code makes them (dev slice)", () => {
  const items = TOM_DATA ? readHitomFile(tomData("hitom", fixture.data)) : [];

  it("the world model gives, on every entry, the label of upstream's last generator; under HITOM_RELEASE_RULES, that of the generator of the release", async () => {
    expect(items).toHaveLength(fixture.labels["56dda76"].length);
    expect(differing(await labels(items, HITOM_RULES), fixture.labels["56dda76"])).toEqual([]);
    expect(differing(await labels(items, HITOM_RELEASE_RULES), fixture.labels["422f5cb"])).toEqual([]);
    // Each rule matters: without the fix the world model is the old generator, and the other way round.
    expect(differing(await labels(items, HITOM_RELEASE_RULES), fixture.labels["56dda76"]).length).toBeGreaterThan(20);
  });

  it("the released labels: every VP label is the generator's of 2023-06-09; the CoTP labels that are not were edited by hand", () => {
    const official = items.map((i) => i.entry.answer);
    const generated = fixture.labels["422f5cb"];
    const vp = items.filter((i) => i.entry.prompting_type === "VP").map((i) => i.index);
    expect(vp.filter((i) => official[i] !== generated[i])).toEqual([]);
    // 35 CoTP labels were changed after generation: 27 to the fixed generator's label, 8 to labels no version gives.
    const edited = differing(official, generated).filter((i) => items[i]!.entry.prompting_type === "CoTP");
    expect(edited).toHaveLength(35);
    const fixed = fixture.labels["56dda76"];
    expect(edited.filter((i) => official[i] === fixed[i])).toHaveLength(27);
    expect(edited.filter((i) => official[i] !== fixed[i])).toEqual([49, 50, 53, 54, 57, 144, 148, 152]);
    // The one CoTP label left as generated that the fixed generator does not give: the combinations error.
    const stale = items.filter((i) => i.entry.prompting_type === "CoTP" && official[i.index] === generated[i.index] && official[i.index] !== fixed[i.index]);
    expect(stale.map((i) => i.index)).toEqual([171]);
  });
});

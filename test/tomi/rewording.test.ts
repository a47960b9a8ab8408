import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";
import { AGENT_NAMES, CONTAINER_KINDS, CONTAINERS, OBJECTS, REMARK_VERBS, ROOMS } from "../../worlds/core/vocabulary.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { rewordSentence } from "../../worlds/tomi/rewording.js";
import type { TomiSentence } from "../../worlds/tomi/sentence.js";
import { parseSentence, renderSentence } from "../../worlds/tomi/sentences.js";

function randomSentence(rng: Rng): TomiSentence {
  const agent = rng.pick(AGENT_NAMES);
  const container = rng.pick([...CONTAINERS, ...CONTAINER_KINDS]);
  switch (rng.int(5)) {
    case 0:
      return { kind: "enter", agent, room: rng.pick(ROOMS) };
    case 1:
      return { kind: "exit", agent, room: rng.pick(ROOMS) };
    case 2:
      return { kind: "move", agent, object: rng.pick(OBJECTS), container };
    case 3:
      return rng.chance(0.5) ? { kind: "located", subject: rng.pick(OBJECTS), place: container } : { kind: "located", subject: container, place: rng.pick(ROOMS) };
    default:
      return { kind: "remark", agent, verb: rng.pick(REMARK_VERBS), thing: rng.pick([...OBJECTS, ...ROOMS]), period: rng.chance(0.3) };
  }
}

describe("ToMi sentences in other words", () => {
  it("every wording reads back as the sentence it words (a remark as its polarity)", () => {
    const rng = Rng.seeded("rewording-test");
    const wordings = new Map<string, Set<string>>();
    for (let i = 0; i < 6000; i++) {
      const s = randomSentence(rng);
      const text = rewordSentence(s, rng);
      const read = parseSentence(text);
      if (s.kind === "remark") {
        // A remark keeps its words ("is fond of"), and its polarity.
        const liking = (verb: string) => /^(likes|loves|is fond of|adores|enjoys|is keen on|is crazy about)$/.test(verb);
        expect(read?.kind, text).toBe("remark");
        if (read?.kind !== "remark") continue;
        expect({ ...read, verb: liking(read.verb) }, text).toEqual({ ...s, verb: liking(s.verb) });
      } else expect(read, text).toEqual(s);
      // The wording's shape: the sentence with its names taken out.
      const names = [...(Object.values(s).filter((v) => typeof v === "string" && v !== s.kind) as string[])].sort((x, y) => y.length - x.length);
      let shape = text;
      for (const n of names) shape = shape.split(n).join("_");
      const set = wordings.get(s.kind) ?? new Set();
      set.add(shape);
      wordings.set(s.kind, set);
    }
    // Many wordings of each kind, the grammar's own among them.
    expect(wordings.get("enter")!.size).toBeGreaterThan(15);
    expect(wordings.get("exit")!.size).toBeGreaterThan(15);
    expect(wordings.get("move")!.size).toBeGreaterThan(20);
    expect(wordings.get("located")!.size).toBeGreaterThan(12);
    expect(wordings.get("enter")).toContain("_ entered the _.");
    expect(wordings.get("move")).toContain("_ moved the _ to the _.");
    expect(wordings.get("located")).toContain("The _ is in the _.");
  });

  it("a reworded file has the same stories, questions and labels as the file without, and the simulation agent's reading of it agrees", async () => {
    const plain = await generateTomi(300, 5, undefined, { plainContainers: 0.5, placedContainers: 0.3 });
    const reworded = await generateTomi(300, 5, undefined, { plainContainers: 0.5, placedContainers: 0.3, reworded: 0.5 });
    expect(reworded.trace).toBe(plain.trace);
    const plainLines = plain.txt.split("\n");
    const rewordedLines = reworded.txt.split("\n");
    expect(rewordedLines).toHaveLength(plainLines.length);
    let changed = 0;
    for (let i = 0; i < plainLines.length; i++) {
      // Questions and answers untouched; each story sentence the same sentence, in words or not.
      if (plainLines[i]!.includes("?")) expect(rewordedLines[i]).toBe(plainLines[i]);
      else if (rewordedLines[i] !== plainLines[i]) changed++;
    }
    // About half the sentences drawn, less those drawn into the grammar's own wording.
    const sentences = plainLines.filter((l) => l !== "" && !l.includes("?")).length;
    expect(changed / sentences).toBeGreaterThan(0.3);
    expect(changed / sentences).toBeLessThan(0.5);

    const dir = mkdtempSync(join(tmpdir(), "tomi-reworded-"));
    for (const [name, f] of [["plain", plain], ["reworded", reworded]] as const) {
      writeFileSync(join(dir, `${name}.txt`), f.txt);
      writeFileSync(join(dir, `${name}.trace`), f.trace);
    }
    const bench = new TomiBenchmark();
    const a = bench.load(join(dir, "plain.txt"));
    const b = bench.load(join(dir, "reworded.txt"));
    expect(b.map((i) => [i.answer, i.type, i.storyType])).toEqual(a.map((i) => [i.answer, i.type, i.storyType]));
    // The world model reads the same events from both wordings (remarks aside, which it ignores).
    const events = (items: typeof a) => items.map((i) => i.raw.story.filter((s) => s.sentence.kind !== "remark").map((s) => s.sentence));
    expect(events(b)).toEqual(events(a));
  });

  it("a share of 0 leaves the generator's file as it was, draw for draw", async () => {
    const none = await generateTomi(120, 9);
    const zero = await generateTomi(120, 9, undefined, { reworded: 0 });
    expect(zero.txt).toBe(none.txt);
    expect(zero.txt).toMatch(/^1 [A-Z][a-z]+ entered the /);
  });
});

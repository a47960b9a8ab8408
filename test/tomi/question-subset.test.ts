/**
 * Training data balanced by question type: the kept questions, written back as a ToMi file with
 * its trace, load as the same questions with the same types, and every type is equally present.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadBenchmark } from "../../worlds/registry.js";
import { generateTomi, questionSubset } from "../../worlds/tomi/index.js";
import { balancedByType, countByType } from "../../trainers/data/balanced-types.js";
import { tempDir } from "../policy/fixtures.js";

const typeOf = (item: unknown) => String((item as { type: unknown }).type);

describe("type-balanced ToMi questions", () => {
  it("keep n/6 of each of the six types, and load back as the same questions", async () => {
    const dir = tempDir("sw-balance-");
    const f = await generateTomi(900, 4);
    writeFileSync(join(dir, "all.txt"), f.txt);
    writeFileSync(join(dir, "all.trace"), f.trace);
    const bench = await loadBenchmark("tomi");
    const items = await bench.load(join(dir, "all.txt"));
    const types = items.map(typeOf);
    // The generator's own mix is far from even: first-order false belief is the rarest.
    const natural = countByType(types, types.map((_, i) => i));
    expect(natural.first_order_tom!).toBeLessThan(natural.first_order_no_tom! / 2);
    const kept = balancedByType(types, 120);
    expect(countByType(types, kept)).toEqual({ memory: 20, reality: 20, first_order_tom: 20, first_order_no_tom: 20, second_order_tom: 20, second_order_no_tom: 20 });
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
    const sub = questionSubset(f.txt, f.trace, kept);
    writeFileSync(join(dir, "sub.txt"), sub.txt);
    writeFileSync(join(dir, "sub.trace"), sub.trace);
    const back = await bench.load(join(dir, "sub.txt"));
    expect(back.map((b) => [b.question, b.answer, typeOf(b), (b as unknown as { storyText: string }).storyText])).toEqual(
      kept.map((i) => [items[i]!.question, items[i]!.answer, types[i], (items[i] as unknown as { storyText: string }).storyText]),
    );
  });

  it("a type short of its quota gives what it has; a trace that does not match is an error", () => {
    expect(balancedByType(["a", "b", "b", "b", "a", "b"], 6)).toEqual([0, 1, 2, 3, 4]);
    expect(() => questionSubset("1 A entered the den.\n2 Where is A?\tden\t1\n", "", [0])).toThrow(/1 questions but 0 trace lines/);
    expect(() => questionSubset("1 Where is A?\tden\t1\n", "x\n", [3])).toThrow(/no question 3/);
  });
});

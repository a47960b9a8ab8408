import { describe, expect, it } from "vitest";
import { chosenOption, HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CHOICES = ["red_box", "blue_crate", "green_basket"];

describe("Hi-ToM scoring (the answer is one of the choices, as its letter or its text)", () => {
  it("reads letters, letters with their option, and option texts", () => {
    for (const answer of ["C", "C.", "c", "(C)", "[[C]]", "C. green_basket", "C) green_basket", "green_basket", "Green_Basket.", "the green_basket", "**C**"]) {
      expect(chosenOption(answer, CHOICES), answer).toBe("green_basket");
    }
    expect(chosenOption("The story says... so the answer is clear.\nAnswer: B", CHOICES)).toBe("blue_crate");
    expect(chosenOption("Answer: A. red_box", CHOICES)).toBe("red_box");
    // A letter with another option's text: the text decides, as upstream's checker reads "X. text".
    expect(chosenOption("C. red_box", CHOICES)).toBe("red_box");
  });

  it("gives nothing for an answer that is not one of the choices", () => {
    for (const answer of ["", "D", "purple_box", "C. purple_box", "red box or blue crate"]) expect(chosenOption(answer, CHOICES), answer).toBeUndefined();
  });

  it("judges against the label, and builds the prompt with lettered choices and the benchmark's rules", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-score-"));
    writeFileSync(join(dir, "g.json"), (await generateHitom(5, 9)).json);
    const bench = new HitomBenchmark();
    const [item] = bench.load(join(dir, "g.json"));
    const letter = String.fromCharCode(65 + item!.raw.choices.indexOf(String(item!.answer)));
    expect(bench.judge(item!, letter)).toEqual({ correct: true, detail: { chosen: `${letter}. ${String(item!.answer)}` } });
    expect(bench.judge(item!, String(item!.answer)).correct).toBe(true);
    const wrong = item!.raw.choices.find((c) => c !== item!.answer)!;
    expect(bench.judge(item!, wrong).correct).toBe(false);
    expect(bench.judge(item!, "no idea")).toEqual({ correct: false, detail: { chosen: null } });
    const task = bench.task(item!, "vanilla");
    expect(task.choices).toEqual(item!.raw.choices);
    expect(task.story).toBe(item!.raw.entry.story);
    expect(task.prompt).toContain(`Choices: A. ${item!.raw.choices[0]}, B. ${item!.raw.choices[1]}`);
    expect(task.prompt).toContain("The exit order is known to all agents.");
    expect(task.prompt).toContain(`Question: ${item!.question}`);
    expect(task.prompt.startsWith("Read the following story and answer the multiple-choice question. Think step-by-step")).toBe(true);
  });
});

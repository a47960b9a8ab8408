import { describe, expect, it } from "vitest";
import { chosenOption, HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import type { HitomEntry } from "../../worlds/hitom/dataset.js";
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
    expect(bench.judge(item!, letter)).toEqual({ correct: true, detail: { chosen: `${letter}. ${String(item!.answer)}`, option: String(item!.answer) } });
    expect(bench.judge(item!, String(item!.answer)).correct).toBe(true);
    const wrong = item!.raw.choices.find((c) => c !== item!.answer)!;
    expect(bench.judge(item!, wrong).correct).toBe(false);
    expect(bench.judge(item!, "no idea")).toEqual({ correct: false, detail: { chosen: null, option: null } });
    const task = bench.task(item!, "vanilla");
    expect(task.choices).toEqual(item!.raw.choices);
    expect(task.story).toBe(item!.raw.entry.story);
    expect(task.prompt).toContain(`Choices: A. ${item!.raw.choices[0]}, B. ${item!.raw.choices[1]}`);
    expect(task.prompt).toContain("The exit order is known to all agents.");
    expect(task.prompt).toContain(`Question: ${item!.question}`);
    expect(task.prompt.startsWith("Read the following story and answer the multiple-choice question. Think step-by-step")).toBe(true);
  });

  it("scores a VP entry against the CoTP entry of the same question (upstream's evaluator), or against its own label when asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-twins-"));
    const { data } = JSON.parse((await generateHitom(2, 3)).json) as { data: HitomEntry[] };
    const [cotp, other] = data as [HitomEntry, HitomEntry];
    const choices = cotp.choices.split(", ").map((c) => c.slice(3));
    const vpLabel = choices.find((c) => c !== cotp.answer)!;
    const vp: HitomEntry = { ...cotp, prompting_type: "VP", story: `Answer the question.\n${cotp.story}`, answer: vpLabel };
    // A VP entry without a CoTP twin in the file keeps its own label.
    const lone: HitomEntry = { ...other, prompting_type: "VP", story: `Answer the question.\n${other.story}` };
    writeFileSync(join(dir, "t.json"), JSON.stringify({ data: [cotp, vp, lone] }));
    const [, asTwin, alone] = new HitomBenchmark().load(join(dir, "t.json"));
    expect([asTwin!.answer, asTwin!.labelFromCot, alone!.answer, alone!.labelFromCot]).toEqual([cotp.answer, true, other.answer, false]);
    const own = new HitomBenchmark({ vpLabels: "own" }).load(join(dir, "t.json"))[1]!;
    expect([own.answer, own.labelFromCot]).toEqual([vpLabel, false]);

    const bench = new HitomBenchmark();
    const items = bench.load(join(dir, "t.json"));
    const verdicts = [bench.judge(items[0]!, cotp.answer), bench.judge(items[1]!, cotp.answer), bench.judge(items[2]!, "none")];
    expect(verdicts.map((v) => v.correct)).toEqual([true, true, false]);
    expect(bench.metrics(items, verdicts)).toEqual({
      vp_cotp_twin_pairs: 1,
      vp_labels_differing_from_cotp_twin: 1,
      vp_scored_against_cotp_twin: 1,
      vp_correct_by_cotp_twin_labels: 1,
      vp_correct_by_own_labels: 0,
    });
    // The world model's label is the CoTP one; the disagreement, if any, is judged against the label scored.
    const gt = await bench.groundTruth(items[1]!);
    expect(gt.agrees).toBe(gt.label === cotp.answer);
    expect((await new HitomBenchmark({ vpLabels: "own" }).groundTruth(own)).agrees).toBe(false);
  });
});

/**
 * Hi-ToM's compact socialized context: every question's answer is on the line its chain of agents
 * names (in the question's order), checked against the world model's labels on generated stories
 * (deception and not, one to three chapters) and on the shared dev slice; a set of three or four
 * agents is one line, cited by any order of its names; a pair is two lines (a claim makes them differ).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askedQuestion, replyFor } from "../../agents/policy/question-prompt.js";
import { citationSpec } from "../../agents/policy/action-grammar.js";
import { citations, citedAnswer, citedLine, compactText } from "../../worlds/core/compact-context.js";
import { HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { compactHitomContext } from "../../worlds/hitom/compact-context.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { simulateHitom } from "../../worlds/hitom/simulation.js";
import { TOM_DATA, tomData } from "../data-paths.js";

/** How many questions of a file the world's answerLine cites with the world model's label, as the prompt writes the line (or as an alias of it). */
async function everyAnswerCited(file: string): Promise<{ total: number; cited: number; longest: number }> {
  const bench = new HitomBenchmark();
  const items = bench.load(file).filter((item) => item.raw.entry.prompting_type === "CoTP");
  let cited = 0;
  let longest = 0;
  for (const item of items) {
    const task = bench.task(item, "simulation");
    const asked = await askedQuestion(task);
    longest = Math.max(longest, asked.text.split(/\s+/).length);
    const label = (await bench.groundTruth(item)).label;
    const reply = replyFor(asked, task.question, String(label));
    const spec = citationSpec(asked.cited!.lines, "schema");
    if (reply !== undefined && spec?.type === "choice" && spec.choices.includes(reply) && citedAnswer(reply) === label) cited++;
  }
  return { total: items.length, cited, longest };
}

describe("Hi-ToM's compact socialized context", () => {
  const story = [
    "1 Ava, Liam and Noah entered the attic.",
    "2 The carrot is in the red_box.",
    "3 Ava moved the carrot to the blue_crate.",
    "4 Ava exited the attic.",
    "5 Liam moved the carrot to the green_drawer.",
    "6 Liam exited the attic.",
    "7 Noah made no movements and stayed in the attic for 1 minute.",
    "8 Noah exited the attic.",
    "9 Ava, Liam and Noah entered the waiting_room.",
    "10 Liam privately told Ava that the carrot is in the red_box.",
  ].join("\n");

  it("lists the story's, each agent's and each chain's belief, a claim telling pairs apart", async () => {
    const ctx = compactHitomContext(await simulateHitom(story), "Where does Ava really think the carrot is?");
    const text = compactText(ctx);
    expect(text.startsWith("- story carrot:\ngreen_drawer\n- Ava carrot:\nred_box\n- Liam carrot:\ngreen_drawer\n")).toBe(true);
    // Ava trusts Liam (he left the attic after her): she now believes the lie, and that Liam believes it;
    // Liam thinks Ava believes him; Noah, who heard nothing, thinks Ava saw her own move last.
    const line = (title: string) => ctx.lines.find((l) => l.title === title)?.value;
    expect(line("Ava Liam carrot")).toBe("red_box");
    expect(line("Liam Ava carrot")).toBe("red_box");
    expect(line("Noah Ava carrot")).toBe("blue_crate");
    expect(line("Ava Noah carrot")).toBe("blue_crate");
    // Three agents saw together only Ava's move: one line, cited by any order of the names.
    const all = ctx.lines.filter((l) => l.title.split(" ").length === 4);
    expect(all).toEqual([{ title: "Ava Liam Noah carrot", value: "blue_crate", aliases: ["Ava Noah Liam carrot", "Liam Ava Noah carrot", "Liam Noah Ava carrot", "Noah Ava Liam carrot", "Noah Liam Ava carrot"] }]);
    expect(ctx.lines).toHaveLength(1 + 3 + 6 + 1);
    expect(text).not.toContain("Noah Liam Ava");
    const asked = ctx.answerLine("Where does Noah think Liam thinks Ava thinks the carrot is?");
    expect(asked).toEqual({ title: "Noah Liam Ava carrot", value: "blue_crate" });
    const reply = citations(asked!)[0]!;
    expect(citedLine(reply, ctx.lines)?.title).toBe("Ava Liam Noah carrot");
    const spec = citationSpec(ctx.lines, "schema");
    expect(spec?.type === "choice" && spec.choices).toContain("- Noah Liam Ava carrot:\nblue_crate");
    expect(ctx.answerLine("Where is the carrot really?")).toEqual({ title: "story carrot", value: "green_drawer" });
    expect(ctx.answerLine("Where does Zoe really think the carrot is?")).toBeUndefined();
    expect(ctx.answerLine("Who is Ava?")).toBeUndefined();
  });

  it("lists only the object the question asks about, and every object without a question", async () => {
    const two = `${story}\n11 Ava, Liam and Noah entered the attic.\n12 The apple is in the red_box.`;
    const context = await simulateHitom(two);
    expect(compactHitomContext(context, "Where is the apple really?").lines.every((l) => l.title.endsWith(" apple"))).toBe(true);
    const titles = compactHitomContext(context).lines.map((l) => l.title.split(" ").at(-1));
    expect(new Set(titles)).toEqual(new Set(["carrot", "apple"]));
  });

  it("cites the world model's label for every question of generated stories, in the question's own order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-compact-"));
    const file = join(dir, "gen.json");
    writeFileSync(file, (await generateHitom(120, 9)).json);
    const r = await everyAnswerCited(file);
    expect(r).toMatchObject({ total: 120, cited: 120 });
    // The prompt fits a 1,024-token window with room for the reply, even for three-chapter stories.
    expect(r.longest).toBeLessThan(500);
  });

  it.skipIf(!TOM_DATA)("cites the world model's label for every question of the dev slice", async () => {
    const r = await everyAnswerCited(tomData("hitom", "Hi-ToM_dev.json"));
    expect(r).toMatchObject({ total: 120, cited: 120 });
  });
});

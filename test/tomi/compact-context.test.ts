/**
 * The compact socialized context a small policy reads in simulation mode: every answer of a story
 * is on one of its lines (the story's, an agent's or a pair's), so reading the right line is all
 * the policy must learn; checked against the world model's labels on generated stories, on ToMi's
 * varied stories, and on ParaphrasedToMi (whose sentences the world model parses).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askedQuestion, replyFor } from "../../agents/policy/question-prompt.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { compactTomiContext } from "../../worlds/tomi/compact-context.js";
import { citation, citedAnswer, citedLine, compactText } from "../../worlds/core/compact-context.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { simulateTomi } from "../../worlds/tomi/simulation.js";
import { TOM_DATA, tomData } from "../data-paths.js";

/** The answer as a reader of the compact context finds it: the line of the question's view, object and first/now. */
function readAnswer(prompt: string, question: string): string | undefined {
  const lines = prompt.split("\n");
  const first = /^Where will (\S+) look for the (\S+)\?$/.exec(question);
  const second = /^Where does (\S+) think that (\S+) searches for the (\S+)\?$/.exec(question);
  const memory = /^Where was the (\S+) at the beginning\?$/.exec(question);
  const reality = /^Where is the (\S+) really\?$/.exec(question);
  let titles: string[];
  let object: string;
  if (first) [titles, object] = [[first[1]!], first[2]!];
  else if (second) [titles, object] = [[`both ${second[1]} and ${second[2]}`], second[3]!];
  else if (memory) [titles, object] = [["story"], memory[1]!];
  else if (reality) [titles, object] = [["story"], reality[1]!];
  else throw new Error(`unknown question ${question}`);
  const when = memory ? "first" : "now";
  const at = lines.findIndex((l) => titles.some((t) => l === `- ${t} ${object} ${when}:`));
  return at < 0 ? undefined : lines[at + 1];
}

/** How many answers a reader finds on their line, and how many the world's answerLine cites (a reply citing it answers the label). */
async function everyAnswerOnItsLine(file: string): Promise<{ total: number; found: number; cited: number }> {
  const bench = new TomiBenchmark();
  const items = bench.load(file);
  let found = 0;
  let cited = 0;
  for (const item of items) {
    const task = bench.task(item, "simulation");
    const asked = await askedQuestion(task);
    const prompt = asked.text;
    expect(prompt.startsWith(`Question: ${task.question}\n`)).toBe(true);
    const label = (await bench.groundTruth(item)).label;
    if (readAnswer(prompt, task.question) === label) found++;
    const reply = replyFor(asked, task.question, String(label));
    if (reply !== undefined && prompt.includes(`\n${reply}\n`) && citedAnswer(reply) === label) cited++;
  }
  return { total: items.length, found, cited };
}

describe("the compact socialized context", () => {
  it("lists where the story had each object first and now, and where each view saw it last", () => {
    const story = [
      "1 Ella entered the garage.",
      "2 Avery entered the garage.",
      "3 The spinach is in the green_crate.",
      "4 Ella exited the garage.",
      "5 Avery moved the spinach to the blue_box.",
      "6 Avery entered the hall.",
    ].join("\n");
    expect(compactText(compactTomiContext(simulateTomi(story)))).toBe(
      [
        "- story spinach first:",
        "green_crate",
        "- story spinach now:",
        "blue_box",
        "- Ella spinach now:",
        "green_crate",
        "- Avery spinach now:",
        "blue_box",
        "- both Ella and Avery spinach now:",
        "green_crate",
        "- both Avery and Ella spinach now:",
        "green_crate",
      ].join("\n"),
    );
  });

  it("is answered by citing a line: the reply is the line as the context writes it, the answer its value", () => {
    const story = ["1 Ella entered the garage.", "2 Avery entered the garage.", "3 The spinach is in the green_crate.", "4 Ella exited the garage.", "5 Avery moved the spinach to the blue_box."].join("\n");
    const ctx = compactTomiContext(simulateTomi(story));
    const ella = ctx.answerLine("Where will Ella look for the spinach?")!;
    expect(citation(ella)).toBe("- Ella spinach now:\ngreen_crate");
    expect(citedAnswer(citation(ella))).toBe("green_crate");
    // A pair's line, whichever order the question names the two in.
    expect(ctx.answerLine("Where does Avery think that Ella searches for the spinach?")).toEqual({ title: "both Avery and Ella spinach now", value: "green_crate" });
    expect(ctx.answerLine("Where does Ella think that Avery searches for the spinach?")).toEqual({ title: "both Ella and Avery spinach now", value: "green_crate" });
    expect(ctx.answerLine("Where was the spinach at the beginning?")!.value).toBe("green_crate");
    expect(ctx.answerLine("Where is the spinach really?")!.value).toBe("blue_box");
    expect(ctx.answerLine("Where will Ella look for the apple?")).toBeUndefined();
    expect(ctx.answerLine("Who is Ella?")).toBeUndefined();
    // The strict reading: exactly one line, surrounding white space aside; nothing else.
    expect(citedLine("  - Ella spinach now:\ngreen_crate\n", ctx.lines)).toBe(ella);
    expect(citedLine("- Ella spinach now:\nblue_box", ctx.lines)).toBeUndefined();
    expect(citedLine("green_crate", ctx.lines)).toBeUndefined();
  });

  it("holds the world model's answer to every generated question, with plain and placed containers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "compact-"));
    const files = await generateTomi(600, 5, undefined, { plainContainers: 0.5, placedContainers: 0.5 });
    writeFileSync(join(dir, "gen.txt"), files.txt);
    writeFileSync(join(dir, "gen.trace"), files.trace);
    expect(files.txt).toMatch(/The (envelope|box|basket|bucket|crate|cupboard|drawer|suitcase|bathtub|bottle|container|pantry|treasure_chest) is in the /);
    expect(files.txt).toMatch(/The \S+ is in the (garage|kitchen|hall|lounge|office|patio|porch|workshop|attic|back_yard|basement|bathroom|bedroom|cellar|closet|crawlspace|den|dining_room|front_yard|garden|laundry|living_room|master_bedroom|pantry|playroom|staircase|study|sunroom|TV_room)\./);
    const r = await everyAnswerOnItsLine(join(dir, "gen.txt"));
    expect(r).toEqual({ total: 600, found: 600, cited: 600 });
  });

  it.skipIf(!TOM_DATA)("holds every ParaphrasedToMi answer (the world model reads the reworded sentences)", async () => {
    const r = await everyAnswerOnItsLine(tomData("tomi", "paraphrased_symbolictom", "val_600.txt"));
    expect(r).toEqual({ total: 600, found: 600, cited: 600 });
  });

  it("the default generator draws as before: the variations cost no draw when off", async () => {
    const plain = await generateTomi(60, 3);
    const off = await generateTomi(60, 3, undefined, { plainContainers: 0, placedContainers: 0 });
    expect(off.txt).toBe(plain.txt);
    expect(plain.txt).not.toMatch(/The (envelope|box|basket|bucket|crate|cupboard|drawer|suitcase|bathtub|bottle|container|pantry|treasure_chest) is in/);
  });
});

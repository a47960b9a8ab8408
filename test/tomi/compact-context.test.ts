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
import { questionText } from "../../agents/policy/question-prompt.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { compactTomiContext } from "../../worlds/tomi/compact-context.js";
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
  else if (second) [titles, object] = [[`${second[1]} and ${second[2]}`, `${second[2]} and ${second[1]}`], second[3]!];
  else if (memory) [titles, object] = [["story"], memory[1]!];
  else if (reality) [titles, object] = [["story"], reality[1]!];
  else throw new Error(`unknown question ${question}`);
  const when = memory ? "first" : "now";
  const at = lines.findIndex((l) => titles.some((t) => l === `- ${t} ${object} ${when}:`));
  return at < 0 ? undefined : lines[at + 1];
}

async function everyAnswerOnItsLine(file: string): Promise<{ total: number; found: number }> {
  const bench = new TomiBenchmark();
  const items = bench.load(file);
  let found = 0;
  for (const item of items) {
    const task = bench.task(item, "simulation");
    const prompt = await questionText(task);
    expect(prompt.startsWith(`Question: ${task.question}\n`)).toBe(true);
    if (readAnswer(prompt, task.question) === (await bench.groundTruth(item)).label) found++;
  }
  return { total: items.length, found };
}

describe("the compact socialized context", () => {
  it("lists where each view saw each object first and last", () => {
    const story = [
      "1 Ella entered the garage.",
      "2 Avery entered the garage.",
      "3 The spinach is in the green_crate.",
      "4 Ella exited the garage.",
      "5 Avery moved the spinach to the blue_box.",
      "6 Avery entered the hall.",
    ].join("\n");
    expect(compactTomiContext(simulateTomi(story))).toBe(
      [
        "- story spinach first:",
        "green_crate",
        "- story spinach now:",
        "blue_box",
        "- Ella spinach first:",
        "green_crate",
        "- Ella spinach now:",
        "green_crate",
        "- Avery spinach first:",
        "green_crate",
        "- Avery spinach now:",
        "blue_box",
        "- Ella and Avery spinach first:",
        "green_crate",
        "- Ella and Avery spinach now:",
        "green_crate",
      ].join("\n"),
    );
  });

  it("holds the world model's answer to every generated question, with plain and placed containers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "compact-"));
    const files = await generateTomi(600, 5, undefined, { plainContainers: 0.5, placedContainers: 0.5 });
    writeFileSync(join(dir, "gen.txt"), files.txt);
    writeFileSync(join(dir, "gen.trace"), files.trace);
    expect(files.txt).toMatch(/The (envelope|box|basket|bucket|crate|cupboard|drawer|suitcase|bathtub|bottle|container|pantry|treasure_chest) is in the /);
    expect(files.txt).toMatch(/The \S+ is in the (garage|kitchen|hall|lounge|office|patio|porch|workshop|attic|back_yard|basement|bathroom|bedroom|cellar|closet|crawlspace|den|dining_room|front_yard|garden|laundry|living_room|master_bedroom|pantry|playroom|staircase|study|sunroom|TV_room)\./);
    const r = await everyAnswerOnItsLine(join(dir, "gen.txt"));
    expect(r).toEqual({ total: 600, found: 600 });
  });

  it.skipIf(!TOM_DATA)("holds every ParaphrasedToMi answer (the world model reads the reworded sentences)", async () => {
    const r = await everyAnswerOnItsLine(tomData("tomi", "paraphrased_symbolictom", "val_600.txt"));
    expect(r).toEqual({ total: 600, found: 600 });
  });

  it("the default generator draws as before: the variations cost no draw when off", async () => {
    const plain = await generateTomi(60, 3);
    const off = await generateTomi(60, 3, undefined, { plainContainers: 0, placedContainers: 0 });
    expect(off.txt).toBe(plain.txt);
    expect(plain.txt).not.toMatch(/The (envelope|box|basket|bucket|crate|cupboard|drawer|suitcase|bathtub|bottle|container|pantry|treasure_chest) is in/);
  });
});

/**
 * The learning recipe's data stage for both worlds: every example's reply cites the line of its
 * prompt that holds the world model's label, in the question's own order of names (Hi-ToM), so SFT
 * teaches exactly what the policy agent and GRPO accept under the citation grammar.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recipeSftData } from "../../measurements/learn-recipe.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import { loadBenchmark } from "../../worlds/registry.js";

async function examples(world: "tomi" | "hitom", questions: number) {
  const out = mkdtempSync(join(tmpdir(), `recipe-${world}-`));
  const data = await recipeSftData(out, { world, questions, seed: 3, modes: ["simulation"], balance: world === "tomi", timings: [] });
  const lines = readFileSync(data.sftFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { prompt: string; response: string });
  return { data, lines };
}

describe("the learning recipe's SFT data", () => {
  it("writes Hi-ToM questions as citations of the asked chain's line, in the question's order", async () => {
    const { data, lines } = await examples("hitom", 60);
    expect(data).toMatchObject({ questions: 60, examples: 60 });
    expect(data.trainFile.endsWith("train.json")).toBe(true);
    const bench = await loadBenchmark("hitom");
    // The replies answer the file's labels (the examples are shuffled: compared as multisets).
    const labels = (await bench.load(data.trainFile)).map((item) => String(item.answer)).sort();
    expect(lines.map((l) => citedAnswer(l.response)).sort()).toEqual(labels);
    for (const { prompt, response } of lines) {
      const question = /^Question: (.*)\n/.exec(prompt)![1]!;
      const names = [...question.matchAll(/(?:does|think|thinks) ([A-Z]\w+)/g)].map((m) => m[1]!);
      const object = /the (\w+) (?:really|is)\?$/.exec(question)![1]!;
      expect(response.split("\n")[0]).toBe(`- ${names.length ? names.join(" ") : "story"} ${object}:`);
      // Sets of three or four agents are written once, in the story's order: the reply may name them otherwise.
      if (names.length <= 2) expect(prompt).toContain(`\n${response}\n`);
    }
  });

  it("writes ToMi questions as citations of lines the prompt holds", async () => {
    const { data, lines } = await examples("tomi", 60);
    expect(data).toMatchObject({ questions: 60, examples: 60 });
    for (const { prompt, response } of lines) expect(prompt).toContain(`\n${response}\n`);
  });
});

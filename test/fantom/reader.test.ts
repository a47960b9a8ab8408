import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { FantomBenchmark } from "../../worlds/fantom/benchmark.js";
import { simulationAnswerText } from "../../worlds/question/prompts.js";
import { readFantomFile } from "../../worlds/fantom/format.js";
import { flattenFantom } from "../../worlds/fantom/questions.js";
import { generateFantom } from "../../worlds/fantom/generator.js";
import { answerFantom } from "../../worlds/fantom/simulation.js";
import { RunStore } from "../../store/run-store.js";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "official-layout.json");

function tmp(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "fantom-read-")), name);
  writeFileSync(file, text);
  return file;
}

describe("FANToM reader", () => {
  it("names the file and the field of a wrong shape", () => {
    const sets = JSON.parse(generateFantom(120, 3).json);
    sets[4].beliefQAs[0].tom_type = "third-order";
    expect(() => readFantomFile(tmp("a.json", JSON.stringify(sets)))).toThrow(/a\.json \(\[4\]\.beliefQAs\[0\]\.tom_type\): expected "first-order"/);
    // Only the official file's three values: a typo in the suffix would be a group of its own.
    sets[4].beliefQAs[0].tom_type = "second-order:cylic";
    expect(() => readFantomFile(tmp("a2.json", JSON.stringify(sets)))).toThrow(/a2\.json \(\[4\]\.beliefQAs\[0\]\.tom_type\): expected "first-order", "second-order:cyclic" or "second-order:acyclic"/);
    const again = JSON.parse(generateFantom(120, 3).json);
    delete again[2].infoAccessibilityQA_list.correct_answer;
    expect(() => readFantomFile(tmp("b.json", JSON.stringify(again)))).toThrow("b.json ([2].infoAccessibilityQA_list.correct_answer): missing (expected array)");
    const binary = JSON.parse(generateFantom(120, 3).json);
    binary[1].answerabilityQAs_binary[0].correct_answer = "maybe";
    expect(() => readFantomFile(tmp("c.json", JSON.stringify(binary)))).toThrow("c.json ([1].answerabilityQAs_binary[0].correct_answer)");
    expect(() => readFantomFile(tmp("d.json", '{"set_id": "1-0-0"}'))).toThrow("d.json (top level): expected a JSON array");
    const dup = JSON.parse(generateFantom(120, 3).json);
    dup[1].set_id = dup[0].set_id;
    expect(() => readFantomFile(tmp("e.json", JSON.stringify(dup)))).toThrow(`e.json ([1].set_id): set_id "${dup[0].set_id}" already used by [0]`);
  });

  it("refuses labels that contradict themselves, naming the field", () => {
    const same = JSON.parse(generateFantom(120, 3).json);
    same[3].beliefQAs[1].wrong_answer = ` ${same[3].beliefQAs[1].correct_answer}`;
    expect(() => readFantomFile(tmp("f.json", JSON.stringify(same)))).toThrow("f.json ([3].beliefQAs[1].wrong_answer): the same text as correct_answer");
    const both = JSON.parse(generateFantom(120, 3).json);
    const list = both[2].answerabilityQA_list;
    list.wrong_answer.push(list.correct_answer[0]);
    expect(() => readFantomFile(tmp("g.json", JSON.stringify(both)))).toThrow(`g.json ([2].answerabilityQA_list.wrong_answer): "${list.correct_answer[0]}" is also in correct_answer`);
  });

  it("names the line of broken JSON, and calls a cut-off file truncated", () => {
    const text = generateFantom(60, 3).json;
    expect(() => readFantomFile(tmp("t.json", text.slice(0, 2000)))).toThrow(/t\.json:\d+: the file ends before the JSON does: truncated file\?/);
    expect(() => readFantomFile(tmp("x.json", '[\n {"set_id": }\n]'))).toThrow(/x\.json:\d+: invalid JSON/);
  });

  it("orders multiple-choice options with the official seed-99 draw, over the whole file", () => {
    const sets = readFantomFile(FIXTURE);
    const mc = flattenFantom(sets).filter((q) => q.key.endsWith(":mc"));
    // random.seed(99); choice([True, False]) -> False, False, True, True: the answer goes last on the third and fourth.
    expect(mc.map((q) => q.correct)).toEqual(["a", "a", "b", "b"]);
    expect(mc[2]!.question).toBe(
      "What does Priya believe about the pet Gina adopted?\n(a) Priya is unaware that Gina adopted a pet.\n(b) Priya believes Gina adopted a rescue parrot named Captain.\n\nChoose an answer from above:",
    );
  });

  it("gives simulation mode's multiple-choice question its options once (the question lists them)", () => {
    const bench = new FantomBenchmark({ context: "short", embedder: "lexical" });
    const mc = bench.load(FIXTURE).find((i) => i.q.key.endsWith(":mc"))!;
    const text = simulationAnswerText(bench.task(mc, "simulation"), "{}");
    expect(text).toContain("Choose an answer from above:\nAnswer with the answer only.");
    expect(text).not.toContain("Choices:");
    expect(text.split("(a) ").length - 1).toBe(1);
  });

  it("builds the official prompts", () => {
    const bench = new FantomBenchmark({ context: "short", embedder: "lexical" });
    const items = bench.load(FIXTURE);
    const target = items.find((i) => i.q.key === "answerability:binary:1")!;
    const prompt = bench.task(target, "vanilla").prompt;
    expect(prompt.endsWith("\n\nTarget: What pet did Gina adopt?\nQuestion: Does Marcus know the precise correct answer to this question? Answer yes or no.\nAnswer:")).toBe(true);
    expect(prompt.startsWith("Gina: Hi, it is great to meet you both.\n")).toBe(true);
    const info = items.find((i) => i.q.key === "info_accessibility:list")!;
    expect(bench.task(info, "vanilla").prompt).toMatch(/\n\nInformation: What pet did Gina adopt\? Gina adopted a rescue parrot named Captain\.\nQuestion: List all the characters who know this information\.\nAnswer:$/);
    const mc = items.find((i) => i.q.key === "belief:0:mc")!;
    expect(bench.task(mc, "vanilla").prompt).toMatch(/\n\nQuestion: What does Marcus believe about the pet Gina adopted\?\n\(a\) .*\n\(b\) .*\n\nChoose an answer from above:$/);
  });

  it("replays official-layout conversations: exits from the text, or from joining_speaker where the text has none", async () => {
    const bench = new FantomBenchmark({ context: "short", embedder: "lexical" });
    const items = bench.load(FIXTURE);
    for (const item of items) {
      const gt = await bench.groundTruth(item);
      expect({ id: item.id, agrees: gt.agrees }).toEqual({ id: item.id, agrees: true });
    }
    // The simulation agent reads the text alone: Marcus says he is leaving, Omar does not.
    const marcus = items.find((i) => i.set.set_id === "0-0-0" && i.q.key === "answerability:list")!;
    expect((await answerFantom(marcus.q.context, marcus.question)).answer).toBe("Gina and Priya");
    const omar = items.find((i) => i.set.set_id === "1-0-0" && i.q.key === "answerability:binary:0")!;
    expect((await answerFantom(omar.q.context, omar.question)).answer).toBe("yes");
    const belief = items.find((i) => i.set.set_id === "0-0-0" && i.q.key === "belief:0:mc")!;
    expect((await answerFantom(belief.q.context, belief.question)).answer).toBe("(a)");
  });
});

describe("socialworld bench fantom", () => {
  let err = "";
  beforeEach(() => {
    err = "";
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
  });
  afterEach(() => vi.restoreAllMocks());

  it("stops on bad input with the file and field, and writes no report", async () => {
    const sets = JSON.parse(generateFantom(100, 4).json);
    sets[3].beliefQAs[1].question_type = "tom:belief:maybe";
    const file = tmp("bad.json", JSON.stringify(sets));
    const store = join(dirname(file), "store");
    const code = await main(["bench", "fantom", "--data", file, "--store", store, "--json", join(dirname(file), "r.json"), "--quiet"]);
    expect(code).toBe(2);
    expect(err).toContain(`bad input: ${file} ([3].beliefQAs[1].question_type)`);
    expect(existsSync(join(dirname(file), "r.json"))).toBe(false);
    expect(existsSync(store) ? (await RunStore.open(store)).list() : []).toEqual([]);
  });

  it("runs a generated file and reports the official metric names", async () => {
    const file = tmp("gen.json", generateFantom(150, 4).json);
    const json = join(dirname(file), "r.json");
    const code = await main(["bench", "fantom", "--data", file, "--store", join(dirname(file), "store"), "--json", json, "--quiet"]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8"));
    expect(report.accuracy).toBe(1);
    expect(report.title).toContain("lexical-hash-v1");
    expect(Object.keys(report.metrics)).toEqual(expect.arrayContaining(["inaccessible:set:ALL*", "inaccessible:set:ALL", "accessible:set:ALL*", "fact_word-f1", "inaccessible:belief:multiple-choice"]));
  });
});

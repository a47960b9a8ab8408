import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { FantomBenchmark, FANTOM_TYPES } from "../../worlds/fantom/benchmark.js";
import { buildReport } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { generateFantom, questionCount } from "../../worlds/fantom/generator.js";
import { parseFantom, type FantomSet } from "../../worlds/fantom/format.js";
import { parseContext, inferPresence } from "../../worlds/fantom/conversation.js";
import { locateByLanguage } from "../../worlds/fantom/locate.js";
import { replayConversation } from "../../worlds/fantom/replay.js";
import { knowsFact } from "../../worlds/fantom/world.js";
import { beliefPath } from "../../worlds/fantom/labels.js";

async function run(file: string, context: "short" | "full") {
  const bench = new FantomBenchmark({ context, embedder: "lexical", aggregation: "set" });
  const items = bench.load(file);
  const started = new Date();
  const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "simulation", concurrency: 8 });
  const report = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "simulation", data: file, runId: null, startedAt: started, finishedAt: new Date() });
  return { items, report };
}

describe("FANToM generator", () => {
  it("writes the same file for the same seed, and another for another seed", () => {
    expect(generateFantom(200, 5).json).toBe(generateFantom(200, 5).json);
    expect(generateFantom(200, 5).json).not.toBe(generateFantom(200, 6).json);
  });

  it("writes exactly N questions, counted as the official evaluator counts them", () => {
    for (const n of [3, 4, 5, 17, 250]) {
      const sets = parseFantom(generateFantom(n, 2).json, "gen");
      expect(sets.reduce((s, x) => s + questionCount(x), 0)).toBe(n);
    }
  });

  it("labels agree with the world replayed from the full conversation text", async () => {
    const sets: FantomSet[] = parseFantom(generateFantom(300, 9).json, "gen");
    for (const set of sets) {
      const utts = parseContext(set.full_context, "gen", "full_context");
      const located = locateByLanguage(utts, set.factQA.question)!;
      expect(located.statement).toBe(set.factQA.correct_answer);
      const { episode } = await replayConversation(utts, { facts: { f: located.statement }, factsByUtterance: new Map(located.lines.map((i) => [i, ["f"]])) });
      const s = episode.finalState;
      const knowers = inferPresence(utts).characters.filter((c) => knowsFact(s, [c], "f"));
      expect(new Set(set.answerabilityQA_list.correct_answer)).toEqual(new Set(knowers));
      for (const qa of set.beliefQAs) {
        const path = beliefPath(qa.question, inferPresence(utts).characters, qa.tom_type.startsWith("second"))!;
        expect(knowsFact(s, path, "f") ? "accessible" : "inaccessible").toBe(qa.missed_info_accessibility);
      }
      // The joiner missed the fact unless someone retold it after its return.
      expect(set.missed_info_accessibility).toBe(knowsFact(s, [set.joining_speaker!], "f") ? "accessible" : "inaccessible");
    }
  });

  it("1,000 generated questions: every question kind, read back by the reader, 100% for the simulation agent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fantom-gen-"));
    const file = join(dir, "gen.json");
    writeFileSync(file, generateFantom(1000, 1).json);
    const sets = parseFantom(generateFantom(1000, 1).json, file);
    expect(sets.reduce((s, x) => s + questionCount(x), 0)).toBe(1000);
    const binaryLabels = new Set(sets.flatMap((s) => [...s.answerabilityQAs_binary, ...s.infoAccessibilityQAs_binary].map((q) => q.correct_answer)));
    expect(binaryLabels).toEqual(new Set(["yes", "no", "no:long"]));
    const tomTypes = new Set(sets.flatMap((s) => s.beliefQAs.map((q) => `${q.missed_info_accessibility}:${q.tom_type}`)));
    for (const a of ["inaccessible", "accessible"]) for (const t of ["first-order", "second-order:cyclic", "second-order:acyclic"]) expect(tomTypes).toContain(`${a}:${t}`);
    expect(new Set(sets.map((s) => s.missed_info_accessibility))).toEqual(new Set(["inaccessible", "accessible"]));

    for (const context of ["short", "full"] as const) {
      const { items, report } = await run(file, context);
      expect(new Set(items.map((i) => i.type))).toEqual(new Set([...FANTOM_TYPES, "fact"]));
      expect(report.accuracy).toBe(1);
      expect(report.disagreements.total).toBe(0);
      expect(report.worldModel.agentAccuracy).toBe(1);
      expect(report.metrics?.["inaccessible:set:ALL*"]).toBe(100);
      expect(report.metrics?.["accessible:set:ALL*"]).toBe(100);
      expect(report.metrics?.["inaccessible:answerability:binary-f1"]).toBe(100);
      expect(report.metrics?.["fact_word-f1"]).toBe(100);
      // Short contexts drop the no:long binary questions, as the official evaluator does.
      const binaries = items.filter((i) => i.type.endsWith(":binary"));
      expect(binaries.some((i) => i.answer === "no:long")).toBe(context === "full");
    }
  });
});

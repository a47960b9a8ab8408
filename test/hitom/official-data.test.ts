import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { buildReport, type Stat } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { readHitomFile, type HitomItem } from "../../worlds/hitom/dataset.js";
import { worldModelAnswer } from "../../worlds/hitom/questions.js";
import { replayHitom } from "../../worlds/hitom/replay.js";
import { HITOM_RELEASE_RULES, HITOM_RULES, type HitomRules } from "../../worlds/hitom/rules.js";
import { locateIn } from "../../worlds/hitom/story.js";
import { TOM_DATA, tomData } from "../data-paths.js";

const s = (correct: number, total: number): Stat => ({ total, correct, accuracy: correct / total });

/** How many official labels the world model gives under `rules`, by prompting type and deception. */
async function agreement(items: readonly HitomItem[], rules: HitomRules): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const item of items) {
    const { episode } = await replayHitom(item.story.scenario, locateIn(item.file, item.field), { rules, mentalStates: false });
    const key = `${item.entry.prompting_type} deception=${item.entry.deception}`;
    out[key] ??= 0;
    if (worldModelAnswer(episode.finalState, item.question) === item.entry.answer) out[key]++;
  }
  return out;
}

describe.skipIf(!TOM_DATA)("Hi-ToM dev slice (../shared/data/tom/hitom)", () => {
  async function run(bench: HitomBenchmark) {
    const file = tomData("hitom", "Hi-ToM_dev.json");
    const items = bench.load(file);
    expect(items).toHaveLength(234);
    const started = new Date();
    const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "vanilla", concurrency: 8 });
    const report = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "vanilla", data: file, runId: null, startedAt: started, finishedAt: new Date() });
    return { items, results, report };
  }

  it("simulation agent, scored as upstream's evaluator scores (VP against the CoTP label): every miss a disputed label with its maker", async () => {
    const { items, report: r } = await run(new HitomBenchmark());
    expect(r.byType).toEqual({ order_0: s(48, 48), order_1: s(48, 48), order_2: s(41, 47), order_3: s(39, 45), order_4: s(40, 46) });
    expect([r.correct, r.total]).toEqual([216, 234]);
    expect(r.splits.deception).toEqual({ false: s(104, 114), true: s(112, 120) });
    expect(r.byTypeAndSplit.deception!.false).toEqual({ order_0: s(24, 24), order_1: s(24, 24), order_2: s(19, 23), order_3: s(17, 21), order_4: s(20, 22) });
    expect(r.byTypeAndSplit.deception!.true).toEqual({ order_0: s(24, 24), order_1: s(24, 24), order_2: s(22, 24), order_3: s(22, 24), order_4: s(20, 24) });
    expect(r.splits.prompting).toEqual({ CoTP: s(111, 120), VP: s(105, 114) });
    expect(r.splits.length).toEqual({ 1: s(74, 74), 2: s(74, 80), 3: s(68, 80) });

    // The world-model view: the agent, reading only the story, gives the world model's label every time.
    expect(r.worldModel).toMatchObject({ agreeWithOfficial: 216, total: 234, agentAccuracy: 1 });
    expect(Object.values(r.worldModel.agentAccuracyByType).every((a) => a === 1)).toBe(true);
    expect(r.total - r.correct).toBe(r.disagreements.total);
    const byCause = r.disagreements.byCause;
    expect(Object.fromEntries(Object.entries(byCause).map(([k, c]) => [k, c.count]))).toEqual({ hand_edited: 16, ordered_combinations: 2 });
    // The nine CoTP labels the world model disputes (each VP twin is scored against the same label).
    const cotp = (cause: string) => byCause[cause]!.items.filter((d) => items[Number(d.id.split("#")[1])]!.raw.entry.prompting_type === "CoTP");
    expect(cotp("hand_edited").map((d) => [d.field, d.official, d.worldModel, d.note])).toEqual([
      ["data[49]", "blue_container", "blue_treasure_chest", "generated: blue_treasure_chest"],
      ["data[50]", "green_bucket", "blue_cupboard", "generated: blue_cupboard"],
      ["data[53]", "blue_container", "blue_treasure_chest", "generated: blue_treasure_chest"],
      ["data[54]", "green_bucket", "blue_cupboard", "generated: blue_cupboard"],
      ["data[57]", "blue_container", "blue_treasure_chest", "generated: blue_treasure_chest"],
      ["data[144]", "blue_treasure_chest", "red_bottle", "generated: red_bottle"],
      ["data[148]", "blue_treasure_chest", "red_bottle", "generated: red_bottle"],
      ["data[152]", "blue_treasure_chest", "red_bottle", "generated: red_bottle"],
    ]);
    expect(cotp("ordered_combinations").map((d) => [d.field, d.official, d.worldModel])).toEqual([["data[171]", "blue_treasure_chest", "blue_bottle"]]);

    // 29 VP labels differ from the CoTP label of the same question; scored against the CoTP label,
    // the agent gets 105 of 114 VP entries, against their own labels 92.
    expect(r.metrics).toEqual({
      vp_cotp_twin_pairs: 114,
      vp_labels_differing_from_cotp_twin: 29,
      vp_scored_against_cotp_twin: 114,
      vp_correct_by_cotp_twin_labels: 105,
      vp_correct_by_own_labels: 92,
    });
  });

  it("with --vp-labels own, VP entries are scored against their own labels: every one the generator's of 2023-06-09", async () => {
    const { items, results, report: r } = await run(new HitomBenchmark({ vpLabels: "own" }));
    expect([r.correct, r.total]).toEqual([203, 234]);
    expect(r.splits.prompting).toEqual({ CoTP: s(111, 120), VP: s(92, 114) });
    const counts = Object.fromEntries(Object.entries(r.disagreements.byCause).map(([k, c]) => [k, c.count]));
    expect(counts).toEqual({ ordered_combinations: 23, hand_edited: 8 });
    const prompting = (cause: string) => r.disagreements.byCause[cause]!.items.map((d) => items[Number(d.id.split("#")[1])]!.raw.entry.prompting_type);
    expect(prompting("ordered_combinations").filter((p) => p === "VP")).toHaveLength(22);
    expect(new Set(prompting("hand_edited"))).toEqual(new Set(["CoTP"]));
    expect(r.metrics).toMatchObject({ vp_scored_against_cotp_twin: 0, vp_correct_by_own_labels: 92 });
    // In every VP/CoTP pair whose labels differ, the world model gives one of the two (the CoTP one 21 times).
    const byId = new Map(results.map((x) => [x.id, x]));
    const twin = new Map(items.filter((i) => i.raw.entry.prompting_type === "CoTP").map((i) => [`${i.raw.story.body}\n${i.question}`, i]));
    const sides = { CoTP: 0, VP: 0, neither: 0 };
    for (const vp of items.filter((i) => i.raw.entry.prompting_type === "VP")) {
      const cotpTwin = twin.get(`${vp.raw.story.body}\n${vp.question}`)!;
      if (cotpTwin.answer === vp.answer) continue;
      const wm = byId.get(vp.id)!.worldModel;
      sides[wm === cotpTwin.answer ? "CoTP" : wm === vp.answer ? "VP" : "neither"]++;
    }
    expect(sides).toEqual({ CoTP: 21, VP: 8, neither: 0 });
  });

  it("measures the rules against the labels: the claim rule chosen, and the generator's error behind the VP labels", async () => {
    const items = readHitomFile(tomData("hitom", "Hi-ToM_dev.json"));
    expect(await agreement(items, HITOM_RULES)).toEqual({
      "CoTP deception=false": 55,
      "CoTP deception=true": 56,
      "VP deception=false": 42,
      "VP deception=true": 50,
    });
    // Every VP label (54 + 60) is the world model's answer under the generator's rules of the day the data was made.
    expect(await agreement(items, HITOM_RELEASE_RULES)).toEqual({
      "CoTP deception=false": 37,
      "CoTP deception=true": 48,
      "VP deception=false": 54,
      "VP deception=true": 60,
    });
    // Common knowledge of who believed a claim fits the deception labels worse than the hearer rule.
    const common = await agreement(items, { ...HITOM_RULES, claims: "common" });
    expect([common["CoTP deception=true"], common["VP deception=true"]]).toEqual([48, 46]);
  });
});

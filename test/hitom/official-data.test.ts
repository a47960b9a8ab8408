import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { buildReport, type Stat } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { readHitomFile, type HitomItem } from "../../worlds/hitom/dataset.js";
import { worldModelAnswer } from "../../worlds/hitom/questions.js";
import { replayHitom } from "../../worlds/hitom/replay.js";
import { HITOM_RULES, type HitomRules } from "../../worlds/hitom/rules.js";
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
  it("simulation agent: accuracy by order and deception as measured; every miss is a disputed label with a named cause", async () => {
    const bench = new HitomBenchmark();
    const file = tomData("hitom", "Hi-ToM_dev.json");
    const items = bench.load(file);
    expect(items).toHaveLength(234);
    const started = new Date();
    const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "vanilla", concurrency: 8 });
    const r = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "vanilla", data: file, runId: null, startedAt: started, finishedAt: new Date() });
    expect(r.byType).toEqual({
      order_0: s(48, 48),
      order_1: s(48, 48),
      order_2: s(39, 47),
      order_3: s(36, 45),
      order_4: s(32, 46),
    });
    expect([r.correct, r.total]).toEqual([203, 234]);
    expect(r.splits.deception).toEqual({ false: s(97, 114), true: s(106, 120) });
    expect(r.byTypeAndSplit.deception!.false).toEqual({ order_0: s(24, 24), order_1: s(24, 24), order_2: s(18, 23), order_3: s(16, 21), order_4: s(15, 22) });
    expect(r.byTypeAndSplit.deception!.true).toEqual({ order_0: s(24, 24), order_1: s(24, 24), order_2: s(21, 24), order_3: s(20, 24), order_4: s(17, 24) });
    expect(r.splits.prompting).toEqual({ CoTP: s(111, 120), VP: s(92, 114) });
    expect(r.splits.length).toEqual({ 1: s(69, 74), 2: s(73, 80), 3: s(61, 80) });

    // The agent, reading only the story, agrees with the world model on every question.
    expect(r.worldModel.agentAccuracy).toBe(1);
    expect(r.total - r.correct).toBe(r.disagreements.total);
    const counts = Object.fromEntries(Object.entries(r.disagreements.byCause).map(([k, c]) => [k, c.count]));
    expect(counts).toEqual({ ordered_combinations: 23, label_from_another_object: 3, other: 3, reentry_not_seen: 2 });
    const prompting = (cause: string) => r.disagreements.byCause[cause]!.items.map((d) => items[Number(d.id.split("#")[1])]!.raw.entry.prompting_type);
    expect(prompting("ordered_combinations").filter((p) => p === "VP")).toHaveLength(22);
    for (const cause of ["label_from_another_object", "other", "reentry_not_seen"]) expect(new Set(prompting(cause))).toEqual(new Set(["CoTP"]));
    for (const d of r.disagreements.byCause.label_from_another_object!.items) expect(d.official).toBe("blue_container");

    // 29 VP labels differ from the CoTP label of the same question on the same story; in every such
    // pair the world model gives one of the two labels (the CoTP one 21 times, the VP one 8 times).
    expect(r.metrics).toEqual({ vp_cotp_twin_pairs: 114, vp_labels_differing_from_cotp_twin: 29 });
    const byId = new Map(results.map((x) => [x.id, x]));
    const twin = new Map(items.filter((i) => i.raw.entry.prompting_type === "CoTP").map((i) => [`${i.raw.story.body}\n${i.question}`, i]));
    const sides = { CoTP: 0, VP: 0, neither: 0 };
    for (const vp of items.filter((i) => i.raw.entry.prompting_type === "VP")) {
      const cotp = twin.get(`${vp.raw.story.body}\n${vp.question}`)!;
      if (cotp.answer === vp.answer) continue;
      const wm = byId.get(vp.id)!.worldModel;
      sides[wm === cotp.answer ? "CoTP" : wm === vp.answer ? "VP" : "neither"]++;
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
    // Every VP label (54 + 60) is the world model's answer under the ordered-combinations error.
    expect(await agreement(items, { ...HITOM_RULES, moveChains: "listed" })).toEqual({
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

import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { buildReport } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { TOM_DATA, tomData } from "../data-paths.js";

describe.skipIf(!TOM_DATA)("ToMi official val split (../shared/data/tom)", () => {
  it("simulation agent: 100% on memory, reality and first order; second-order disagreements are label noise with known causes", async () => {
    const bench = new TomiBenchmark();
    const file = tomData("tomi", "original", "fb_all_val.txt");
    const items = bench.load(file);
    expect(items).toHaveLength(5994);
    const started = new Date();
    const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "vanilla", concurrency: 8 });
    const r = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "vanilla", data: file, runId: null, startedAt: started, finishedAt: new Date() });
    for (const t of ["memory", "reality", "first_order_tom", "first_order_no_tom", "second_order_tom"]) {
      expect(r.byType[t]!.accuracy, t).toBe(1);
    }
    // Every miss is a question whose official label the world model disputes; the agent always
    // agrees with the world model it never saw.
    expect(r.worldModel.agentAccuracy).toBe(1);
    expect(r.total - r.correct).toBe(r.disagreements.total);
    expect(Object.keys(r.disagreements.byCause).sort()).toEqual(["reentry_after_other_left", "third_agent_entry"]);
    expect(r.disagreements.byCause.third_agent_entry!.count).toBe(376);
    expect(r.disagreements.byCause.reentry_after_other_left!.count).toBe(106);
    for (const cause of Object.values(r.disagreements.byCause)) {
      for (const d of cause.items) expect(d.type).toBe("second_order_no_tom");
    }
  });
});

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { buildReport } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { generateTomi } from "../../worlds/tomi/generator.js";

describe("ToMi generator", () => {
  it("writes the same file for the same seed, and another for another seed", async () => {
    const a = await generateTomi(60, 3);
    const b = await generateTomi(60, 3);
    const c = await generateTomi(60, 4);
    expect(a.txt).toBe(b.txt);
    expect(a.trace).toBe(b.trace);
    expect(a.txt).not.toBe(c.txt);
  });

  it("1,000 generated questions: every type and story type, read back by the reader, 100% for the simulation agent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tomi-gen-"));
    const files = await generateTomi(1000, 11);
    writeFileSync(join(dir, "gen.txt"), files.txt);
    writeFileSync(join(dir, "gen.trace"), files.trace);
    const bench = new TomiBenchmark();
    const items = bench.load(join(dir, "gen.txt"));
    expect(items).toHaveLength(1000);
    expect(new Set(items.map((i) => i.type))).toEqual(
      new Set(["memory", "reality", "first_order_tom", "first_order_no_tom", "second_order_tom", "second_order_no_tom"]),
    );
    expect(new Set(items.map((i) => i.storyType))).toEqual(new Set(["true_belief", "false_belief", "second_order_false_belief"]));
    const kinds = new Set(items.flatMap((i) => i.raw.story.map((s) => s.sentence.kind)));
    expect(kinds).toEqual(new Set(["enter", "exit", "move", "located", "remark"]));
    const started = new Date();
    const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "simulation" });
    const r = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "simulation", data: "gen", runId: null, startedAt: started, finishedAt: new Date() });
    expect(r.accuracy).toBe(1);
    expect(r.disagreements.total).toBe(0);
  });
});

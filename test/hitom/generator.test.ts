import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SimulationAgent } from "../../agents/simulation-agent.js";
import { HitomBenchmark } from "../../worlds/hitom/benchmark.js";
import { buildReport } from "../../benchmarks/report.js";
import { runBenchmark } from "../../benchmarks/runner.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { replayHitom } from "../../worlds/hitom/replay.js";
import { locateIn } from "../../worlds/hitom/story.js";
import type { HitomEventData } from "../../worlds/hitom/world.js";

const UPSTREAM_KEYS = ["prompting_type", "deception", "story_length", "question_order", "sample_id", "story", "question", "choices", "answer"];

describe("Hi-ToM generator", () => {
  it("writes the same file for the same seed, and another for another seed", async () => {
    const a = await generateHitom(50, 3);
    const b = await generateHitom(50, 3);
    const c = await generateHitom(50, 4);
    expect(a.json).toBe(b.json);
    expect(a.json).not.toBe(c.json);
    expect(a.questions).toBe(50);
  });

  it("1,000 generated questions in the upstream format, read back by the reader, 100% for the simulation agent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hitom-gen-"));
    const gen = await generateHitom(1000, 1);
    const file = join(dir, "gen.json");
    writeFileSync(file, gen.json);
    const raw = (JSON.parse(gen.json) as { data: Record<string, unknown>[] }).data;
    for (const [i, entry] of raw.entries()) {
      expect(Object.keys(entry)).toEqual(UPSTREAM_KEYS);
      expect(entry.sample_id).toBe(i);
    }

    const bench = new HitomBenchmark();
    const items = bench.load(file);
    expect(items).toHaveLength(1000);
    expect(new Set(items.map((i) => i.type))).toEqual(new Set(["order_0", "order_1", "order_2", "order_3", "order_4"]));
    expect(new Set(items.map((i) => `${i.splits!.deception}/${i.splits!.length}`))).toEqual(
      new Set(["false/1", "false/2", "false/3", "true/1", "true/2", "true/3"]),
    );
    expect(new Set(items.map((i) => i.raw.entry.prompting_type))).toEqual(new Set(["CoTP"]));
    for (const i of items) expect(i.raw.choices).toHaveLength(15);
    const kinds = new Set(items.flatMap((i) => i.raw.story.text.sentences.map((s) => s.sentence.kind)));
    expect(kinds).toEqual(new Set(["enter", "located", "move", "stay", "exit", "public_claim", "private_claim", "remark"]));
    for (const i of items) {
      if (i.raw.entry.deception) continue;
      expect(i.raw.story.text.sentences.some((s) => s.sentence.kind.endsWith("_claim"))).toBe(false);
    }

    // The claims test the trust rule both ways: hearers who believe, and hearers who do not.
    let believed = 0;
    let ignored = 0;
    const stories = new Map(items.map((i) => [i.raw.story.body, i.raw]));
    for (const item of stories.values()) {
      const { episode } = await replayHitom(item.story.scenario, locateIn(item.file, item.field), { mentalStates: false });
      for (const e of episode.steps.flatMap((s) => s.events)) {
        const data = e.data as HitomEventData;
        if (data.kind !== "claim") continue;
        const hearers = e.observers.length - 1;
        believed += data.believers!.length;
        ignored += hearers - data.believers!.length;
      }
    }
    expect(believed).toBeGreaterThan(100);
    expect(ignored).toBeGreaterThan(100);

    const started = new Date();
    const results = await runBenchmark({ benchmark: bench, items, agent: new SimulationAgent(), mode: "simulation", concurrency: 8 });
    const r = buildReport({ benchmark: bench, items, results, agent: "simulation", mode: "simulation", data: file, runId: null, startedAt: started, finishedAt: new Date() });
    expect(r.accuracy).toBe(1);
    expect(r.disagreements.total).toBe(0);
    expect(r.errors.count).toBe(0);
  });
});

/**
 * Bench's report of a policy's self-written contexts (`context=self`): a `writtenContext` block
 * only where replies wrote one, its shares, and its lines in the printed table.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildReport, renderReport } from "../../benchmarks/report.js";
import { itemResult } from "../../benchmarks/runner.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";

const STORY = ["1 Ella entered the garage.", "2 Avery entered the garage.", "3 The spinach is in the green_crate.", "4 Ella exited the garage.", "5 Avery moved the spinach to the blue_box."];

describe("the written context in bench's report", () => {
  it("is reported, by type and printed, only where replies wrote one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "written-report-"));
    const file = join(dir, "tiny.txt");
    writeFileSync(file, [...STORY, "6 Where will Ella look for the spinach?\tgreen_crate\t1", ...STORY, "6 Where is the spinach really?\tblue_box\t1", ""].join("\n"));
    const bench = new TomiBenchmark();
    const items = bench.load(file);
    const answers = ["green_crate", "green_crate"];
    const fidelity = [{ exact: true, lines: 2, right: 2 }, { exact: false, lines: 3, right: 1 }];
    const results = await Promise.all(items.map(async (item, i) => itemResult(item, await bench.groundTruth(item), answers[i]!, bench.judge(item, answers[i]!), undefined, 1, fidelity[i])));
    const args = { benchmark: bench, items, agent: "policy:p?context=self", mode: "simulation" as const, data: file, runId: null, startedAt: new Date(0), finishedAt: new Date(1000) };
    const report = buildReport({ ...args, results });
    expect(report.writtenContext).toEqual({
      questions: 2,
      exact: 1,
      exactShare: 0.5,
      lines: 5,
      linesRight: 3,
      lineShare: 0.6,
      exactShareByType: { [items[0]!.type]: 1, [items[1]!.type]: 0 },
    });
    const text = renderReport(report);
    expect(text).toContain("Written context (the agent's own, against the world model's): 1/2 traces exact (50.0%), 3/5 lines right (60.0%).");
    // The world model's context (the default): no such block, nor line.
    const plain = buildReport({ ...args, results: results.map(({ writtenContext: _, ...r }) => r) });
    expect(plain.writtenContext).toBeUndefined();
    expect(renderReport(plain)).not.toContain("Written context");
  });
});

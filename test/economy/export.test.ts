/**
 * The economy's decision points through generate, bench and export: a benchmark run of the
 * simulation agent (EconAgent's heuristic) written as verl Parquet (the household's prompt, the
 * best decision as the ground truth) and as SFT rows whose response is the decision's JSON.
 */
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { readDecisionPointFile } from "../../worlds/economy/index.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();

async function rows(file: string): Promise<Record<string, unknown>[]> {
  const buf = readFileSync(file);
  return parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) });
}

describe("economy decision points: generate, bench, export", () => {
  it("exports a benchmark run as verl and SFT rows", async () => {
    const dir = tempDir("sw-econ-export-");
    const data = join(dir, "points.jsonl");
    expect(await main(["generate", "economy", "--n", "12", "--seed", "2", "--out", data])).toBe(0);
    expect(await main(["bench", "economy", "--data", data, "--agent", "simulation", "--store", dir, "--json", join(dir, "report.json")])).toBe(0);
    const runId = (JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as { runId: string }).runId;
    const points = readDecisionPointFile(data).map((p) => p.point);

    const verl = join(dir, "econ.parquet");
    expect(await main(["export", "--run", runId, "--format", "verl", "--out", verl, "--store", dir]), io.err).toBe(0);
    const v = await rows(verl);
    expect(v).toHaveLength(12);
    const first = v[0] as { data_source: string; prompt: { role: string; content: string }[]; reward_model: { style: string; ground_truth: string } };
    expect(first.prompt.at(-1)!.content).toContain("Answer with JSON only");
    expect(JSON.parse(first.reward_model.ground_truth)).toEqual({ work: points[0]!.best.work, consumption: points[0]!.best.consumption });

    const sft = join(dir, "econ-sft.parquet");
    expect(await main(["export", "--run", runId, "--format", "sft", "--out", sft, "--store", dir]), io.err).toBe(0);
    const s = (await rows(sft)) as { prompt: string; response: string }[];
    expect(s).toHaveLength(12);
    for (const r of s) expect(Object.keys(JSON.parse(r.response) as object).sort()).toEqual(["consumption", "work"]);
  });
});

/**
 * The social world's pipeline as a user runs it, through ./bin/socialworld.js in processes of its
 * own: `generate social` a test split and a training split (for the majority agent), `bench social`
 * with the random, majority and simulation agents, and `export` of the simulation run. The reports
 * keep the common fields and the per-depth metrics, and the simulation agent (the generator's
 * latent user model: the ceiling) beats both baselines.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parquetReadObjects } from "hyparquet";
import { describe, expect, it } from "vitest";
import { RunStore } from "../../store/run-store.js";

const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
const run = promisify(execFile);
const socialworld = (args: string[]) => run(process.execPath, [bin, ...args], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });

interface Report {
  benchmark: string;
  agent: string;
  total: number;
  correct: number;
  accuracy: number;
  byType: Record<string, { total: number; correct: number; accuracy: number }>;
  splits: { depth: Record<string, { total: number; correct: number; accuracy: number }> };
  metrics: Record<string, number>;
}

describe("the social pipeline through the command line", () => {
  it("generates, benches random, majority and simulation, and exports the run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-social-cli-"));
    const store = join(dir, "store");
    const test = join(dir, "test.jsonl");
    const train = join(dir, "train.jsonl");
    await socialworld(["generate", "social", "--n", "10", "--seed", "5", "--out", test, "--quiet"]);
    await socialworld(["generate", "social", "--n", "10", "--seed", "6", "--out", train, "--quiet"]);
    expect(readFileSync(test, "utf8").trimEnd().split("\n")).toHaveLength(10);

    const reports: Record<string, Report> = {};
    for (const [name, agent] of [["random", "random:3"], ["majority", `majority:${train}`], ["simulation", "simulation"]] as const) {
      const json = join(dir, `${name}.json`);
      await socialworld(["bench", "social", "--data", test, "--agent", agent, "--json", json, "--store", store, "--quiet"]);
      reports[name] = JSON.parse(readFileSync(json, "utf8")) as Report;
    }

    for (const [name, r] of Object.entries(reports)) {
      expect(r.benchmark, name).toBe("social");
      expect(r.total).toBeGreaterThan(50);
      expect(r.accuracy).toBeCloseTo(r.correct / r.total, 12);
      // byType: one row per label type, together every task.
      expect(Object.keys(r.byType).every((t) => ["comment", "repost", "like", "ignore"].includes(t))).toBe(true);
      expect(Object.values(r.byType).reduce((n, t) => n + t.total, 0)).toBe(r.total);
      // The depth split covers every task, at depths 0 and 1, each with its own metrics.
      expect(Object.keys(r.splits.depth).sort()).toEqual(["0", "1"]);
      expect(r.splits.depth["0"]!.total + r.splits.depth["1"]!.total).toBe(r.total);
      for (const d of ["0", "1"]) {
        expect(r.metrics[`depth${d}.accuracy`]).toBeCloseTo(r.splits.depth[d]!.accuracy, 12);
        for (const m of ["macroF1", "rougeL", "format"]) expect(r.metrics[`depth${d}.${m}`], `${name} depth${d}.${m}`).toBeGreaterThanOrEqual(0);
      }
      for (const m of ["macroF1", "rougeL", "format"]) expect(r.metrics[m], `${name} ${m}`).toBeGreaterThanOrEqual(0);
    }
    expect(reports.random!.agent).toBe("random:3");
    const sim = reports.simulation!;
    expect(sim).toMatchObject({ agent: "simulation", accuracy: 1 });
    expect(sim.metrics).toMatchObject({ macroF1: 1, rougeL: 1, format: 1 });
    // The ceiling beats the baselines on type accuracy, macro-F1 and ROUGE-L, at each depth.
    for (const base of [reports.random!, reports.majority!]) {
      expect(base.accuracy).toBeLessThan(0.8);
      for (const m of ["macroF1", "rougeL", "depth0.accuracy", "depth1.accuracy"]) expect(base.metrics[m], `${base.agent} ${m}`).toBeLessThan(sim.metrics[m]!);
    }
    // The majority agent answers the most frequent type of its training split: one type per depth.
    expect(reports.majority!.accuracy).toBeGreaterThan(reports.random!.accuracy);

    // The simulation run exports as verl Parquet and chat JSONL, one row per task, the label's JSON as the answer.
    const runs = (await RunStore.open(store)).list().filter((r) => r.kind === "bench");
    expect(runs).toHaveLength(3);
    expect(runs.map((r) => r.params.agent).sort()).toEqual(["majority", "random:3", "simulation"]);
    const simRun = runs.find((r) => r.params.agent === "simulation")!;
    await socialworld(["export", "--run", simRun.id, "--format", "verl", "--out", join(dir, "out.parquet"), "--store", store]);
    await socialworld(["export", "--run", simRun.id, "--format", "chat", "--out", join(dir, "out.jsonl"), "--store", store]);
    const buf = readFileSync(join(dir, "out.parquet"));
    const verl = (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) })) as { data_source: string; reward_model: unknown }[];
    expect(verl).toHaveLength(sim.total);
    expect(new Set(verl.map((r) => r.data_source))).toEqual(new Set(["socialworld/social"]));
    const chat = readFileSync(join(dir, "out.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(chat).toHaveLength(sim.total);
    for (const c of chat) {
      const answer = JSON.parse(c.messages.at(-1)!.content) as { action: string };
      expect(["comment", "repost", "like", "ignore"]).toContain(answer.action);
      expect(JSON.stringify(verl[chat.indexOf(c)]!.reward_model)).toContain(answer.action);
    }
  }, 300_000);
});

/**
 * usersim as a benchmark and through the commands: `generate usersim`, `bench usersim` with the
 * simulation (the ceiling) and random agents, the graded report (accuracy = mean alignment), its
 * options (hierarchy, weights, split; vanilla mode only), what a task holds (no ground truth),
 * the world model's disagreement with an edited record, and exports of a run as SFT pairs on
 * the ground-truth hierarchies.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { RESPONSE_ONLY_HIERARCHY, hierarchyJson } from "../../worlds/usersim/hierarchy.js";
import { parseReply, replyTextPattern } from "../../worlds/usersim/reply.js";
import type { UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { simulationAnswer, usersimLevels } from "../../worlds/usersim/benchmark.js";
import { stateOfRecord } from "../../worlds/usersim/scenario.js";

const io = captureOutput();

function fixture(n = 120, seed = 3): { dir: string; data: string } {
  const dir = mkdtempSync(join(tmpdir(), "sw-usersim-bench-"));
  const data = join(dir, "g.jsonl");
  writeFileSync(data, generateUsersim(n, seed).jsonl);
  return { dir, data };
}

async function bench(args: string[], dir: string): Promise<{ code: number; report: any }> {
  const json = join(dir, `r-${Math.random().toString(36).slice(2)}.json`);
  const code = await main(["bench", "usersim", ...args, "--json", json, "--store", join(dir, "store"), "--quiet"]);
  return { code, report: code === 0 ? JSON.parse(readFileSync(json, "utf8")) : undefined };
}

describe("usersim as a benchmark", () => {
  it("generate usersim writes records the benchmark reads, the same file for the same seed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-usersim-gen-"));
    expect(await main(["generate", "usersim", "--n", "40", "--seed", "9", "--out", join(dir, "a.jsonl"), "--quiet"])).toBe(0);
    expect(io.out).toContain("wrote 40 usersim conversation records (seed 9)");
    await main(["generate", "usersim", "--n", "40", "--seed", "9", "--out", join(dir, "b.jsonl"), "--quiet"]);
    expect(readFileSync(join(dir, "a.jsonl"), "utf8")).toBe(readFileSync(join(dir, "b.jsonl"), "utf8"));
    const b = await loadBenchmark("usersim");
    expect(await b.load(join(dir, "a.jsonl"))).toHaveLength(40);
  });

  it("scores the simulation agent 1 (the ceiling) and the random agent far below, in a graded report", async () => {
    const { dir, data } = fixture();
    const sim = await bench(["--data", data, "--agent", "simulation"], dir);
    expect(sim.code).toBe(0);
    expect(sim.report).toMatchObject({ benchmark: "usersim", total: 120, correct: 120, accuracy: 1, graded: { correct: "well-formed", score: "alignment" } });
    expect(sim.report.metrics).toMatchObject({ stance: 1, emotion: 1, belief: 1, value: 1, goal: 1, communication: 1, response: 1, format_rate: 1, mean_reward: 1 });
    expect(Object.keys(sim.report.byType).sort()).toEqual(["chat", "email", "forum", "reviews"]);
    expect(io.out).toContain("| question type | total | well-formed | alignment |");
    const rnd = await bench(["--data", data, "--agent", "random:2"], dir);
    expect(rnd.report.correct).toBe(120);
    expect(rnd.report.accuracy).toBeGreaterThan(0.15);
    expect(rnd.report.accuracy).toBeLessThan(0.45);
    // The accuracy is the mean of the items' alignments, and the log's reward is each item's.
    const store = await RunStore.open(join(dir, "store"));
    const run = store.list().find((r) => r.params.agent === "random:2")!;
    expect(run.summary).toMatchObject({ graded: "alignment" });
    const log = readEpisodeLog<{ result: { score: number }; turns: { reward: number }[] }>(store.episodesPath(run));
    const scores = log.records.map((r) => r.result.score);
    expect(scores.reduce((a, b) => a + b, 0) / scores.length).toBeCloseTo(rnd.report.accuracy, 10);
    expect(log.records.every((r) => r.turns[0]!.reward === r.result.score)).toBe(true);
  });

  it("takes a hierarchy file, weights and a split; refuses simulation mode and bad weights", async () => {
    const { dir, data } = fixture(80, 4);
    const h = join(dir, "h.json");
    writeFileSync(h, JSON.stringify(hierarchyJson(RESPONSE_ONLY_HIERARCHY)));
    const r = await bench(["--data", data, "--agent", "simulation", "--hierarchy", h, "--split", "train"], dir);
    expect(r.code).toBe(0);
    expect(r.report.total).toBe(generateUsersim(80, 4).records.filter((x) => x.split === "train").length);
    expect(Object.keys(r.report.metrics)).toEqual(["response", "format_rate", "mean_reward"]);
    const w = await bench(["--data", data, "--agent", "random", "--weights", "response=0,belief=3"], dir);
    expect(w.report.accuracy).toBeCloseTo(w.report.metrics.belief * 3 / 8 + (w.report.metrics.stance + w.report.metrics.emotion + w.report.metrics.value + w.report.metrics.goal + w.report.metrics.communication) / 8, 2);
    expect((await bench(["--data", data, "--mode", "simulation"], dir)).code).toBe(2);
    expect(io.err).toContain("--mode: usersim is asked in vanilla mode only");
    expect((await bench(["--data", data, "--weights", "mood=1"], dir)).code).toBe(2);
    expect(io.err).toMatch(/--weights: weight for "mood", which is not a tag of the hierarchy/);
    expect((await bench(["--data", data, "--split", "holdout"], dir)).code).toBe(2);
    expect(io.err).toMatch(/g\.jsonl: no record of split "holdout" \(splits there: /);
    expect((await main(["bench", "tomi", "--data", data, "--hierarchy", h, "--quiet"]))).toBe(2);
    expect(io.err).toContain("--hierarchy does not apply to tomi (it applies to usersim)");
  });

  it("gives an agent (or a person in the seat) the prompt and no ground truth; the simulation agent reads it privately", async () => {
    const { data } = fixture(20, 8);
    const b = (await loadBenchmark("usersim")) as UsersimBenchmark;
    const items = await b.load(data);
    for (const item of items) {
      const task = b.task(item, "vanilla");
      const sent = JSON.stringify(task);
      // The profile may name the user's beliefs and opinions (a persona generator would); the truth of this reply is not there.
      // answerForm is the hierarchy's layout (the grammar a policy writes in), the same for every
      // item, and its levels (per-level generation), whose prompts show what the prompt shows.
      expect(Object.keys(task).sort()).toEqual(["answerForm", "benchmark", "candidates", "itemId", "mode", "prompt", "question", "story"]);
      expect(task.answerForm).toEqual({ type: "pattern", pattern: replyTextPattern(b.hierarchy), levels: usersimLevels(stateOfRecord(item.record, b.hierarchy)) });
      expect(sent).not.toContain(item.record.reply);
      expect(task.candidates).not.toContain(item.answer);
      expect(task.prompt).toContain(`You are ${item.record.user}`);
      expect(task.candidates).toHaveLength(8);
      expect(task.candidates!.every((c) => parseReply(c, b.hierarchy).ok)).toBe(true);
      // A copy of the task (what a client is sent) opens nothing.
      expect(() => simulationAnswer(JSON.parse(sent))).toThrow(/was not loaded in this process/);
      expect(simulationAnswer(task)).toBe(item.answer);
    }
  });

  it("names a record whose reply its latent states do not write, and scores the simulation agent's response below 1 there", async () => {
    const { dir, data } = fixture(30, 6);
    const lines = readFileSync(data, "utf8").trim().split("\n");
    const edited = JSON.parse(lines[4]!);
    edited.completion = "Something else entirely.";
    lines[4] = JSON.stringify(edited);
    writeFileSync(data, lines.join("\n") + "\n");
    const r = await bench(["--data", data, "--agent", "simulation"], dir);
    expect(r.report.disagreements.byCause.reply_not_from_latent).toMatchObject({ count: 1, items: [{ line: 5 }] });
    expect(r.report.accuracy).toBeLessThan(1);
    expect(r.report.metrics.stance).toBe(1);
  });

  it("has no simulation answer for real data: each item falls back, naming why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-usersim-real-"));
    const data = join(dir, "real.jsonl");
    writeFileSync(data, JSON.stringify({ user_id: "u1", prompt: [{ role: "op", content: "Bike lanes on Main Street?" }], completion: "Yes please, finally." }) + "\n");
    const r = await bench(["--data", data, "--agent", "simulation"], dir);
    expect(r.report).toMatchObject({ total: 1, correct: 0, accuracy: 0 });
    expect(r.report.errors.examples[0].error).toMatch(/has no latent states: the simulation agent writes the generator's replies/);
    // The label of real data is its real reply; there is no world model to disagree with it.
    expect(r.report.disagreements.total).toBe(0);
  });

  it("exports a run as SFT pairs: the prompt and the ground-truth hierarchy, checked by the judge", async () => {
    const { dir, data } = fixture(40, 2);
    await bench(["--data", data, "--agent", "random", "--split", "train"], dir);
    const store = await RunStore.open(join(dir, "store"));
    const run = store.list()[0]!;
    const out = join(dir, "chat.jsonl");
    expect(await main(["export", "--run", run.id, "--format", "chat", "--out", out, "--store", join(dir, "store")])).toBe(0);
    const rows = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const b = (await loadBenchmark("usersim", { split: "train" })) as UsersimBenchmark;
    const items = await b.load(data);
    expect(rows).toHaveLength(items.length);
    rows.forEach((row, i) => {
      expect(row.messages[0].content).toBe(b.task(items[i]!, "vanilla").prompt);
      expect(row.messages[1].content).toBe(items[i]!.answer);
      expect(b.judge(items[i]!, row.messages[1].content).score).toBe(1);
    });
  });
});

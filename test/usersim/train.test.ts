/**
 * usersim's rewards in GRPO: a graded benchmark's decision points are judged by the world's judge
 * (the reply is the tagged hierarchy's text; -1, --format-failure, for a malformed one; the
 * judge's alignment otherwise), a group at a time; `train grpo --world usersim --hierarchy FILE`
 * learns from the generator's records (the train split) and logs its rollouts as a benchmark run
 * that exports; options that only a graded benchmark takes are refused elsewhere.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { scoreGroup, type RewardSettings } from "../../trainers/grpo/reward.js";
import type { QuestionTask } from "../../worlds/question/world.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();

const SETTINGS: RewardSettings = { rewards: { exact: 1, f1: 0, rougeL: 0, format: 0, trace: 0 }, formatFailure: -1, maxNewTokens: 512, overlongBuffer: 0, overlongPenalty: 1 };
const RESPONSE_ONLY = join(import.meta.dirname, "../../worlds/usersim/hierarchies/response-only.json");

describe("usersim in GRPO", () => {
  it("scores a group with the world's judge: the ceiling 1, a random reply its alignment, a malformed one the format failure", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-usersim-grpo-"));
    const data = join(dir, "g.jsonl");
    writeFileSync(data, generateUsersim(10, 7).jsonl);
    const points = await BenchPoints.open("usersim", data, "vanilla");
    const b = new UsersimBenchmark();
    const items = await b.load(data);
    for (let i = 0; i < 3; i++) {
      const p = (await points.point(i)) as Awaited<ReturnType<BenchPoints["point"]>> & { task: QuestionTask };
      const random = p.task.candidates![0]!;
      const scored = await scoreGroup(p, [simulationAnswer(p.task), random, "I agree.", `{"answer": "${random}"}`].map((text) => ({ text, tokens: 10, finish: "stop", logprob: 0 })), SETTINGS);
      expect(scored.map((s) => s.format)).toEqual([true, true, false, false]);
      expect(scored[0]).toMatchObject({ reward: 1, exact: 1, action: { answer: simulationAnswer(p.task) } });
      const alignment = b.judge(items[i]!, random).score!;
      expect(alignment).toBeGreaterThan(0);
      expect(alignment).toBeLessThan(1);
      expect(scored[1]).toMatchObject({ reward: alignment, exact: alignment });
      expect(scored[2]).toMatchObject({ reward: -1, exact: 0 });
      expect(scored[2]!.formatError).toMatch(/stance/);
    }
    // The overlong penalty still applies on top of the judge's reward.
    const p0 = (await points.point(0)) as Awaited<ReturnType<BenchPoints["point"]>> & { task: QuestionTask };
    const [long] = await scoreGroup(p0, [{ text: simulationAnswer(p0.task), tokens: 442, finish: "stop", logprob: 0 }], { ...SETTINGS, overlongBuffer: 100 });
    // DAPO's soft penalty: 30 tokens into the last 100 of 512 costs 0.3.
    expect(long!.reward).toBeCloseTo(1 - 0.3, 10);
  });

  it("trains with --world usersim --hierarchy FILE on generated records, logs a benchmark run that exports", async () => {
    const records = generateUsersim(12, 5);
    const corpus = (await new UsersimBenchmark({ hierarchy: RESPONSE_ONLY_HIERARCHY }).load(writeTemp(records.jsonl))).map((item) => new UsersimBenchmark({ hierarchy: RESPONSE_ONLY_HIERARCHY }).task(item, "vanilla").prompt);
    const m = await createFromScratch({ preset: "1m", seed: 3, corpus: [...corpus, "<response>\n</response>"] });
    const model = tempDir("sw-usersim-model-");
    saveCheckpoint(model, m.model, m.files);
    const out = tempDir("sw-usersim-out-");
    const store = tempDir("sw-usersim-store-");
    // Rollouts are sampled under the reply's grammar (<response> ... </response>: 16 of this tokenizer's tokens at least).
    const code = await main(["train", "grpo", "--model", model, "--world", "usersim", "--episodes", "12", "--world-seed", "5", "--hierarchy", RESPONSE_ONLY,
      "--out", out, "--store", store, "--steps", "1", "--prompts", "2", "--group-size", "3", "--max-new-tokens", "24", "--quiet"]);
    expect(code, io.err).toBe(0);
    const train = records.records.filter((r) => r.split === "train").length;
    expect(io.out).toMatch(new RegExp(`trained 1 GRPO steps on User simulation .*usersim-n12-seed5\\.jsonl \\(vanilla mode, ${train} questions\\)`));
    // The generated file is the generator's, kept in the store.
    expect(readFileSync(join(store, "generated", "usersim-n12-seed5.jsonl"), "utf8")).toBe(records.jsonl);
    const s = await RunStore.open(store);
    const run = s.list()[0]!;
    expect(run.params).toMatchObject({ benchmark: "usersim", options: { hierarchy: RESPONSE_ONLY, split: "train" } });
    const recs = readEpisodeLog<{ kind: string; result: { score: number; correct: boolean }; turns: { prompt: string; raw: string; reward: number; info: { rewardParts: { format: boolean; exact: number } } }[] }>(s.episodesPath(run)).records;
    expect(recs).toHaveLength(6);
    for (const r of recs) {
      const t = r.turns[0]!;
      // The prompt asks for the response only; the reward is the judge's (or -1 when malformed).
      expect(t.prompt).toContain("<response>");
      expect(t.prompt).not.toContain("<stance>");
      const parts = t.info.rewardParts;
      expect(t.reward).toBe(parts.format ? parts.exact : -1);
      expect(r.result.correct).toBe(parts.format);
      expect(r.result.score).toBe(parts.exact);
    }
    const chat = join(tempDir(), "rollouts.jsonl");
    expect(await main(["export", "--run", run.id, "--format", "chat", "--out", chat, "--store", store])).toBe(0);
    const rows = readFileSync(chat, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { messages: { content: string }[] });
    expect(rows).toHaveLength(6);
    expect(rows[0]!.messages.at(-2)!.content).toContain("<response>");
  }, 60_000);

  it("refuses the judge's options where nothing is graded, and a judge that is not a model", async () => {
    const args = ["train", "grpo", "--model", tempDir(), "--out", tempDir(), "--store", tempDir(), "--quiet"];
    expect(await main([...args, "--world", "tomi", "--hierarchy", RESPONSE_ONLY])).toBe(2);
    expect(io.err).toContain("--hierarchy does not apply to tomi (it applies to usersim)");
    expect(await main([...args, "--world", "usersim", "--judge", "random"])).toBe(2);
    expect(io.err).toContain('--judge: a judge is an OpenAI-compatible model, llm:MODEL@BASE_URL[?options] (got "random")');
  });
});

function writeTemp(text: string): string {
  const f = join(mkdtempSync(join(tmpdir(), "sw-usersim-corpus-")), "g.jsonl");
  writeFileSync(f, text);
  return f;
}

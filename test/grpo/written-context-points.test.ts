/**
 * GRPO for a policy that writes its own context (`train grpo --bench tomi --mode simulation
 * --context self`): the trainer asks what the policy agent asks and samples under the same
 * grammar, reads the answer off the reply's last line, weighs the trace against the world
 * model's (`--reward trace=W`), refuses a mode or world without a written context, and trains.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { askedQuestion, writtenContextRefusal } from "../../agents/policy/question-prompt.js";
import { turnMessages } from "../../agents/policy/action.js";
import { writtenSpec } from "../../agents/policy/action-grammar.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { writtenReply } from "../../worlds/core/written-context.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { BenchPoints, WrittenContextUnavailable } from "../../trainers/grpo/bench-points.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { scoreReply } from "../../trainers/grpo/reward.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();

/** A false-belief story with three questions: Ella's (false) belief, Avery's (true) one, reality. */
function storyFile(): string {
  const story = ["Ella entered the garage.", "Avery entered the garage.", "The spinach is in the green_crate.", "Ella exited the garage.", "Avery moved the spinach to the blue_box."];
  const lines = story.map((l, i) => `${i + 1} ${l}`).join("\n");
  const questions = [["Where will Ella look for the spinach?", "green_crate"], ["Where will Avery look for the spinach?", "blue_box"], ["Where is the spinach really?", "blue_box"]];
  const file = join(tempDir("sw-grpo-self-"), "story.txt");
  writeFileSync(file, questions.map(([q, a]) => `${lines}\n6 ${q}\t${a}\t1`).join("\n") + "\n");
  return file;
}

const reply = (text: string) => ({ text, tokens: 10, finish: "stop", logprob: -1 });
const settings = (trace: number) => GrpoConfigSchema.parse({ rewards: { exact: 1, trace }, maxNewTokens: 256 });

describe("GRPO with context=self", () => {
  it("asks the very prompt the policy agent asks, under the agent's grammar, and reads the answer off the last line", async () => {
    const file = storyFile();
    const src = await BenchPoints.open("tomi", file, "simulation", { context: "self" });
    const bench = new TomiBenchmark();
    const items = bench.load(file);
    for (let i = 0; i < items.length; i++) {
      const asked = await askedQuestion(bench.task(items[i]!, "simulation"), "self");
      const p = await src.point(i);
      expect(p.messages).toEqual(turnMessages(asked.text, undefined));
      expect(p.grammar).toEqual(writtenSpec(asked.written!, "schema"));
      // The world model's own reply is well formed and right.
      const right = p.strict!(writtenReply(asked.written!)!);
      expect(right.ok).toBe(true);
      expect(right.ok && p.exact(right.action)).toBe(1);
    }
    // The world's context reads another prompt: the run's data differ.
    const world = await BenchPoints.open("tomi", file, "simulation");
    expect((await world.point(0)).messages).not.toEqual((await src.point(0)).messages);
    expect(world.dataId).not.toBe(src.dataId);
    expect(src.runParams).toMatchObject({ context: "self" });
    expect(world.runParams).not.toHaveProperty("context");
  });

  it("rewards the answer, plus W times the share of the trace's lines that are the world model's", async () => {
    const src = await BenchPoints.open("tomi", storyFile(), "simulation", { context: "self" });
    const p = await src.point(0); // Where will Ella look? Trace: green_crate Ella Avery / blue_box Avery.
    const answer = "- Ella spinach now:\ngreen_crate";
    const score = (text: string, w: number) => scoreReply(p, reply(text), settings(w));
    // Right trace, right answer: 1 + W.
    expect(score(`green_crate Ella Avery\nblue_box Avery\n${answer}`, 0.5)).toMatchObject({ format: true, exact: 1, trace: 1, reward: 1.5 });
    // Half the lines right (the second names Ella too, who had left), the answer still right.
    expect(score(`green_crate Ella Avery\nblue_box Avery Ella\n${answer}`, 0.5)).toMatchObject({ exact: 1, trace: 0.5, reward: 1.25 });
    // A line too many counts against the trace (2 of 3 right); a wrong answer keeps the trace's part.
    expect(score(`green_crate Ella Avery\nblue_box Avery\nblue_box Avery\n- Ella spinach now:\nblue_box`, 0.5)).toMatchObject({ exact: 0, trace: 2 / 3, reward: 1 / 3 });
    // No trace at all: none of the world model's two lines.
    expect(score(answer, 0.5)).toMatchObject({ exact: 1, trace: 0, reward: 1 });
    // W = 0 (the default): the answer alone, the trace not even read.
    const plain = score(`green_crate Ella Avery\nblue_box Avery Ella\n${answer}`, 0);
    expect(plain.reward).toBe(1);
    expect(plain.trace).toBeUndefined();
    // Malformed (a place the story never names; no answer line): the format failure, nothing else.
    for (const bad of ["garage Ella\n- Ella spinach now:\ngreen_crate", "green_crate Ella Avery\ngreen_crate"]) {
      expect(score(bad, 0.5)).toMatchObject({ format: false, reward: -1, exact: 0 });
    }
  });

  it("refuses --context self where the policy writes no context: vanilla mode, a world without one, a world's episodes", async () => {
    const file = storyFile();
    await expect(BenchPoints.open("tomi", file, "vanilla", { context: "self" })).rejects.toThrow(WrittenContextUnavailable);
    await expect(BenchPoints.open("tomi", file, "vanilla", { context: "self" })).rejects.toThrow(/simulation mode only/);
    // The reason bench gives for the same policy (Agent.refusal), word for word.
    const why = (await writtenContextRefusal("fantom", "self-latest"))!.replace("context=self-latest: ", "");
    await expect(BenchPoints.open("fantom", file, "simulation", { context: "self" })).rejects.toThrow(`context self: ${why}`);
    await expect(BenchPoints.open("fantom", file, "simulation", { context: "self-latest" })).rejects.toThrow(`context self-latest: ${why}`);
    const base = ["train", "grpo", "--model", tempDir(), "--out", join(tempDir(), "out"), "--store", tempDir(), "--quiet"];
    expect(await main([...base, "--bench", "tomi", "--data", file, "--context", "self"])).toBe(2);
    expect(io.err).toContain("--context self: the policy writes its own context in simulation mode only (--mode simulation), not vanilla");
    expect(await main([...base, "--world", "tomi", "--context", "self"])).toBe(2);
    expect(io.err).toContain("--context self goes with --bench tomi --mode simulation");
    expect(await main([...base, "--bench", "tomi", "--data", file, "--mode", "simulation", "--reward", "exact=1,trace=0.5"])).toBe(2);
    expect(io.err).toContain("--reward trace=W weighs a written context's trace: it goes with --context self");
  });

  it("trains an untrained policy two steps with the trace reward and logs every written reply", async () => {
    const file = storyFile();
    const bench = new TomiBenchmark();
    const asked = await Promise.all(bench.load(file).map((item) => askedQuestion(bench.task(item, "simulation"), "self")));
    const m = await createFromScratch({ preset: "tiny", seed: 5, corpus: asked.flatMap((a) => [a.text, writtenReply(a.written!)!]), tokenizerKind: "word" });
    const model = tempDir("sw-grpo-self-model-");
    saveCheckpoint(model, m.model, m.files);
    const out = tempDir("sw-grpo-self-out-");
    const store = tempDir("sw-grpo-self-store-");
    const args = ["train", "grpo", "--model", model, "--bench", "tomi", "--data", file, "--mode", "simulation", "--context", "self", "--reward", "exact=1,trace=0.5",
      "--out", out, "--store", store, "--steps", "2", "--prompts", "2", "--group-size", "3", "--max-new-tokens", "64", "--lr", "1e-3", "--save-every", "100", "--seed", "3", "--quiet"];
    expect(await main(args)).toBe(0);
    expect(io.out).toMatch(/trained 2 GRPO steps on ToMi .*story\.txt \(simulation mode, the policy writes the context, 3 questions\)/);
    expect(readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const s = await RunStore.open(store);
    type Rec = { kind: string; turns: { raw: string; reward: number; info: { rewardParts: { format: boolean; exact: number; trace?: number } } }[] };
    const items = readEpisodeLog<Rec>(s.episodesPath(s.get(runId)!)).records.filter((r) => r.kind === "benchmark_item");
    expect(items).toHaveLength(12);
    for (const r of items) {
      const turn = r.turns[0]!;
      const parts = turn.info.rewardParts;
      // Sampled under the grammar: every reply is well formed, its reward the answer's plus half its trace's share.
      expect(parts.format).toBe(true);
      expect(parts.trace).toBeGreaterThanOrEqual(0);
      expect(turn.reward).toBeCloseTo(parts.exact + 0.5 * parts.trace!, 12);
      expect(turn.raw.split("\n").at(-2)).toMatch(/^- .* spinach (now|first):$/);
    }
    // Its export asks what the run asked: the story, then the trace to write; the reference is the world model's trace and answer.
    const chat = join(tempDir(), "rollouts.jsonl");
    expect(await main(["export", "--run", runId, "--store", store, "--format", "chat", "--out", chat])).toBe(0);
    const rows = readFileSync(chat, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { messages: { content: string }[] }).messages);
    expect(rows).toHaveLength(12);
    for (const [user, assistant] of rows) {
      expect(asked.map((a) => a.text)).toContain(user!.content);
      expect(asked.map((a) => writtenReply(a.written!))).toContain(assistant!.content);
    }
  });
});

/**
 * The learning recipe's data stage for both worlds: every example's reply cites the line of its
 * prompt that holds the world model's label, in the question's own order of names (Hi-ToM), so SFT
 * teaches exactly what the policy agent and GRPO accept under the citation grammar.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recipeSft, recipeSftData } from "../../measurements/learn-recipe.js";
import { citedAnswer } from "../../worlds/core/compact-context.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { askedQuestion } from "../../agents/policy/question-prompt.js";
import { writtenReply } from "../../worlds/core/written-context.js";

async function examples(world: "tomi" | "hitom", questions: number, context: "world" | "self" = "world") {
  const out = mkdtempSync(join(tmpdir(), `recipe-${world}-`));
  const data = await recipeSftData(out, { world, questions, seed: 3, modes: ["simulation"], balance: world === "tomi", context, timings: [] });
  const lines = readFileSync(data.sftFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { prompt: string; response: string });
  return { data, lines };
}

describe("the learning recipe's SFT data", () => {
  it("writes Hi-ToM questions as citations of the asked chain's line, in the question's order", async () => {
    const { data, lines } = await examples("hitom", 60);
    expect(data).toMatchObject({ questions: 60, examples: 60 });
    expect(data.trainFile.endsWith("train.json")).toBe(true);
    const bench = await loadBenchmark("hitom");
    // The replies answer the file's labels (the examples are shuffled: compared as multisets).
    const labels = (await bench.load(data.trainFile)).map((item) => String(item.answer)).sort();
    expect(lines.map((l) => citedAnswer(l.response)).sort()).toEqual(labels);
    for (const { prompt, response } of lines) {
      const question = /^Question: (.*)\n/.exec(prompt)![1]!;
      const names = [...question.matchAll(/(?:does|think|thinks) ([A-Z]\w+)/g)].map((m) => m[1]!);
      const object = /the (\w+) (?:really|is)\?$/.exec(question)![1]!;
      expect(response.split("\n")[0]).toBe(`- ${names.length ? names.join(" ") : "story"} ${object}:`);
      // Sets of three or four agents are written once, in the story's order: the reply may name them otherwise.
      if (names.length <= 2) expect(prompt).toContain(`\n${response}\n`);
    }
  });

  it("writes ToMi questions as citations of lines the prompt holds", async () => {
    const { data, lines } = await examples("tomi", 60);
    expect(data).toMatchObject({ questions: 60, examples: 60 });
    for (const { prompt, response } of lines) expect(prompt).toContain(`\n${response}\n`);
  });

  it("with --context self, asks ToMi questions as the policy agent does and teaches the world model's trace, then the answer line", async () => {
    const { data, lines } = await examples("tomi", 60, "self");
    const bench = await loadBenchmark("tomi");
    const items = await bench.load(data.trainFile);
    const byPrompt = new Map(lines.map((l) => [l.prompt, l.response]));
    for (const item of items) {
      // The very text the policy agent is asked under context=self.
      const asked = await askedQuestion(bench.task(item, "simulation"), "self");
      const response = byPrompt.get(asked.text);
      expect(response).toBe(writtenReply(asked.written!));
      expect(citedAnswer(response!)).toBe(String(item.answer));
    }
  });
});

describe("the learning recipe's base and SFT stages", () => {
  /** A stand-in for the command line: records each stage and leaves the files a finished one leaves. */
  function fakeRun(out: string) {
    const stages: string[] = [];
    const run = async (stage: string) => {
      stages.push(stage);
      const dir = join(out, stage);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, stage === "base" ? "config.json" : "model.safetensors"), "");
    };
    return { stages, run };
  }

  it("--reuse keeps them only where they were trained from the same data, steps and seed", async () => {
    const out = mkdtempSync(join(tmpdir(), "recipe-sft-reuse-"));
    const sftFile = join(out, "sft.jsonl");
    writeFileSync(sftFile, '{"prompt":"a","response":"b"}\n');
    const { stages, run } = fakeRun(out);
    const o = { sftFile, steps: 100, seed: 1, reuse: true };
    expect((await recipeSft(run, out, o)).trained).toBe(true);
    expect(stages).toEqual(["base", "sft"]);
    expect(await recipeSft(run, out, o)).toMatchObject({ trained: false });
    // The device changes where it runs, not what it trains.
    expect(await recipeSft(run, out, { ...o, device: ["--device", "cuda"] })).toMatchObject({ trained: false });
    expect(stages).toHaveLength(2);
    // Other steps, another seed, size, batch or rate, other data (as other --questions or --balance write it): another policy.
    // The recipe's own values named are the same policy.
    expect(await recipeSft(run, out, { ...o, preset: "1m", batch: 32, lr: 3e-3 })).toMatchObject({ trained: false });
    for (const other of [{ ...o, steps: 200 }, { ...o, seed: 2 }, { ...o, preset: "10m" }, { ...o, batch: 64 }, { ...o, lr: 1e-3 }]) {
      expect((await recipeSft(run, out, other)).trained).toBe(true);
      expect((await recipeSft(run, out, o)).trained).toBe(true);
    }
    writeFileSync(sftFile, '{"prompt":"a","response":"c"}\n');
    expect((await recipeSft(run, out, o)).trained).toBe(true);
    expect(await recipeSft(run, out, o)).toMatchObject({ trained: false });
    // A run interrupted in SFT leaves no record: never kept, nor is a policy from before the record.
    writeFileSync(join(out, "sft", "recipe-args.json"), "[]\n");
    expect((await recipeSft(run, out, o)).trained).toBe(true);
    expect(stages).toHaveLength(26);
    // Without --reuse it always trains.
    expect((await recipeSft(run, out, { ...o, reuse: false })).trained).toBe(true);
  });

  it("leaves no record when a stage fails, so that --reuse trains it again", async () => {
    const out = mkdtempSync(join(tmpdir(), "recipe-sft-fail-"));
    const sftFile = join(out, "sft.jsonl");
    writeFileSync(sftFile, "{}\n");
    const { run } = fakeRun(out);
    const o = { sftFile, steps: 100, seed: 1, reuse: true };
    await recipeSft(run, out, o);
    const failing = async (stage: string) => {
      await run(stage);
      if (stage === "sft") throw new Error("killed");
    };
    await expect(recipeSft(failing, out, { ...o, steps: 300 })).rejects.toThrow("killed");
    expect((await recipeSft(run, out, { ...o, steps: 300 })).trained).toBe(true);
  });
});

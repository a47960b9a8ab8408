import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { main } from "../../cli/main.js";
import { encodeExamples } from "../../trainers/sft/batches.js";
import { exampleWhere, readExamples, readExamplesFile } from "../../trainers/sft/examples.js";
import { learningRate } from "../../trainers/sft/schedule.js";
import { listCheckpoints } from "../../trainers/common/checkpoint-folders.js";
import { dataId, trainSft, type SftSettings } from "../../trainers/sft/trainer.js";
import { DataError } from "../../worlds/core/errors.js";
import { PAIRS, tempDir, tinyModel } from "../policy/fixtures.js";

const io = captureOutput();

function dataFile(): string {
  const file = join(tempDir("sw-sft-"), "pairs.jsonl");
  writeFileSync(file, PAIRS.map((p) => JSON.stringify(p)).join("\n") + "\n");
  return file;
}

const settings: SftSettings = { steps: 150, lr: 3e-3, minLr: 3e-4, warmupSteps: 10, batch: 6, gradAccum: 1, weightDecay: 0, beta1: 0.9, beta2: 0.99, eps: 1e-8, clip: 1, seed: 1, maxLen: 256 };

describe("SFT", () => {
  it("memorizes a small set to near-zero loss, and the model then answers it", async () => {
    const file = dataFile();
    const m = await tinyModel(31);
    const examples = encodeExamples(m.tokenizer, readExamples(file), 256).examples;
    const losses: number[] = [];
    const r = await trainSft({ out: tempDir(), model: m.model, files: m.files, examples, settings, dataId: dataId(file), saveEvery: 1000, keep: 1, onStep: (s) => losses.push(s.loss) });
    expect(losses[0]).toBeGreaterThan(3);
    expect(r.lastLoss).toBeLessThan(0.02);
    const { NativeCompleter } = await import("../../models/generate.js");
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const prompts = PAIRS.map((p) => m.tokenizer.applyChatTemplate([{ role: "user", content: p.prompt }], { addGenerationPrompt: true }));
    expect((await c.complete(prompts, { maxNewTokens: 12, temperature: 0 })).map((x) => x.text)).toEqual(PAIRS.map((p) => p.response));
  });

  it("puts the loss on the response tokens only", async () => {
    const m = await tinyModel(32);
    const [ex] = encodeExamples(m.tokenizer, [{ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Q?" }, { role: "assistant", content: "yes" }], line: 1 }], 256).examples;
    const trained = Array.from(ex!.targets).filter((t) => t >= 0);
    expect(m.tokenizer.decode(trained)).toBe("yes<|im_end|>\n");
  });

  it("--prompt-loss W: every next token trained, the prompt's at weight W, the response's at 1", async () => {
    const m = await tinyModel(32);
    const messages = [{ role: "user" as const, content: "Q?" }, { role: "assistant" as const, content: "yes" }];
    const [only] = encodeExamples(m.tokenizer, [{ messages, line: 1 }], 256).examples;
    const [ex] = encodeExamples(m.tokenizer, [{ messages, line: 1 }], 256, { promptLoss: 0.25 }).examples;
    expect(Array.from(ex!.targets).every((t) => t >= 0)).toBe(true);
    const response = Array.from(ex!.weights).filter((w) => w === 1).length;
    expect(response).toBe(only!.trained);
    expect(ex!.trained).toBeCloseTo(response + 0.25 * (ex!.tokens.length - response), 5);
    // The response's targets are the same tokens either way; the prompt's predict the next prompt token.
    const ids = Array.from(ex!.tokens);
    for (let i = 0; i + 1 < ids.length; i++) expect(ex!.targets[i]).toBe(ids[i + 1]);
  });

  it("same seed, same run: identical losses and weights", async () => {
    const file = dataFile();
    const run = async () => {
      const m = await tinyModel(33);
      const examples = encodeExamples(m.tokenizer, readExamples(file), 256).examples;
      const losses: number[] = [];
      await trainSft({ out: tempDir(), model: m.model, files: m.files, examples, settings: { ...settings, steps: 20, batch: 4, gradAccum: 2 }, dataId: "x", saveEvery: 1000, keep: 1, onStep: (s) => losses.push(s.loss) });
      return { losses, params: Float32Array.from(m.model.params()) };
    };
    const a = await run();
    const b = await run();
    expect(b.losses).toEqual(a.losses);
    expect(b.params).toEqual(a.params);
  });

  it("resumes from a checkpoint exactly as the uninterrupted run continues", async () => {
    const file = dataFile();
    const whole = join(tempDir(), "whole");
    const args = ["train", "sft", "--init", "tiny", "--data", file, "--steps", "30", "--lr", "2e-3", "--batch", "4", "--grad-accum", "2", "--save-every", "10", "--keep", "5", "--seed", "4", "--quiet"];
    expect(await main([...args, "--out", whole]), io.err).toBe(0);
    expect(listCheckpoints(whole).map((c) => c.step)).toEqual([10, 20, 30]);
    // Another output folder holding only the step-10 checkpoint: --resume auto continues from it.
    const resumed = join(tempDir(), "resumed");
    cpSync(join(whole, "checkpoint-10"), join(resumed, "checkpoint-10"), { recursive: true });
    expect(await main([...args, "--out", resumed, "--resume", "auto"]), io.err).toBe(0);
    expect(io.err).toContain("resuming from");
    expect(readFileSync(join(resumed, "model.safetensors"))).toEqual(readFileSync(join(whole, "model.safetensors")));
    const tail = (dir: string) => readFileSync(join(dir, "train_log.jsonl"), "utf8").trim().split("\n").slice(-20).map((l) => JSON.parse(l).loss);
    expect(tail(resumed)).toEqual(tail(whole));
    // Optimizer state went along: the moments match too.
    expect(readFileSync(join(resumed, "checkpoint-30", "optimizer.safetensors"))).toEqual(readFileSync(join(whole, "checkpoint-30", "optimizer.safetensors")));
    // Activation checkpointing changes memory, not results: a run may switch it on when it resumes
    // (on a smaller GPU, say), and still ends with the same bytes.
    const recomputed = join(tempDir(), "recomputed");
    cpSync(join(whole, "checkpoint-10"), join(recomputed, "checkpoint-10"), { recursive: true });
    expect(await main([...args, "--out", recomputed, "--resume", "auto", "--activation-checkpointing"]), io.err).toBe(0);
    expect(io.err).toContain("activations recomputed layer by layer");
    expect(readFileSync(join(recomputed, "model.safetensors"))).toEqual(readFileSync(join(whole, "model.safetensors")));
    expect(tail(recomputed)).toEqual(tail(whole));
    // Other settings are refused.
    expect(await main([...args.map((a) => (a === "2e-3" ? "1e-3" : a)), "--out", resumed, "--resume", join(whole, "checkpoint-20")])).toBe(2);
    expect(io.err).toMatch(/was trained with lr=0\.002, not 0\.001/);
  });

  it("saves a checkpoint when interrupted", async () => {
    const file = dataFile();
    const m = await tinyModel(34);
    const examples = encodeExamples(m.tokenizer, readExamples(file), 256).examples;
    const out = tempDir();
    const controller = new AbortController();
    const r = await trainSft({ out, model: m.model, files: m.files, examples, settings: { ...settings, steps: 50 }, dataId: "x", saveEvery: 1000, keep: 2, signal: controller.signal, onStep: (s) => s.step === 7 && controller.abort() });
    expect(r).toMatchObject({ steps: 7, interrupted: true });
    expect(listCheckpoints(out).map((c) => c.step)).toEqual([7]);
    expect(loadCheckpoint(join(out, "checkpoint-7")).model.numParams).toBe(m.model.numParams);
    expect(existsSync(join(out, "model.safetensors"))).toBe(false);
  });

  it("reads prompt/response pairs, conversations and episode logs, and names the line of bad input", async () => {
    const dir = tempDir();
    const file = join(dir, "mixed.jsonl");
    writeFileSync(
      file,
      [
        JSON.stringify({ prompt: "p", response: "r", system: "s" }),
        "",
        JSON.stringify({ messages: [{ role: "user", content: "u" }, { role: "assistant", content: "a" }] }),
        JSON.stringify({ kind: "benchmark_item", turns: [{ observation: "story", action: { answer: "box" }, reward: 1, source: "agent" }, { observation: "late", action: { answer: "" }, source: "fallback" }] }),
      ].join("\n"),
    );
    const ex = readExamples(file);
    expect(ex.map((e) => e.line)).toEqual([1, 3, 4]);
    expect(ex[2]!.messages).toEqual([{ role: "user", content: "story" }, { role: "assistant", content: "box" }]);
    expect(readExamples(file, { minReward: 2 })).toHaveLength(2);
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, `${JSON.stringify({ prompt: "p", response: "r" })}\n{"prompt": "no response"}\n`);
    expect(() => readExamples(bad)).toThrow(DataError);
    expect(() => readExamples(bad)).toThrow(/bad\.jsonl:2: expected \{prompt, response\}/);
    expect(await main(["train", "sft", "--init", "tiny", "--data", bad, "--out", join(dir, "o"), "--quiet"])).toBe(2);
    expect(io.err).toMatch(/bad input: .*bad\.jsonl:2/);
    expect(await main(["train", "sft", "--data", file, "--out", join(dir, "o"), "--quiet"])).toBe(2);
    expect(io.err).toContain("give exactly one of --model DIR and --init PRESET");
  });

  it("an example longer than the model's context is an error naming the file, the line and the lengths; --max-len leaves it out", async () => {
    const dir = tempDir();
    const file = join(dir, "long.jsonl");
    const long = { prompt: Array.from({ length: 400 }, (_, k) => `word${k % 7}`).join(" "), response: "long" };
    writeFileSync(file, [...PAIRS.slice(0, 3), long, PAIRS[3], long].map((p) => JSON.stringify(p)).join("\n") + "\n");
    // The tiny preset's context is 512 tokens, --max-len's default 1024: the pass used to fail with the engine's bare "sequence length exceeds".
    const args = ["train", "sft", "--init", "tiny", "--data", file, "--steps", "2", "--batch", "2", "--quiet"];
    expect(await main([...args, "--out", join(dir, "a")])).toBe(2);
    expect(io.err).toMatch(/bad input: .*long\.jsonl:4: example of \d{3} tokens \(and 1 more example\(s\) of the file\), longer than the model's context \(max_position_embeddings 512\); pass --max-len 512/);
    expect(existsSync(join(dir, "a", "model.safetensors"))).toBe(false);
    expect(await main([...args, "--max-len", "512", "--out", join(dir, "b")]), io.err).toBe(0);
    expect(io.err).toContain("note: 2 example(s) longer than --max-len 512 left out");
    expect(io.out).toContain("trained 2 steps on 4 examples");
    expect(exampleWhere("rows.parquet", 3)).toEqual({ field: "row 2" });
  });

  it("reads Parquet with prompt and response columns (VERL's SFT layout; prompts as text or messages)", async () => {
    const { parquetWriteFile } = await import("hyparquet-writer");
    const file = join(tempDir(), "sft.parquet");
    parquetWriteFile({
      filename: file,
      columnData: [
        { name: "prompt", data: ["Where is the ball?", "Who left?"], type: "STRING" },
        { name: "response", data: ["box", "Ella"], type: "STRING" },
      ],
    });
    const ex = await readExamplesFile(file);
    expect(ex.map((e) => e.messages)).toEqual([
      [{ role: "user", content: "Where is the ball?" }, { role: "assistant", content: "box" }],
      [{ role: "user", content: "Who left?" }, { role: "assistant", content: "Ella" }],
    ]);
    const bad = join(tempDir(), "bad.parquet");
    parquetWriteFile({ filename: bad, columnData: [{ name: "prompt", data: ["p"], type: "STRING" }, { name: "answer", data: ["a"], type: "STRING" }] });
    await expect(readExamplesFile(bad)).rejects.toThrow(/bad\.parquet/);
  });

  it("schedules the learning rate: linear warmup, then cosine down to the minimum", () => {
    const s = { lr: 1, minLr: 0.1, warmupSteps: 4, totalSteps: 104 };
    expect([0, 1, 2, 3].map((k) => learningRate(s, k))).toEqual([0.25, 0.5, 0.75, 1]);
    expect(learningRate(s, 4)).toBeCloseTo(1, 12);
    expect(learningRate(s, 54)).toBeCloseTo(0.55, 12);
    expect(learningRate(s, 104)).toBeCloseTo(0.1, 12);
  });
});

/**
 * The offline judge's free text by embedding similarity (`bench usersim --embedder SPEC`): the
 * response (and a state outside the vocabulary's words) scored by the cosine of sentence
 * embeddings from FANToM's embedders, here a tiny encoder written by the test (a token table
 * behind a Gather, mean-pooled), so each score is checked by hand; the report names the scorer.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { DIM, table, writeModelFolder } from "../onnx-model-folder.js";
import { tempDir } from "../policy/fixtures.js";
import { main } from "../../cli/main.js";
import { BenchmarkOptionError } from "../../worlds/question/benchmark.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { world } from "../../worlds/usersim/index.js";
import { simulationAnswer, type UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { embeddingSimilarity } from "../../worlds/usersim/embedding-similarity.js";
import { judgeText } from "../../worlds/usersim/judge.js";
import { rougeL } from "../../worlds/core/rewards/rouge-l.js";

const io = captureOutput();

const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "i", "like", "bike", "lanes", "hate", "cars", "."];
const ROWS = table("usersim-embedder", VOCAB);
const DIR = writeModelFolder(ROWS, VOCAB);

/** The encoder's sentence vector by hand: the mean of its tokens' rows, [CLS] and [SEP] included, unknown words [UNK]. */
function sentence(words: string[]): number[] {
  const ids = [2, ...words.map((w) => (VOCAB.includes(w) ? VOCAB.indexOf(w) : 1)), 3];
  return Array.from({ length: DIM }, (_, d) => ids.reduce((s, t) => s + ROWS[t]![d]!, 0) / ids.length);
}
function cos(a: number[], b: number[]): number {
  const dot = a.reduce((s, x, i) => s + x * b[i]!, 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

function data(): string {
  const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-embed-")), "g.jsonl");
  writeFileSync(file, generateUsersim(8, 5).jsonl);
  return file;
}

describe("embedding similarity of free text", () => {
  it("is the cosine of the mean-pooled sentence vectors, 0 when negative", async () => {
    const s = await embeddingSimilarity(`onnx:${DIR}`);
    expect(s.id).toBe(`cosine of onnx:${DIR} sentence embeddings`);
    const expected = cos(sentence(["i", "like", "bike", "lanes"]), sentence(["i", "hate", "cars", "."]));
    expect(s.score("I like bike lanes", "I hate cars.")).toBeCloseTo(Math.max(0, expected), 5);
    expect(s.score("bike zebra", "lanes")).toBeCloseTo(Math.max(0, cos(sentence(["bike", "zebra"]), sentence(["lanes"]))), 5);
    expect(s.score("I like bike lanes", "I like bike lanes")).toBeCloseTo(1, 6);
  });

  it("scores the response in bench usersim, the structured states as before, and the title names it", async () => {
    const b = (await world.benchmark!.create({ embedder: `onnx:${DIR}` })) as UsersimBenchmark;
    expect(b.title).toBe(`User simulation (free text: cosine of onnx:${DIR} sentence embeddings)`);
    const item = (await b.load(data()))[0]!;
    const truth = simulationAnswer(b.task(item, "vanilla"))!;
    const reply = truth.replace(/<response>\n[\s\S]*\n<\/response>/, "<response>\nI like bike lanes.\n</response>");
    const v = b.judge(item, reply);
    const detail = v.detail as unknown as ReturnType<typeof judgeText>;
    const s = await embeddingSimilarity(`onnx:${DIR}`);
    expect(detail.response).toBeCloseTo(s.score("I like bike lanes.", item.record.reply), 10);
    expect(detail.response).not.toBeCloseTo(rougeL("I like bike lanes.", item.record.reply).fmeasure, 3);
    for (const st of Object.values(detail.states)) expect(st).toEqual({ score: 1, method: "structured" });
    // Without --embedder: ROUGE-L, as before.
    const plain = (await world.benchmark!.create({})) as UsersimBenchmark;
    expect(plain.title).toBe("User simulation");
    expect((plain.judge(item, reply).detail as unknown as ReturnType<typeof judgeText>).response).toBeCloseTo(rougeL("I like bike lanes.", item.record.reply).fmeasure, 10);
  });

  it("refuses a folder without a model, or an LLM judge beside it, before a run exists", async () => {
    const empty = mkdtempSync(join(tmpdir(), "sw-usersim-embed-empty-"));
    await expect(world.benchmark!.create({ embedder: `onnx:${empty}` })).rejects.toThrow(BenchmarkOptionError);
    await expect(world.benchmark!.create({ embedder: `onnx:${empty}` })).rejects.toThrow(`--embedder: no model.onnx or onnx/model.onnx in ${empty}`);
    // With an LLM judge the model scores the free text: an embedder would go unused.
    const judgeModel = { id: "llm:judge@http://127.0.0.1:1", ask: () => Promise.reject(new Error("not asked")) };
    await expect(world.benchmark!.create({ embedder: "lexical", judgeModel })).rejects.toThrow("--embedder: scores the offline judge's free text; with --judge the model scores it");
  });

  it("bench usersim --embedder onnx:DIR: the report's title names the scorer", async () => {
    const json = join(tempDir("sw-usersim-embed-out-"), "r.json");
    const args = ["bench", "usersim", "--data", data(), "--agent", "simulation", "--embedder", `onnx:${DIR}`, "--store", tempDir("sw-usersim-embed-store-"), "--json", json, "--quiet"];
    expect(await main(args), io.err).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as { title: string; accuracy: number; metrics: Record<string, number> };
    expect(report.title).toContain(`free text: cosine of onnx:${DIR} sentence embeddings`);
    expect(report.metrics.response).toBeGreaterThan(0);
  });
});

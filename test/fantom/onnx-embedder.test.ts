/**
 * The ONNX embedder on a model written here: a token-embedding table behind a Gather (the model's
 * "last_hidden_state" is each token's row), with a WordPiece tokenizer. The sentence vector must
 * be the mean of the rows of the text's tokens, [CLS] and [SEP] included, which is what mean
 * pooling over a real encoder's states computes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DIM, table, VOCAB, writeModelFolder } from "../onnx-model-folder.js";
import { createEmbedder } from "../../worlds/core/embedder-spec.js";
import { FantomBenchmark } from "../../worlds/fantom/benchmark.js";
import { generateFantom } from "../../worlds/fantom/generator.js";

describe("ONNX sentence embedder", () => {
  it("mean-pools the model's token states, through the real tokenizer and onnxruntime", async () => {
    const rows = table();
    const dir = writeModelFolder(rows);
    const embedder = await createEmbedder(`onnx:${dir}`);
    expect(embedder.id).toBe(`onnx:${dir}`);
    const [v] = embedder.embed(["David does not know."]);
    const tokens = ["[CLS]", "david", "does", "not", "know", ".", "[SEP]"].map((t) => VOCAB.indexOf(t));
    const expected = Array.from({ length: DIM }, (_, d) => tokens.reduce((s, t) => s + rows[t]![d]!, 0) / tokens.length);
    expect(Array.from(v!).map((x) => Math.round(x * 1e5) / 1e5)).toEqual(expected.map((x) => Math.round(x * 1e5) / 1e5));
    // Unknown words go through [UNK], as the tokenizer maps them.
    const [u] = embedder.embed(["zebra"]);
    const unk = [2, 1, 3];
    expect(u![0]).toBeCloseTo(unk.reduce((s, t) => s + rows[t]![0]!, 0) / 3, 5);
  });

  it("judges free-form beliefs in a benchmark run, and the report names it", async () => {
    const dir = writeModelFolder(table());
    const bench = new FantomBenchmark({ context: "short", embedder: `onnx:${dir}` });
    const file = join(mkdtempSync(join(tmpdir(), "fantom-onnx-gen-")), "g.json");
    writeFileSync(file, generateFantom(40, 8).json);
    const items = bench.load(file);
    await bench.ready();
    expect(bench.title).toContain(`onnx:${dir}`);
    const belief = items.find((i) => i.q.questionType === "tom:belief:inaccessible")!;
    const v = bench.judge(belief, String(belief.q.correct));
    expect(v.correct).toBe(true);
    expect(bench.judge(belief, String(belief.q.wrong)).correct).toBe(false);
  });

  it("says what is missing in a model folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fantom-onnx-empty-"));
    await expect(createEmbedder(`onnx:${dir}`)).rejects.toThrow(`no model.onnx or onnx/model.onnx in ${dir}`);
    await expect(createEmbedder("word2vec")).rejects.toThrow('unknown embedder "word2vec"');
  });
});

/**
 * The ONNX embedder on a model written here: a token-embedding table behind a Gather (the model's
 * "last_hidden_state" is each token's row), with a WordPiece tokenizer. The sentence vector must
 * be the mean of the rows of the text's tokens, [CLS] and [SEP] included, which is what mean
 * pooling over a real encoder's states computes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";
import { createEmbedder } from "../../worlds/fantom/embedder-spec.js";
import { FantomBenchmark } from "../../worlds/fantom/benchmark.js";
import { generateFantom } from "../../worlds/fantom/generator.js";

const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "david", "does", "not", "know", "believes", "that", "linda", "'", "s", "dog", "is", "a", "beagle", "what", "breed", "."];
const DIM = 8;

const onnx = protobuf.Root.fromJSON({
  nested: {
    ModelProto: { fields: { irVersion: { type: "int64", id: 1 }, producerName: { type: "string", id: 2 }, graph: { type: "GraphProto", id: 7 }, opsetImport: { rule: "repeated", type: "OperatorSetIdProto", id: 8 } } },
    OperatorSetIdProto: { fields: { domain: { type: "string", id: 1 }, version: { type: "int64", id: 2 } } },
    GraphProto: {
      fields: {
        node: { rule: "repeated", type: "NodeProto", id: 1 },
        name: { type: "string", id: 2 },
        initializer: { rule: "repeated", type: "TensorProto", id: 5 },
        input: { rule: "repeated", type: "ValueInfoProto", id: 11 },
        output: { rule: "repeated", type: "ValueInfoProto", id: 12 },
      },
    },
    NodeProto: { fields: { input: { rule: "repeated", type: "string", id: 1 }, output: { rule: "repeated", type: "string", id: 2 }, name: { type: "string", id: 3 }, opType: { type: "string", id: 4 } } },
    TensorProto: {
      fields: {
        dims: { rule: "repeated", type: "int64", id: 1 },
        dataType: { type: "int32", id: 2 },
        floatData: { rule: "repeated", type: "float", id: 4, options: { packed: true } },
        name: { type: "string", id: 8 },
      },
    },
    ValueInfoProto: { fields: { name: { type: "string", id: 1 }, type: { type: "TypeProto", id: 2 } } },
    TypeProto: { fields: { tensorType: { type: "TypeProtoTensor", id: 1 } } },
    TypeProtoTensor: { fields: { elemType: { type: "int32", id: 1 }, shape: { type: "TensorShapeProto", id: 2 } } },
    TensorShapeProto: { fields: { dim: { rule: "repeated", type: "Dimension", id: 1 } } },
    Dimension: { fields: { dimValue: { type: "int64", id: 1 }, dimParam: { type: "string", id: 2 } } },
  },
});

function table(): number[][] {
  const rng = Rng.seeded("onnx-embedder-test");
  return VOCAB.map(() => Array.from({ length: DIM }, () => Math.round((rng.next() * 2 - 1) * 1000) / 1000));
}

function writeModelFolder(rows: number[][]): string {
  const dir = mkdtempSync(join(tmpdir(), "fantom-onnx-"));
  const tensor = (name: string, elemType: number, dims: (number | string)[]) => ({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) } } },
  });
  const Model = onnx.lookupType("ModelProto");
  const model = Model.create({
    irVersion: 8,
    producerName: "socialworld-test",
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: "embed",
      node: [{ opType: "Gather", name: "lookup", input: ["E", "input_ids"], output: ["last_hidden_state"] }],
      initializer: [{ name: "E", dataType: 1, dims: [VOCAB.length, DIM], floatData: rows.flat() }],
      input: [tensor("input_ids", 7, ["batch", "seq"]), tensor("attention_mask", 7, ["batch", "seq"])],
      output: [tensor("last_hidden_state", 1, ["batch", "seq", DIM])],
    },
  });
  writeFileSync(join(dir, "model.onnx"), Model.encode(model).finish());
  const special = (id: number, content: string) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  writeFileSync(
    join(dir, "tokenizer.json"),
    JSON.stringify({
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: VOCAB.slice(0, 4).map((t, i) => special(i, t)),
      normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: "BertPreTokenizer" },
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
        pair: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } }],
        special_tokens: { "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] }, "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] } },
      },
      decoder: { type: "WordPiece", prefix: "##", cleanup: true },
      model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])) },
    }),
  );
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ do_lower_case: true, model_max_length: 512, cls_token: "[CLS]", sep_token: "[SEP]", pad_token: "[PAD]", unk_token: "[UNK]" }));
  return dir;
}

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

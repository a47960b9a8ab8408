/**
 * A tiny encoder folder for ONNX tests, written here: a token-embedding table behind a Gather (the
 * model's "last_hidden_state" is each token's row) and a WordPiece tokenizer with [CLS] and [SEP].
 * What the model computes is known exactly, so judges built on it can be checked by hand.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import protobuf from "protobufjs";
import { Rng } from "../worlds/core/rng.js";

export const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "david", "does", "not", "know", "believes", "that", "linda", "'", "s", "dog", "is", "a", "beagle", "what", "breed", "."];
export const DIM = 8;

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

/** The embedding table: one row of DIM values per token of `vocab` (its first four: [PAD], [UNK], [CLS], [SEP]). */
export function table(seed = "onnx-embedder-test", vocab: readonly string[] = VOCAB): number[][] {
  const rng = Rng.seeded(seed);
  return vocab.map(() => Array.from({ length: DIM }, () => Math.round((rng.next() * 2 - 1) * 1000) / 1000));
}

/** Writes model.onnx, tokenizer.json and tokenizer_config.json for `rows` (VOCAB.length x DIM) into a new folder. */
export function writeModelFolder(rows: number[][], vocab: readonly string[] = VOCAB): string {
  const dir = mkdtempSync(join(tmpdir(), "onnx-encoder-"));
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
      initializer: [{ name: "E", dataType: 1, dims: [vocab.length, DIM], floatData: rows.flat() }],
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
      added_tokens: vocab.slice(0, 4).map((t, i) => special(i, t)),
      normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: "BertPreTokenizer" },
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
        pair: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } }],
        special_tokens: { "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] }, "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] } },
      },
      decoder: { type: "WordPiece", prefix: "##", cleanup: true },
      model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: Object.fromEntries(vocab.map((t, i) => [t, i])) },
    }),
  );
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ do_lower_case: true, model_max_length: 512, cls_token: "[CLS]", sep_token: "[SEP]", pad_token: "[PAD]", unk_token: "[UNK]" }));
  return dir;
}

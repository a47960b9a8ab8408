/**
 * The engine's forward pass against a reference nobody here wrote: the same weights in a graph of
 * ONNX's own opset-23 operators (RMSNormalization, RotaryEmbedding with the non-interleaved
 * rotate-half layout, Attention with grouped-query heads and a causal mask), executed by
 * onnxruntime. These are the operators' definitions in the ONNX standard, so agreement pins down
 * the conventions a Hugging Face Qwen2 checkpoint depends on: where RMSNorm's epsilon goes, which
 * half of a head rotates, which query heads share a key/value head, the score scale.
 */
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { GraphBuilder } from "../../models/onnx/graph.js";
import { DataType, ModelProto } from "../../models/onnx/proto.js";
import { PolicyModel } from "../../models/model.js";
import { qwen2Config } from "../../models/config.js";
import type { EngineConfig } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";

function referenceGraph(model: PolicyModel, seq: number): Uint8Array {
  const e = model.engine;
  const { hiddenSize: C, numHeads: H, numKvHeads: KV, headDim: hd, vocabSize: V } = e;
  const p = model.params();
  const t = new Map(model.tensors().map((x) => [x.name, x]));
  const data = (name: string) => {
    const x = t.get(name)!;
    return Float32Array.from(p.subarray(x.offset, x.offset + x.size));
  };
  const transposed = (name: string) => {
    const x = t.get(name)!;
    const [out, inn] = x.shape as [number, number];
    const w = data(name);
    const d = new Float32Array(out * inn);
    for (let r = 0; r < out; r++) for (let c = 0; c < inn; c++) d[c * out + r] = w[r * inn + c]!;
    return { d, dims: [inn, out] };
  };
  const g = new GraphBuilder();
  const W = (name: string) => {
    const x = transposed(name);
    return g.weight(`${name}.T`, x.d, x.dims);
  };
  const norm = (x: string, name: string) => g.op1("RMSNormalization", [x, g.weight(name, data(name), [C])], { axis: -1, epsilon: { float: e.rmsNormEps } });
  // cos/sin of position * theta^(-2i / head_dim), straight from the rotary embedding's definition.
  const half = hd / 2;
  const cos = new Float32Array(seq * half);
  const sin = new Float32Array(seq * half);
  for (let pos = 0; pos < seq; pos++)
    for (let i = 0; i < half; i++) {
      const a = pos * Math.pow(e.ropeTheta, (-2 * i) / hd);
      cos[pos * half + i] = Math.cos(a);
      sin[pos * half + i] = Math.sin(a);
    }
  const cosC = g.weight("cos", cos, [seq, half]);
  const sinC = g.weight("sin", sin, [seq, half]);
  let x = g.op1("Gather", [g.weight("embed", data("model.embed_tokens.weight"), [V, C]), "input_ids"], { axis: 0 });
  for (let l = 0; l < e.numLayers; l++) {
    const pre = `model.layers.${l}.`;
    const h = norm(x, `${pre}input_layernorm.weight`);
    const proj = (n: string) => g.op1("Add", [g.op1("MatMul", [h, W(`${pre}self_attn.${n}_proj.weight`)]), g.weight(`${pre}${n}.b`, data(`${pre}self_attn.${n}_proj.bias`), [t.get(`${pre}self_attn.${n}_proj.bias`)!.size])]);
    const q = g.op1("RotaryEmbedding", [proj("q"), cosC, sinC, "position_ids"], { num_heads: H, interleaved: 0 });
    const k = g.op1("RotaryEmbedding", [proj("k"), cosC, sinC, "position_ids"], { num_heads: KV, interleaved: 0 });
    const att = g.op("Attention", [q, k, proj("v")], { is_causal: 1, q_num_heads: H, kv_num_heads: KV }, 1)[0]!;
    x = g.op1("Add", [x, g.op1("MatMul", [att, W(`${pre}self_attn.o_proj.weight`)])]);
    const h2 = norm(x, `${pre}post_attention_layernorm.weight`);
    const gate = g.op1("MatMul", [h2, W(`${pre}mlp.gate_proj.weight`)]);
    const up = g.op1("MatMul", [h2, W(`${pre}mlp.up_proj.weight`)]);
    x = g.op1("Add", [x, g.op1("MatMul", [g.op1("Mul", [g.op1("Mul", [gate, g.op1("Sigmoid", [gate])]), up]), W(`${pre}mlp.down_proj.weight`)])]);
  }
  g.op1("MatMul", [norm(x, "model.norm.weight"), W(e.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight")], {}, "logits");
  const value = (name: string, type: number, dims: number[]) => ({ name, type: { tensor_type: { elem_type: type, shape: { dim: dims.map((d) => ({ dim_value: d })) } } } });
  return ModelProto.encode(
    ModelProto.create({
      ir_version: 10,
      opset_import: [{ domain: "", version: 23 }],
      graph: {
        name: "reference",
        node: g.nodes,
        initializer: g.initializers.map((i) => ({ name: i.name, dims: [...i.dims], data_type: i.dataType, raw_data: i.bytes })),
        input: [value("input_ids", DataType.INT64, [1, seq]), value("position_ids", DataType.INT64, [1, seq])],
        output: [value("logits", DataType.FLOAT, [1, seq, V])],
      },
    }),
  ).finish();
}

describe("the forward pass against ONNX's standard operators", () => {
  const cases: [string, Partial<EngineConfig>][] = [
    ["two query heads per key/value head, tied embeddings", {}],
    ["four query heads per key/value head, untied LM head, theta 1e6", { numKvHeads: 1, tieWordEmbeddings: false, ropeTheta: 1e6 }],
  ];
  for (const [name, over] of cases) {
    it(name, async () => {
      const engine: EngineConfig = { vocabSize: 97, hiddenSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 16, intermediateSize: 96, maxPositionEmbeddings: 64, rmsNormEps: 1e-5, ropeTheta: 10000, tieWordEmbeddings: true, attentionBias: true, ...over };
      const model = new PolicyModel(qwen2Config(engine, { eos: 0 }));
      // Large random weights: attention far from uniform, so positions and heads matter.
      const rng = Rng.seeded(name);
      const params = model.params();
      for (let i = 0; i < params.length; i++) params[i] = (rng.next() - 0.5) * 0.6;
      for (const t of model.tensors()) if (t.name.endsWith("norm.weight")) for (let i = t.offset; i < t.offset + t.size; i++) params[i] = 0.5 + rng.next();
      const ids = Array.from({ length: 24 }, () => rng.int(engine.vocabSize));
      const session = await ort.InferenceSession.create(referenceGraph(model, ids.length));
      const out = await session.run({
        input_ids: new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
        position_ids: new ort.Tensor("int64", BigInt64Array.from(ids.map((_, i) => BigInt(i))), [1, ids.length]),
      });
      const want = out.logits!.data as Float32Array;
      const got = model.logits(ids);
      let scale = 0;
      let diff = 0;
      for (let i = 0; i < want.length; i++) {
        scale = Math.max(scale, Math.abs(want[i]!));
        diff = Math.max(diff, Math.abs(want[i]! - got[i]!));
      }
      expect(scale).toBeGreaterThan(1);
      expect(diff / scale).toBeLessThan(1e-4);
    });
  }
});

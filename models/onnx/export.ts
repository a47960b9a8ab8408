/**
 * Exports a checkpoint to DIR/onnx/model.onnx in the transformers.js / Optimum decoder layout:
 * inputs input_ids, attention_mask, position_ids and past_key_values.{i}.key/.value
 * ([batch, kv_heads, past_len, head_dim]); outputs logits and present.{i}.key/.value. Standard
 * ONNX operators only (opset 17), so any ONNX runtime runs it. Rotary tables are computed as the
 * engine computes them; padding and the causal mask come from attention_mask.
 */
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { replaceFile, writeFileAtomic } from "../../store/write-atomic.js";
import type { PolicyModel } from "../model.js";
import { GraphBuilder } from "./graph.js";
import { DataType, ModelProto } from "./proto.js";

export const OPSET = 17;
// Above this many bytes of weights, tensors go to model.onnx_data (protobuf stops at 2 GiB).
const EXTERNAL_DATA_BYTES = 1 << 30;

export interface ExportResult {
  readonly path: string;
  readonly bytes: number;
  /** model.onnx_data, when the weights are stored beside the graph. */
  readonly externalData?: string;
}

/** Rotary cos/sin tables [positions, head_dim / 2] in float32, as the engine builds them. */
export function ropeTables(theta: number, headDim: number, positions: number): { cos: Float32Array; sin: Float32Array } {
  const half = headDim / 2;
  const cos = new Float32Array(positions * half);
  const sin = new Float32Array(positions * half);
  const f = Math.fround;
  for (let i = 0; i < half; i++) {
    const inv = f(1 / f(Math.pow(f(theta), f(f(2 * i) / f(headDim)))));
    for (let p = 0; p < positions; p++) {
      const angle = f(f(p) * inv);
      cos[p * half + i] = Math.cos(angle);
      sin[p * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

export function buildGraph(model: PolicyModel): GraphBuilder {
  const e = model.engine;
  const { hiddenSize: C, numHeads: H, numKvHeads: KV, headDim: hd, numLayers: L, vocabSize: V } = e;
  const group = H / KV;
  const params = model.readParams();
  const byName = new Map(model.tensors().map((t) => [t.name, t]));
  const tensor = (name: string): Float32Array => {
    const t = byName.get(name);
    if (!t) throw new Error(`the model has no tensor ${name}`);
    const v = params.subarray(t.offset, t.offset + t.size);
    return v instanceof Float32Array ? Float32Array.from(v) : Float32Array.from(v);
  };
  // Linear weights are [out, in]; MatMul wants x @ W^T, so initializers hold W^T.
  const transposed = (name: string): { data: Float32Array; dims: number[] } => {
    const t = byName.get(name)!;
    const [out, inn] = t.shape as [number, number];
    const w = tensor(name);
    const d = new Float32Array(out * inn);
    for (let r = 0; r < out; r++) for (let c = 0; c < inn; c++) d[c * out + r] = w[r * inn + c]!;
    return { data: d, dims: [inn, out] };
  };

  const g = new GraphBuilder();
  const I = (v: number[]) => g.int64(v);
  const scalarI = (v: number) => g.int64([v], []);
  const scalarF = (v: number) => g.float([v], []);
  const linear = (x: string, name: string, bias?: string): string => {
    const w = transposed(name);
    const y = g.op1("MatMul", [x, g.weight(name, w.data, w.dims)]);
    return bias ? g.op1("Add", [y, g.weight(bias, tensor(bias), [byName.get(bias)!.size])]) : y;
  };
  const eps = scalarF(e.rmsNormEps);
  const rmsnorm = (x: string, name: string): string => {
    const ms = g.op1("ReduceMean", [g.op1("Mul", [x, x])], { axes: [-1], keepdims: 1 });
    const r = g.op1("Reciprocal", [g.op1("Sqrt", [g.op1("Add", [ms, eps])])]);
    return g.op1("Mul", [g.op1("Mul", [x, r]), g.weight(name, tensor(name), [C])]);
  };

  // Mask [batch, 1, seq, total]: key j is visible to query i when j <= past + i and unpadded.
  const S = g.op1("Gather", [g.op1("Shape", ["input_ids"]), scalarI(1)], { axis: 0 });
  const T = g.op1("Gather", [g.op1("Shape", ["attention_mask"]), scalarI(1)], { axis: 0 });
  const past = g.op1("Sub", [T, S]);
  const qpos = g.op1("Range", [past, T, scalarI(1)]);
  const kpos = g.op1("Range", [scalarI(0), T, scalarI(1)]);
  const causal = g.op1("LessOrEqual", [g.op1("Unsqueeze", [kpos, I([0])]), g.op1("Unsqueeze", [qpos, I([1])])]);
  const unpadded = g.op1("Cast", [g.op1("Unsqueeze", ["attention_mask", I([1, 2])])], { to: DataType.BOOL });
  // The most negative float, not -inf, as transformers does: a fully masked (padding) row stays finite.
  const maskBias = g.op1("Where", [g.op1("And", [causal, unpadded]), scalarF(0), scalarF(-3.4028234663852886e38)]);

  const rope = ropeTables(e.ropeTheta, hd, e.maxPositionEmbeddings);
  const angles = (table: Float32Array, name: string) => {
    const half = g.op1("Gather", [g.weight(name, table, [e.maxPositionEmbeddings, hd / 2]), "position_ids"], { axis: 0 });
    return g.op1("Unsqueeze", [g.op1("Concat", [half, half], { axis: -1 }), I([1])]);
  };
  const cos = angles(rope.cos, "rope.cos");
  const sin = angles(rope.sin, "rope.sin");
  const rotate = (x: string): string => {
    const [a, b] = g.op("Split", [x], { axis: -1 }, 2) as [string, string];
    const rotated = g.op1("Concat", [g.op1("Neg", [b]), a], { axis: -1 });
    return g.op1("Add", [g.op1("Mul", [x, cos]), g.op1("Mul", [rotated, sin])]);
  };
  const heads = (x: string, n: number) => g.op1("Transpose", [g.op1("Reshape", [x, I([0, 0, n, hd])])], { perm: [0, 2, 1, 3] });
  const repeatKv = (x: string) => (group === 1 ? x : g.op1("Reshape", [g.op1("Expand", [g.op1("Unsqueeze", [x, I([2])]), I([1, 1, group, 1, 1])]), I([0, H, -1, hd])]));
  const scale = scalarF(1 / Math.sqrt(hd));

  const embedName = "model.embed_tokens.weight";
  const embed = g.weight(embedName, tensor(embedName), [V, C]);
  let x = g.op1("Gather", [embed, "input_ids"], { axis: 0 });
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}.`;
    const bias = (n: string) => (e.attentionBias ? `${p}self_attn.${n}_proj.bias` : undefined);
    const h = rmsnorm(x, `${p}input_layernorm.weight`);
    const q = rotate(heads(linear(h, `${p}self_attn.q_proj.weight`, bias("q")), H));
    const k = rotate(heads(linear(h, `${p}self_attn.k_proj.weight`, bias("k")), KV));
    const v = heads(linear(h, `${p}self_attn.v_proj.weight`, bias("v")), KV);
    const presentK = g.op1("Concat", [`past_key_values.${l}.key`, k], { axis: 2 }, `present.${l}.key`);
    const presentV = g.op1("Concat", [`past_key_values.${l}.value`, v], { axis: 2 }, `present.${l}.value`);
    const scores = g.op1("Add", [g.op1("Mul", [g.op1("MatMul", [q, g.op1("Transpose", [repeatKv(presentK)], { perm: [0, 1, 3, 2] })]), scale]), maskBias]);
    const probs = g.op1("Softmax", [scores], { axis: -1 });
    const att = g.op1("Reshape", [g.op1("Transpose", [g.op1("MatMul", [probs, repeatKv(presentV)])], { perm: [0, 2, 1, 3] }), I([0, 0, H * hd])]);
    x = g.op1("Add", [x, linear(att, `${p}self_attn.o_proj.weight`)]);
    const h2 = rmsnorm(x, `${p}post_attention_layernorm.weight`);
    const gate = linear(h2, `${p}mlp.gate_proj.weight`);
    const up = linear(h2, `${p}mlp.up_proj.weight`);
    const act = g.op1("Mul", [g.op1("Mul", [gate, g.op1("Sigmoid", [gate])]), up]);
    x = g.op1("Add", [x, linear(act, `${p}mlp.down_proj.weight`)]);
  }
  const hf = rmsnorm(x, "model.norm.weight");
  if (e.tieWordEmbeddings) {
    // Reuse the embedding as [V, C] with Gemm(transB) rather than storing its transpose too.
    const flat = g.op1("Gemm", [g.op1("Reshape", [hf, I([-1, C])]), embed], { transB: 1 });
    const shape = g.op1("Concat", [g.op1("Shape", ["input_ids"]), I([V])], { axis: 0 });
    g.op1("Reshape", [flat, shape], {}, "logits");
  } else {
    const w = transposed("lm_head.weight");
    g.op1("MatMul", [hf, g.weight("lm_head.weight", w.data, w.dims)], {}, "logits");
  }
  return g;
}

export function exportOnnx(model: PolicyModel, checkpointDir: string, outDir = checkpointDir, opts: { externalDataBytes?: number } = {}): ExportResult {
  const e = model.engine;
  const g = buildGraph(model);
  const dir = join(outDir, "onnx");
  mkdirSync(dir, { recursive: true });
  if (outDir !== checkpointDir) {
    for (const f of ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"])
      if (existsSync(join(checkpointDir, f))) copyFileSync(join(checkpointDir, f), join(outDir, f));
  }
  const totalBytes = g.initializers.reduce((a, t) => a + t.bytes.length, 0);
  const external = totalBytes > (opts.externalDataBytes ?? EXTERNAL_DATA_BYTES);
  const dataFile = "model.onnx_data";
  let offset = 0;
  const chunks: Uint8Array[] = [];
  const initializer = g.initializers.map((t) => {
    // Small tensors (shapes, axes: shape inference reads them) always stay in the graph.
    if (!external || t.bytes.length < 1024) return { name: t.name, dims: [...t.dims], data_type: t.dataType, raw_data: t.bytes };
    const entry = {
      name: t.name,
      dims: [...t.dims],
      data_type: t.dataType,
      data_location: 1,
      external_data: [
        { key: "location", value: dataFile },
        { key: "offset", value: String(offset) },
        { key: "length", value: String(t.bytes.length) },
      ],
    };
    chunks.push(t.bytes);
    offset += t.bytes.length;
    return entry;
  });
  const dim = (d: number | string) => (typeof d === "number" ? { dim_value: d } : { dim_param: d });
  const value = (name: string, elem: number, dims: (number | string)[]) => ({ name, type: { tensor_type: { elem_type: elem, shape: { dim: dims.map(dim) } } } });
  const kvDims = (len: string) => ["batch_size", e.numKvHeads, len, e.headDim];
  const inputs = [
    value("input_ids", DataType.INT64, ["batch_size", "sequence_length"]),
    value("attention_mask", DataType.INT64, ["batch_size", "total_sequence_length"]),
    value("position_ids", DataType.INT64, ["batch_size", "sequence_length"]),
  ];
  const outputs = [value("logits", DataType.FLOAT, ["batch_size", "sequence_length", e.vocabSize])];
  for (let l = 0; l < e.numLayers; l++) {
    for (const kv of ["key", "value"]) {
      inputs.push(value(`past_key_values.${l}.${kv}`, DataType.FLOAT, kvDims("past_sequence_length")));
      outputs.push(value(`present.${l}.${kv}`, DataType.FLOAT, kvDims("total_sequence_length")));
    }
  }
  const proto = ModelProto.create({
    ir_version: 8,
    producer_name: "socialworld",
    producer_version: "1",
    opset_import: [{ domain: "", version: OPSET }],
    graph: { name: "qwen2_decoder", node: g.nodes, initializer, input: inputs, output: outputs },
    metadata_props: [{ key: "model_type", value: "qwen2" }],
  });
  const bytes = ModelProto.encode(proto).finish();
  const path = join(dir, "model.onnx");
  if (external) {
    replaceFile(join(dir, dataFile), (tmp) => {
      const fd = openSync(tmp, "w");
      try {
        for (const c of chunks) writeSync(fd, c);
      } finally {
        closeSync(fd);
      }
    });
  }
  writeFileAtomic(path, bytes);
  return { path, bytes: bytes.length + (external ? offset : 0), ...(external ? { externalData: join(dir, dataFile) } : {}) };
}

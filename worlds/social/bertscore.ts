/**
 * BERTScore (Zhang et al., ICLR 2020) as the bert_score package computes it with its defaults
 * (no idf weighting, no baseline rescaling), one pair at a time: every token of each text is
 * embedded by the encoder, the cosine similarity of every candidate token with every reference
 * token is taken, and
 *
 *   P = mean over candidate tokens of their best similarity with any reference token
 *   R = mean over reference tokens of their best similarity with any candidate token
 *   F = 2PR / (P + R)
 *
 * Quirks kept from `greedy_cos_idf`: the boundary tokens ([CLS], [SEP]; <s>, </s>) take part in
 * the maxima but have weight 0 in the means; a text with no other token scores P = R = F = 0.
 * (bert_score batches texts with padding, whose zero similarities can enter the maxima when all
 * real ones are negative; one pair at a time has no padding.) Which layer's states are used is
 * the exported model's choice: bert_score takes a model-specific layer (roberta-large: 17), so
 * export the model truncated to that layer to match its numbers.
 */
import { OnnxEncoder } from "../core/onnx-encoder.js";

/** Token states of a text: `count` rows of `dim` floats, and each token's weight (0 for boundary tokens). */
export interface TokenStates {
  readonly count: number;
  readonly dim: number;
  readonly states: Float32Array;
  readonly weights: Float32Array;
}

export interface TokenEncoder {
  /** Names the encoder in reports. */
  readonly id: string;
  encode(text: string): TokenStates;
}

export interface BertScore {
  readonly precision: number;
  readonly recall: number;
  readonly f1: number;
}

function unit(t: TokenStates): Float32Array {
  const out = new Float32Array(t.states.length);
  for (let i = 0; i < t.count; i++) {
    let norm = 0;
    for (let d = 0; d < t.dim; d++) norm += t.states[i * t.dim + d]! ** 2;
    // A zero vector stays zero (its similarities are 0), where torch would give NaN.
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < t.dim; d++) out[i * t.dim + d] = t.states[i * t.dim + d]! / norm;
  }
  return out;
}

/** BERTScore of token states (the pure computation; `bertScore` encodes the texts first). */
export function bertScoreOfStates(candidate: TokenStates, reference: TokenStates): BertScore {
  if (candidate.dim !== reference.dim) throw new Error(`token states of ${candidate.dim} and ${reference.dim} dimensions`);
  const wc = candidate.weights.reduce((a, b) => a + b, 0);
  const wr = reference.weights.reduce((a, b) => a + b, 0);
  if (wc === 0 || wr === 0) return { precision: 0, recall: 0, f1: 0 };
  const c = unit(candidate);
  const r = unit(reference);
  const dim = candidate.dim;
  const bestC = new Float64Array(candidate.count).fill(-Infinity);
  const bestR = new Float64Array(reference.count).fill(-Infinity);
  for (let i = 0; i < candidate.count; i++) {
    for (let j = 0; j < reference.count; j++) {
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += c[i * dim + d]! * r[j * dim + d]!;
      if (dot > bestC[i]!) bestC[i] = dot;
      if (dot > bestR[j]!) bestR[j] = dot;
    }
  }
  let p = 0;
  for (let i = 0; i < candidate.count; i++) p += candidate.weights[i]! * bestC[i]!;
  let rr = 0;
  for (let j = 0; j < reference.count; j++) rr += reference.weights[j]! * bestR[j]!;
  const precision = p / wc;
  const recall = rr / wr;
  const f1 = (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1: Number.isNaN(f1) ? 0 : f1 };
}

export function bertScore(candidate: string, reference: string, encoder: TokenEncoder): BertScore {
  return bertScoreOfStates(encoder.encode(candidate), encoder.encode(reference));
}

/**
 * Token states from an ONNX export on disk: its `last_hidden_state` (or sentence-transformers'
 * `token_embeddings`, else its first output), shaped [1, tokens, dim].
 */
export class OnnxTokenEncoder implements TokenEncoder {
  readonly id: string;
  private readonly output: string;
  private readonly cache = new Map<string, TokenStates>();

  private constructor(private readonly encoder: OnnxEncoder) {
    this.id = encoder.id;
    const outs = encoder.outputs;
    this.output = outs.includes("last_hidden_state") ? "last_hidden_state" : outs.includes("token_embeddings") ? "token_embeddings" : outs[0]!;
  }

  static open(dir: string): OnnxTokenEncoder {
    return new OnnxTokenEncoder(OnnxEncoder.open(dir, "BERTScore encoder"));
  }

  encode(text: string): TokenStates {
    let t = this.cache.get(text);
    if (t) return t;
    const { ids, data, dims } = this.encoder.run(text, this.output);
    if (dims.length !== 3 || dims[0] !== 1 || dims[1] !== ids.length) throw new Error(`${this.id}: output "${this.output}" has shape [${dims.join(", ")}], expected [1, ${ids.length}, dim] (token states)`);
    const weights = new Float32Array(ids.length);
    for (let i = 0; i < ids.length; i++) weights[i] = this.encoder.boundaryIds.includes(ids[i]!) ? 0 : 1;
    t = { count: ids.length, dim: dims[2]!, states: data, weights };
    if (this.cache.size > 20_000) this.cache.clear();
    this.cache.set(text, t);
    return t;
  }

  close(): Promise<number> {
    return this.encoder.close();
  }
}

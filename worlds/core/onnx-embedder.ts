/**
 * A sentence-embedding model the user has on disk (worlds/core/onnx-encoder.ts: an Optimum or
 * sentence-transformers export, e.g. of all-roberta-large-v1, the official FANToM embedder).
 * Sentence vectors are the model's `sentence_embedding` output when it has one, else the mean of
 * its first output (token states) over the attention mask, which is what sentence-transformers'
 * mean pooling computes. Nothing is downloaded.
 */
import { OnnxEncoder } from "./onnx-encoder.js";
import type { Embedder } from "./embedder.js";

export class OnnxEmbedder implements Embedder {
  readonly id: string;
  private readonly cache = new Map<string, Float32Array>();
  private readonly output: string;
  private readonly pooled: boolean;

  private constructor(private readonly encoder: OnnxEncoder) {
    this.id = encoder.id;
    this.pooled = encoder.outputs.includes("sentence_embedding");
    this.output = this.pooled ? "sentence_embedding" : encoder.outputs[0]!;
  }

  /** Loads the tokenizer and the model from `dir` (blocking until the session is ready). */
  static open(dir: string): OnnxEmbedder {
    return new OnnxEmbedder(OnnxEncoder.open(dir, "embedder"));
  }

  embed(texts: readonly string[]): Float32Array[] {
    return texts.map((t) => {
      let v = this.cache.get(t);
      if (!v) {
        v = this.one(t);
        if (this.cache.size > 50_000) this.cache.clear();
        this.cache.set(t, v);
      }
      return v;
    });
  }

  private one(text: string): Float32Array {
    const { mask, data, dims } = this.encoder.run(text, this.output);
    const n = mask.length;
    if (this.pooled || dims.length === 2) return data.slice(0, dims[dims.length - 1]);
    if (dims.length !== 3 || dims[1] !== n) throw new Error(`${this.id}: unexpected output shape [${dims.join(", ")}] for ${n} tokens`);
    const dim = dims[2]!;
    const out = new Float32Array(dim);
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (!mask[i]) continue;
      count++;
      for (let d = 0; d < dim; d++) out[d]! += data[i * dim + d]!;
    }
    for (let d = 0; d < dim; d++) out[d]! /= Math.max(count, 1);
    return out;
  }

  /** Stops the worker (the process can also just exit: the worker does not keep it alive). */
  close(): Promise<number> {
    return this.encoder.close();
  }
}

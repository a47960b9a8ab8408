/**
 * Sentence embedders, shared by two judges: FANToM's free-form belief scoring (an answer is
 * right when it is closer, by cosine, to the correct answer than to the wrong one) and, with
 * `bench usersim --embedder`, user simulation's free text (worlds/usersim/embedding-similarity.ts).
 *
 * FANToM's official evaluator uses sentence-transformers/all-roberta-large-v1. Nothing may be
 * downloaded here, so the default is a deterministic lexical embedding (hashed words, word pairs
 * and character trigrams): it needs no model and gives the same verdicts on every machine, but its
 * numbers are not the official ones. A user with an ONNX export of a sentence-embedding model on
 * disk gets the official kind of judgement with `onnx:DIR` (see onnx-embedder.ts). Reports name
 * the embedder they used.
 */
import { hashString } from "./rng.js";

export interface Embedder {
  /** Names the embedder in reports ("lexical-hash-v1", "onnx:/models/all-roberta-large-v1"). */
  readonly id: string;
  /** One vector per text, synchronously (scoring is synchronous; see onnx-embedder.ts). */
  embed(texts: readonly string[]): Float32Array[];
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`cosine of vectors of ${a.length} and ${b.length} dimensions`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  // sklearn's cosine_similarity treats a zero vector as having norm 1 (similarity 0).
  return dot / ((Math.sqrt(na) || 1) * (Math.sqrt(nb) || 1));
}

const WORD_RE = /[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu;

/**
 * A bag of hashed features: words (weight 1), adjacent word pairs (0.5) and character trigrams
 * of words (0.25), signed-hashed into `dims` buckets. Paraphrases that share words land close;
 * negations ("does not know") count through their words and pairs.
 */
export class LexicalEmbedder implements Embedder {
  readonly id: string;
  private readonly cache = new Map<string, Float32Array>();

  constructor(private readonly dims = 1024) {
    this.id = `lexical-hash-v1 (${dims} dims)`;
  }

  embed(texts: readonly string[]): Float32Array[] {
    return texts.map((t) => {
      let v = this.cache.get(t);
      if (!v) {
        v = this.vector(t);
        if (this.cache.size > 50_000) this.cache.clear();
        this.cache.set(t, v);
      }
      return v;
    });
  }

  private vector(text: string): Float32Array {
    const v = new Float32Array(this.dims);
    const add = (feature: string, weight: number) => {
      const h = hashString(feature);
      v[h % this.dims]! += (h & 0x80000000 ? -1 : 1) * weight;
    };
    const words = Array.from(text.toLowerCase().matchAll(WORD_RE), (m) => m[0]);
    words.forEach((w, i) => {
      add(`w:${w}`, 1);
      if (i > 0) add(`b:${words[i - 1]}|${w}`, 0.5);
      const padded = `^${w}$`;
      for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.25);
    });
    return v;
  }
}

/**
 * Prompt-plus-reply sequences as the engine's token batches: row i is sequence i padded to the
 * longest; position p predicts token p + 1, and only the reply's tokens are targets, so the pass's
 * log-prob at (i, promptLength + j - 1) is that of reply token j. Values come back per reply token.
 */
import type { TokenBatch } from "../../models/model.js";
import type { FloatArray } from "../../models/native.js";

export interface Sequence {
  readonly prompt: readonly number[];
  /** The reply's tokens, the one that ended it (end of turn) included. */
  readonly reply: readonly number[];
}

export function sequenceLength(s: Sequence): number {
  return s.prompt.length + s.reply.length - 1;
}

/** The batch, with per-reply-token weights (and entropy weights) placed where their tokens are predicted. */
export function sequenceBatch(
  seqs: readonly Sequence[],
  weights?: readonly ArrayLike<number>[],
  entropyWeights?: readonly ArrayLike<number>[],
): { batch: TokenBatch; entropyWeights?: Float32Array } {
  const seqLen = Math.max(...seqs.map(sequenceLength));
  const b = seqs.length;
  const tokens = new Int32Array(b * seqLen);
  const targets = new Int32Array(b * seqLen).fill(-1);
  const w = new Float32Array(b * seqLen);
  const ew = entropyWeights ? new Float32Array(b * seqLen) : undefined;
  seqs.forEach((s, i) => {
    const row = i * seqLen;
    const all = [...s.prompt, ...s.reply];
    for (let p = 0; p < all.length - 1; p++) tokens[row + p] = all[p]!;
    for (let j = 0; j < s.reply.length; j++) {
      const at = row + s.prompt.length + j - 1;
      targets[at] = s.reply[j]!;
      if (weights) w[at] = weights[i]![j]!;
      if (ew) ew[at] = entropyWeights![i]![j]!;
    }
  });
  return { batch: { tokens, targets, weights: w, batch: b, seqLen }, ...(ew ? { entropyWeights: ew } : {}) };
}

/** Per sequence, the values at its reply tokens (log-probs, entropies) from a pass's flat output. */
export function replyValues(flat: FloatArray, seqs: readonly Sequence[], seqLen: number): Float64Array[] {
  return seqs.map((s, i) => {
    const out = new Float64Array(s.reply.length);
    for (let j = 0; j < s.reply.length; j++) out[j] = flat[i * seqLen + s.prompt.length + j - 1]!;
    return out;
  });
}

/**
 * Prompt-plus-reply sequences as the engine's token batches: row i is sequence i padded to the
 * longest; position p predicts token p + 1, and only the reply's tokens are targets, so the pass's
 * log-prob at (i, promptLength + j - 1) is that of reply token j. Values come back per reply token.
 * A reply sampled under a grammar carries the tokens it allowed at each step, which become the
 * pass's masks at the positions that predict them.
 */
import type { TokenBatch } from "../../models/model.js";
import type { FloatArray, TokenMasks } from "../../models/native.js";

export interface Sequence {
  readonly prompt: readonly number[];
  /** The reply's tokens, the one that ended it (end of turn) included. */
  readonly reply: readonly number[];
  /** Per reply token, the increasing ids its grammar allowed there (grammar-masks.ts); absent: sampled from the whole vocabulary. */
  readonly allowed?: readonly Int32Array[];
}

export function sequenceLength(s: Sequence): number {
  return s.prompt.length + s.reply.length - 1;
}

/**
 * The batch, with per-reply-token weights (and entropy weights) placed where their tokens are
 * predicted, and the masks of the replies sampled under a grammar (each distinct list once).
 */
export function sequenceBatch(
  seqs: readonly Sequence[],
  weights?: readonly ArrayLike<number>[],
  entropyWeights?: readonly ArrayLike<number>[],
): { batch: TokenBatch; entropyWeights?: Float32Array; masks?: TokenMasks } {
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
  const masks = seqs.some((s) => s.allowed) ? batchMasks(seqs, seqLen) : undefined;
  return { batch: { tokens, targets, weights: w, batch: b, seqLen }, ...(ew ? { entropyWeights: ew } : {}), ...(masks ? { masks } : {}) };
}

function batchMasks(seqs: readonly Sequence[], seqLen: number): TokenMasks {
  const rows = new Int32Array(2 * seqs.length * seqLen);
  const offsets = new Map<Int32Array, number>();
  const lists: Int32Array[] = [];
  let size = 0;
  seqs.forEach((s, i) => {
    if (!s.allowed) return;
    if (s.allowed.length !== s.reply.length) throw new Error(`sequence ${i}: ${s.allowed.length} masks for ${s.reply.length} reply tokens`);
    s.allowed.forEach((list, j) => {
      let offset = offsets.get(list);
      if (offset === undefined) {
        offsets.set(list, (offset = size));
        lists.push(list);
        size += list.length;
      }
      const at = i * seqLen + s.prompt.length + j - 1;
      rows[2 * at] = offset;
      rows[2 * at + 1] = list.length;
    });
  });
  const tokens = new Int32Array(size);
  let o = 0;
  for (const list of lists) {
    tokens.set(list, o);
    o += list.length;
  }
  return { rows, tokens };
}

/** Per sequence, the values at its reply tokens (log-probs, entropies) from a pass's flat output. */
export function replyValues(flat: FloatArray, seqs: readonly Sequence[], seqLen: number): Float64Array[] {
  return seqs.map((s, i) => {
    const out = new Float64Array(s.reply.length);
    for (let j = 0; j < s.reply.length; j++) out[j] = flat[i * seqLen + s.prompt.length + j - 1]!;
    return out;
  });
}

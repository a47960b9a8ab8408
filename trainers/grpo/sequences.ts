/**
 * Prompt-plus-reply sequences as the engine's token batches: row i is sequence i padded to the
 * longest; position p predicts token p + 1, and only the reply's tokens are targets, so the pass's
 * log-prob at (i, promptLength + j - 1) is that of reply token j. Values come back per reply token.
 * A reply sampled under a grammar carries the tokens it allowed at each step, which become the
 * pass's masks at the positions that predict them.
 *
 * A soft-thinking reply (SofT-GRPO) starts with K soft tokens: the pass's inputs at
 * promptLength .. promptLength + K - 1 are their mixtures of embeddings (each soft token's most
 * weighted id the placeholder token), the positions that predict them are scored by the Gumbel
 * head, and its reply tokens follow, K positions later. Its values come back soft tokens first:
 * K + reply.length of them.
 */
import type { TokenBatch } from "../../models/model.js";
import type { FloatArray, SoftPassOptions, SoftTrace, TokenMasks } from "../../models/native.js";

export interface Sequence {
  readonly prompt: readonly number[];
  /** The reply's tokens, the one that ended it (end of turn) included. */
  readonly reply: readonly number[];
  /** Per reply token, the increasing ids its grammar allowed there (grammar-masks.ts); absent: sampled from the whole vocabulary. */
  readonly allowed?: readonly Int32Array[];
  /** The soft tokens the reply thought in before it (soft thinking), as the rollout recorded them. */
  readonly soft?: SoftTrace;
}

/** Soft tokens before the reply. */
export function thinkingLength(s: Sequence): number {
  return s.soft ? s.soft.argmax.length : 0;
}

/** The values a sequence has in the loss: its soft tokens, then its reply tokens. */
export function lossLength(s: Sequence): number {
  return thinkingLength(s) + s.reply.length;
}

export function sequenceLength(s: Sequence): number {
  return s.prompt.length + lossLength(s) - 1;
}

/**
 * The batch, with per-reply-token weights (and entropy weights) placed where their tokens are
 * predicted, and the masks of the replies sampled under a grammar (each distinct list once).
 */
export function sequenceBatch(
  seqs: readonly Sequence[],
  weights?: readonly ArrayLike<number>[],
  entropyWeights?: readonly ArrayLike<number>[],
): { batch: TokenBatch; entropyWeights?: Float32Array; masks?: TokenMasks; soft?: SoftPassOptions } {
  const seqLen = Math.max(...seqs.map(sequenceLength));
  const b = seqs.length;
  const tokens = new Int32Array(b * seqLen);
  const targets = new Int32Array(b * seqLen).fill(-1);
  const w = new Float32Array(b * seqLen);
  const ew = entropyWeights ? new Float32Array(b * seqLen) : undefined;
  seqs.forEach((s, i) => {
    const row = i * seqLen;
    const k = thinkingLength(s);
    const all = [...s.prompt, ...(s.soft?.argmax ?? []), ...s.reply];
    for (let p = 0; p < all.length - 1; p++) tokens[row + p] = all[p]!;
    for (let j = 0; j < k + s.reply.length; j++) {
      const at = row + s.prompt.length + j - 1;
      if (j >= k) targets[at] = s.reply[j - k]!;
      if (weights) w[at] = weights[i]![j]!;
      if (ew) ew[at] = entropyWeights![i]![j]!;
    }
  });
  const masks = seqs.some((s) => s.allowed) ? batchMasks(seqs, seqLen) : undefined;
  const soft = seqs.some((s) => s.soft) ? batchSoft(seqs, seqLen) : undefined;
  return { batch: { tokens, targets, weights: w, batch: b, seqLen }, ...(ew ? { entropyWeights: ew } : {}), ...(masks ? { masks } : {}), ...(soft ? { soft } : {}) };
}

/** The soft tokens' mixtures (inputs) and Gumbel-head targets at their positions. */
function batchSoft(seqs: readonly Sequence[], seqLen: number): SoftPassOptions {
  const n = seqs.length * seqLen;
  // Entries of the flat position `at`: soft token j of sequence i is the input at prompt + j and the output at prompt + j - 1.
  const inputAt = new Map<number, [SoftTrace, number]>();
  const outputAt = new Map<number, [SoftTrace, number]>();
  seqs.forEach((s, i) => {
    if (!s.soft) return;
    for (let j = 0; j < s.soft.argmax.length; j++) {
      inputAt.set(i * seqLen + s.prompt.length + j, [s.soft, j]);
      outputAt.set(i * seqLen + s.prompt.length + j - 1, [s.soft, j]);
    }
  });
  const gather = (at: Map<number, [SoftTrace, number]>, values: (t: SoftTrace) => Float32Array) => {
    const offsets = new Int32Array(n + 1);
    const ids: number[] = [];
    const vals: number[] = [];
    for (let p = 0; p < n; p++) {
      const e = at.get(p);
      if (e) {
        const [t, j] = e;
        for (let k = t.offsets[j]!; k < t.offsets[j + 1]!; k++) {
          ids.push(t.ids[k]!);
          vals.push(values(t)[k]!);
        }
      }
      offsets[p + 1] = ids.length;
    }
    return { offsets, ids: Int32Array.from(ids), values: Float32Array.from(vals) };
  };
  const inp = gather(inputAt, (t) => t.weights);
  const out = gather(outputAt, (t) => t.noised);
  return { inputs: { offsets: inp.offsets, ids: inp.ids, weights: inp.values }, targets: { offsets: out.offsets, ids: out.ids, noised: out.values } };
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
      const at = i * seqLen + s.prompt.length + thinkingLength(s) + j - 1;
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

/** Per sequence, the values at its soft and reply tokens (log-probs, entropies) from a pass's flat output. */
export function replyValues(flat: FloatArray, seqs: readonly Sequence[], seqLen: number): Float64Array[] {
  return seqs.map((s, i) => {
    const out = new Float64Array(lossLength(s));
    for (let j = 0; j < out.length; j++) out[j] = flat[i * seqLen + s.prompt.length + j - 1]!;
    return out;
  });
}

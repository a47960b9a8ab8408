/**
 * Tokenized SFT examples and the batches made from them. Each example becomes ids with targets
 * on the assistant's tokens, weight 1, and, where `promptLoss` is above 0, on the prompt's tokens
 * too, with that weight (a dense signal for a policy trained from scratch: predicting its prompts
 * teaches it to copy and look up before its few answer tokens can). `fieldWeights` weighs the
 * tokens of named fields of a JSON response (field-spans.ts): every token that overlaps the
 * field's value takes the field's weight instead of 1. A batch pads its examples to the longest
 * (padding predicts nothing). The order is a seeded shuffle per epoch, so batch k is
 * the same on every run with the same seed, which is what lets a resumed run continue exactly.
 */
import { Rng } from "../../worlds/core/rng.js";
import type { TokenBatch } from "../../models/model.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import type { SftExample } from "./examples.js";
import { jsonFieldSpans } from "./field-spans.js";

export interface EncodedExample {
  readonly tokens: Int32Array;
  /** Next token where it is trained, else -1. */
  readonly targets: Int32Array;
  /** Each target's weight: 1 on the assistant's tokens, `promptLoss` on the prompt's, 0 untrained. */
  readonly weights: Float32Array;
  /** The sum of the weights. */
  readonly trained: number;
  readonly line: number;
}

export interface Encoded {
  readonly examples: EncodedExample[];
  /** Examples dropped for being longer than maxLen. */
  readonly tooLong: number;
  readonly noTargets: number;
  /** With fieldWeights: assistant messages that are not a JSON object with any of the fields (weighed 1 throughout). */
  readonly withoutFields: number;
}

export interface EncodeOptions {
  /** The prompt's tokens' weight (0: untrained). */
  readonly promptLoss?: number;
  /** A JSON response's field -> the weight of its value's tokens. */
  readonly fieldWeights?: Readonly<Record<string, number>>;
}

export function encodeExamples(tokenizer: PolicyTokenizer, examples: readonly SftExample[], maxLen: number, opts: EncodeOptions = {}): Encoded {
  const promptLoss = opts.promptLoss ?? 0;
  const out: EncodedExample[] = [];
  let tooLong = 0;
  let noTargets = 0;
  let withoutFields = 0;
  for (const ex of examples) {
    const { ids, assistant } = tokenizer.encodeChat(ex.messages);
    if (ids.length - 1 > maxLen) {
      tooLong++;
      continue;
    }
    let fieldWeight: Float32Array | undefined;
    if (opts.fieldWeights) {
      const w = fieldTokenWeights(tokenizer, ex, ids, assistant, opts.fieldWeights);
      fieldWeight = w.weights;
      withoutFields += w.without;
    }
    const n = ids.length - 1;
    const tokens = new Int32Array(n);
    const targets = new Int32Array(n);
    const weights = new Float32Array(n);
    let answers = 0;
    let trained = 0;
    for (let i = 0; i < n; i++) {
      tokens[i] = ids[i]!;
      const w = assistant[i + 1] ? (fieldWeight?.[i + 1] ?? 1) : promptLoss;
      targets[i] = w > 0 ? ids[i + 1]! : -1;
      weights[i] = w;
      trained += w;
      if (assistant[i + 1]) answers++;
    }
    if (answers === 0) {
      noTargets++;
      continue;
    }
    out.push({ tokens, targets, weights, trained, line: ex.line });
  }
  return { examples: out, tooLong, noTargets, withoutFields };
}

/**
 * Each token's weight from the fields of the assistant's messages (1 where no field is): the
 * tokens' bytes locate each message in its run of assistant tokens, and a token weighs as the
 * field it overlaps (the largest weight where it overlaps several). Tokens are not re-split at a
 * field's edges, so training sees the tokenization the model writes.
 */
function fieldTokenWeights(tokenizer: PolicyTokenizer, ex: SftExample, ids: readonly number[], assistant: readonly boolean[], fields: Readonly<Record<string, number>>): { weights: Float32Array; without: number } {
  const weights = new Float32Array(ids.length).fill(NaN); // NaN: no field
  const replies = ex.messages.filter((m) => m.role === "assistant");
  let without = 0;
  let m = 0;
  for (let i = 0; i < ids.length; ) {
    if (!assistant[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < ids.length && assistant[j]) j++;
    const content = replies[m++]?.content ?? "";
    const spans = jsonFieldSpans(content, Object.keys(fields));
    if (!spans || spans.size === 0) without++;
    else {
      // Byte offsets of tokens i..j-1 within the run, and of the message within the run.
      const offsets: number[] = [0];
      for (let k = i; k < j; k++) offsets.push(offsets[offsets.length - 1]! + tokenizer.tokenBytes(ids[k]!).length);
      const run = Buffer.from(ids.slice(i, j).flatMap((id) => tokenizer.tokenBytes(id)));
      const at = run.indexOf(Buffer.from(content, "utf8"));
      if (at < 0) throw new Error(`line ${ex.line}: the tokenizer's tokens do not spell the response byte for byte, so field weights cannot find its fields (a byte-level BPE tokenizer can)`);
      for (const [key, span] of spans) {
        const start = at + Buffer.byteLength(content.slice(0, span.start));
        const end = at + Buffer.byteLength(content.slice(0, span.end));
        for (let k = i; k < j; k++) {
          const overlaps = offsets[k - i]! < end && offsets[k - i + 1]! > start;
          if (overlaps && !(weights[k]! >= fields[key]!)) weights[k] = fields[key]!;
        }
      }
    }
    i = j;
  }
  return { weights: weights.map((w) => (Number.isNaN(w) ? 1 : w)), without };
}

/**
 * The examples longer than the model's context (`max_position_embeddings`), which a training pass
 * cannot take. They are an error for the caller to name rather than a silent drop: --max-len is
 * the documented way to leave long examples out, and an example it keeps must be trained on.
 */
export function longerThanContext(examples: readonly EncodedExample[], context: number): EncodedExample[] {
  return examples.filter((e) => e.tokens.length > context);
}

/** The examples of micro-batch `index` (0-based over the whole run), epoch by epoch. */
export function batchExamples(n: number, batch: number, index: number, seed: number): number[] {
  const perEpoch = Math.max(1, Math.floor(n / batch));
  const epoch = Math.floor(index / perEpoch);
  const order = Rng.seeded(`sft-order:${seed}:${epoch}`).shuffle(Array.from({ length: n }, (_, i) => i));
  const start = (index % perEpoch) * batch;
  const picked: number[] = [];
  for (let i = 0; i < batch; i++) picked.push(order[(start + i) % n]!);
  return picked;
}

/** Pads the examples into one batch; each trained position's weight is divided by `normalizer`. */
export function makeBatch(examples: readonly EncodedExample[], normalizer: number): TokenBatch {
  const seqLen = Math.max(...examples.map((e) => e.tokens.length));
  const b = examples.length;
  const tokens = new Int32Array(b * seqLen);
  const targets = new Int32Array(b * seqLen).fill(-1);
  const weights = new Float32Array(b * seqLen);
  examples.forEach((e, r) => {
    tokens.set(e.tokens, r * seqLen);
    targets.set(e.targets, r * seqLen);
    for (let i = 0; i < e.tokens.length; i++) if (e.targets[i]! >= 0) weights[r * seqLen + i] = e.weights[i]! / normalizer;
  });
  return { tokens, targets, weights, batch: b, seqLen };
}

/**
 * Builds a byte-level BPE tokenizer from a corpus and writes it as Hugging Face's tokenizer.json
 * (the layout of Qwen2's: NFC, the same pre-tokenizer split, byte-level alphabet and decoder), so
 * the loader that reads real checkpoints' tokenizers reads ours too, and so does transformers.
 *
 * Two kinds: `bpe` learns the most frequent merges up to a vocabulary size; `word` merges until
 * every word seen at least `minFrequency` times is a single token (capped by the size). Both
 * keep the 256 byte tokens, so any text encodes (unknown words fall back to pieces and bytes).
 */

/** Qwen2's pre-tokenizer pattern, as tokenizer.json states it (Oniguruma syntax). */
export const QWEN2_SPLIT_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// The same pattern in JavaScript (no inline case-insensitive groups before ES2025).
const SPLIT = /'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** Our special tokens (ChatML's, as Qwen2 has them), appended after the learned vocabulary. */
export const SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;

/** GPT-2's reversible map from bytes to printable characters (the byte-level alphabet). */
export function bytesToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const out: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + extra++);
  return out;
}

export interface BpeOptions {
  readonly kind: "bpe" | "word";
  /** Upper bound on the vocabulary, special tokens included. */
  readonly vocabSize: number;
  /** Pairs (bpe) or words (word) seen fewer times are not merged. Default 2 (bpe), 1 (word). */
  readonly minFrequency?: number;
  /** Progress callback: merges done so far. */
  readonly onMerge?: (merges: number) => void;
}

export interface TrainedTokenizer {
  /** tokenizer.json */
  readonly tokenizer: Record<string, unknown>;
  readonly vocabSize: number;
  readonly specialIds: Readonly<Record<(typeof SPECIAL_TOKENS)[number], number>>;
}

/** Splits text the way the pre-tokenizer does and maps each piece to the byte-level alphabet. */
export function preTokenize(text: string, alphabet: readonly string[] = bytesToUnicode()): string[] {
  const enc = new TextEncoder();
  const out: string[] = [];
  for (const m of text.normalize("NFC").matchAll(SPLIT)) {
    let s = "";
    for (const b of enc.encode(m[0])) s += alphabet[b];
    out.push(s);
  }
  return out;
}

/** Max-heap of candidate pairs; stale entries are skipped on pop. */
class PairHeap {
  private readonly items: [count: number, key: number][] = [];
  push(count: number, key: number): void {
    const a = this.items;
    a.push([count, key]);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): [number, number] | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
  // Higher count first; ties go to the smaller key (deterministic).
  private before(x: [number, number], y: [number, number]): boolean {
    return x[0] > y[0] || (x[0] === y[0] && x[1] < y[1]);
  }
}

const KEY = 1 << 21; // pair key = a * KEY + b (vocabularies stay far below 2^21)

export function trainBpe(corpus: Iterable<string>, opts: BpeOptions): TrainedTokenizer {
  const alphabet = bytesToUnicode();
  const maxLearned = opts.vocabSize - SPECIAL_TOKENS.length;
  if (maxLearned < 256) throw new Error(`vocabulary size ${opts.vocabSize} is too small: 256 byte tokens and ${SPECIAL_TOKENS.length} special tokens need ${256 + SPECIAL_TOKENS.length}`);
  const minFreq = opts.minFrequency ?? (opts.kind === "word" ? 1 : 2);

  const counts = new Map<string, number>();
  for (const text of corpus) for (const w of preTokenize(text, alphabet)) counts.set(w, (counts.get(w) ?? 0) + 1);
  // Sorted so that the result does not depend on the corpus's order of first appearance.
  const wordList = [...counts.entries()].filter(([, c]) => opts.kind === "bpe" || c >= minFreq).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));

  const vocab: string[] = [...alphabet];
  const ids = new Map<string, number>(alphabet.map((c, i) => [c, i]));
  const words: number[][] = wordList.map(([w]) => Array.from(w, (ch) => ids.get(ch)!));
  const freq: number[] = wordList.map(([, c]) => c);

  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const heap = new PairHeap();
  const addPairs = (wi: number, sign: 1 | -1) => {
    const w = words[wi]!;
    for (let i = 0; i + 1 < w.length; i++) {
      const key = w[i]! * KEY + w[i + 1]!;
      const c = (pairCount.get(key) ?? 0) + sign * freq[wi]!;
      pairCount.set(key, c);
      if (sign > 0) {
        let set = pairWords.get(key);
        if (!set) pairWords.set(key, (set = new Set()));
        set.add(wi);
        heap.push(c, key);
      }
    }
  };
  for (let wi = 0; wi < words.length; wi++) addPairs(wi, 1);

  const merges: string[] = [];
  const threshold = opts.kind === "bpe" ? minFreq : 1;
  while (vocab.length < maxLearned) {
    const top = heap.pop();
    if (!top) break;
    const [count, key] = top;
    if (pairCount.get(key) !== count || count <= 0) continue; // stale
    if (count < threshold) break;
    const a = Math.floor(key / KEY), b = key % KEY;
    const merged = vocab[a]! + vocab[b]!;
    let z = ids.get(merged);
    if (z === undefined) {
      z = vocab.length;
      vocab.push(merged);
      ids.set(merged, z);
    }
    merges.push(`${vocab[a]} ${vocab[b]}`);
    for (const wi of pairWords.get(key) ?? []) {
      const w = words[wi]!;
      let has = false;
      for (let i = 0; i + 1 < w.length; i++) if (w[i] === a && w[i + 1] === b) has = true;
      if (!has) continue;
      addPairs(wi, -1);
      const next: number[] = [];
      for (let i = 0; i < w.length; i++) {
        if (i + 1 < w.length && w[i] === a && w[i + 1] === b) {
          next.push(z);
          i++;
        } else next.push(w[i]!);
      }
      words[wi] = next;
      addPairs(wi, 1);
    }
    pairWords.delete(key);
    opts.onMerge?.(merges.length);
  }

  const specialIds = {} as Record<(typeof SPECIAL_TOKENS)[number], number>;
  const added = SPECIAL_TOKENS.map((content, i) => {
    const id = vocab.length + i;
    specialIds[content] = id;
    return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
  });
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: "NFC" },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [{ type: "Split", pattern: { Regex: QWEN2_SPLIT_PATTERN }, behavior: "Isolated", invert: false }, byteLevel],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(vocab.map((t, i) => [t, i])),
      merges,
    },
  };
  return { tokenizer, vocabSize: vocab.length + SPECIAL_TOKENS.length, specialIds };
}

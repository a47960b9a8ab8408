/**
 * A tokenizer's vocabulary as the grammar sees it: the bytes each token id writes (null for a
 * token that never appears inside constrained text: special and added tokens), and the ids that
 * end a sequence. The bytes are stored as a trie, so that the tokens a grammar state allows are
 * found by one walk that abandons every prefix the grammar rejects.
 */
import { GrammarError } from "./errors.js";

export interface VocabularyInput {
  /** Bytes of each token id; null: the token is never allowed inside the text. */
  readonly tokens: readonly (Uint8Array | readonly number[] | null)[];
  /** End-of-sequence ids: allowed exactly where the text may end. */
  readonly eos: readonly number[];
}

export class Vocabulary {
  readonly size: number;
  readonly eos: Int32Array;
  /** Trie: node n's children are edges [childStart[n], childStart[n + 1]), by byte. */
  readonly childStart: Int32Array;
  readonly edgeByte: Uint8Array;
  readonly edgeNode: Int32Array;
  /** Token ids that end at node n: [tokenStart[n], tokenStart[n + 1]) of nodeTokens. */
  readonly tokenStart: Int32Array;
  readonly nodeTokens: Int32Array;
  /** A token for each single byte (-1: none). */
  readonly singleByte: Int32Array;
  /** A key that tells vocabularies apart (for caches). */
  readonly key: string;

  constructor(input: VocabularyInput) {
    this.size = input.tokens.length;
    for (const id of input.eos) if (!Number.isInteger(id) || id < 0 || id >= this.size) throw new GrammarError(`end-of-sequence token ${id} is outside the vocabulary (0..${this.size - 1})`);
    if (input.eos.length === 0) throw new GrammarError("constrained decoding needs an end-of-sequence token");
    this.eos = Int32Array.from(new Set(input.eos));
    const eos = new Set(input.eos);
    // Build with maps, then flatten (children sorted by byte).
    const kids: Map<number, number>[] = [new Map()];
    const ends: number[][] = [[]];
    let hash = 0x811c9dc5;
    input.tokens.forEach((bytes, id) => {
      if (!bytes || bytes.length === 0 || eos.has(id)) return;
      let n = 0;
      for (const b of bytes) {
        hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
        let next = kids[n]!.get(b);
        if (next === undefined) {
          next = kids.length;
          kids.push(new Map());
          ends.push([]);
          kids[n]!.set(b, next);
        }
        n = next;
      }
      hash = Math.imul(hash ^ (id & 0xffff), 0x01000193) >>> 0;
      ends[n]!.push(id);
    });
    const N = kids.length;
    this.childStart = new Int32Array(N + 1);
    this.tokenStart = new Int32Array(N + 1);
    const bytes: number[] = [];
    const nodes: number[] = [];
    const toks: number[] = [];
    for (let n = 0; n < N; n++) {
      this.childStart[n] = bytes.length;
      this.tokenStart[n] = toks.length;
      for (const [b, c] of [...kids[n]!.entries()].sort((x, y) => x[0] - y[0])) {
        bytes.push(b);
        nodes.push(c);
      }
      toks.push(...ends[n]!);
    }
    this.childStart[N] = bytes.length;
    this.tokenStart[N] = toks.length;
    this.edgeByte = Uint8Array.from(bytes);
    this.edgeNode = Int32Array.from(nodes);
    this.nodeTokens = Int32Array.from(toks);
    this.singleByte = new Int32Array(256).fill(-1);
    for (let e = this.childStart[0]!; e < this.childStart[1]!; e++) {
      const n = this.edgeNode[e]!;
      if (this.tokenStart[n]! < this.tokenStart[n + 1]!) this.singleByte[this.edgeByte[e]!] = this.nodeTokens[this.tokenStart[n]!]!;
    }
    this.key = `${this.size}:${[...this.eos].join(",")}:${hash.toString(16)}`;
  }

  get nodes(): number {
    return this.childStart.length - 1;
  }
}

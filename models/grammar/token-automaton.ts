/**
 * The token-level automaton: for every state of the byte automaton, the tokens that may come
 * next and the state each leads to, found once (a walk of the vocabulary trie that follows the
 * byte automaton and drops every prefix it rejects) and kept as flat arrays that the native
 * engine and the TypeScript sampler read as they are.
 *
 * Layout (CSR):
 * - `states`, STATE_FIELDS int32 per state: its row, its count (counted strings), the room left
 *   below the string's cap, the string's stride, its distance to the end in tokens (an upper
 *   bound), and 1 when the text may end there;
 * - `rowStart`: row r's entries are [rowStart[r], rowStart[r + 1]), sorted by token;
 * - `entries`, ENTRY_FIELDS int32 per entry: token, target, units, lo, hi.
 *
 * Free text is cheap because rows are shared: all the states of one counted string that are at
 * the same body state (a million counts of a 4,000-character answer share a dozen rows) use one
 * row, whose entries are relative: a token that stays inside the string moves the count by the
 * UTF-16 units it writes (`units` >= 0: next = state + min(units, room) * stride + target, where
 * target is the change of body state); a token that closes the string has an absolute target
 * (units = -1). An entry applies in a state only when lo <= count <= hi (the token's characters
 * fit under maxLength; a closing token comes after minLength). Elsewhere (explicit states) every
 * entry is absolute and applies always.
 *
 * A sampler allows, in state s with r tokens still allowed (this one included), the entries that
 * apply and whose next state's distance is at most r - 1 (so the text can always be finished
 * within the budget), and the end-of-sequence tokens exactly when the state accepts. When nothing
 * but end-of-sequence remains, it is forced.
 */
import { ByteAutomaton, DEAD, UNREACHABLE } from "./byte-automaton.js";
import { GrammarError } from "./errors.js";
import type { Vocabulary } from "./vocabulary.js";

// Field offsets within a state's and an entry's int32s.
export const [S_ROW, S_COUNT, S_ROOM, S_STRIDE, S_DIST, S_ACCEPT, STATE_FIELDS] = [0, 1, 2, 3, 4, 5, 6] as const;
export const [E_TOKEN, E_TARGET, E_UNITS, E_LO, E_HI, ENTRY_FIELDS] = [0, 1, 2, 3, 4, 5] as const;

const NO_LIMIT_LO = -0x80000000;
const NO_LIMIT_HI = 0x7fffffff;

/** The flat form, as handed to the native engine (and what a worker thread can be sent). */
export interface TokenAutomatonData {
  readonly vocabSize: number;
  readonly start: number;
  readonly states: Int32Array;
  readonly rowStart: Int32Array;
  readonly entries: Int32Array;
  readonly eos: Int32Array;
}

export class TokenAutomaton implements TokenAutomatonData {
  private readonly eosSet: ReadonlySet<number>;

  constructor(
    readonly vocabSize: number,
    readonly start: number,
    readonly states: Int32Array,
    readonly rowStart: Int32Array,
    readonly entries: Int32Array,
    readonly eos: Int32Array,
  ) {
    this.eosSet = new Set(eos);
  }

  get numStates(): number {
    return this.states.length / STATE_FIELDS;
  }

  get numEntries(): number {
    return this.entries.length / ENTRY_FIELDS;
  }

  /** Tokens to the end from the start: the smallest budget that is sure to finish (an upper bound). */
  get minBudget(): number {
    return this.states[this.start * STATE_FIELDS + S_DIST]!;
  }

  accepts(state: number): boolean {
    return this.states[state * STATE_FIELDS + S_ACCEPT] === 1;
  }

  distance(state: number): number {
    return this.states[state * STATE_FIELDS + S_DIST]!;
  }

  /**
   * The tokens allowed in `state` with `remaining` tokens left (this one included), written to
   * `tokens` and `next` (end-of-sequence: next -1); returns how many. `stops` are the tokens that
   * end the sequence (default the vocabulary's end-of-sequence tokens): never inside the text,
   * and allowed, after the others, exactly when the state accepts.
   */
  allowed(state: number, remaining: number, tokens: Int32Array, next: Int32Array, stops: ReadonlySet<number> = this.eosSet): number {
    const st = this.states;
    const en = this.entries;
    const base = state * STATE_FIELDS;
    const row = st[base + S_ROW]!;
    const count = st[base + S_COUNT]!;
    const room = st[base + S_ROOM]!;
    const stride = st[base + S_STRIDE]!;
    let n = 0;
    if (row >= 0) {
      for (let e = this.rowStart[row]!; e < this.rowStart[row + 1]!; e++) {
        const o = e * ENTRY_FIELDS;
        if (count < en[o + E_LO]! || count > en[o + E_HI]!) continue;
        const units = en[o + E_UNITS]!;
        const to = units < 0 ? en[o + E_TARGET]! : state + Math.min(units, room) * stride + en[o + E_TARGET]!;
        if (to < 0 || to >= this.numStates || st[to * STATE_FIELDS + S_DIST]! > remaining - 1) continue;
        const token = en[o + E_TOKEN]!;
        if (stops.size > 0 && stops.has(token)) continue;
        tokens[n] = token;
        next[n++] = to;
      }
    }
    if (st[base + S_ACCEPT] === 1) {
      for (const t of stops) {
        tokens[n] = t;
        next[n++] = -1;
      }
    }
    return n;
  }

  /** The state after `token` in `state` (-1: end of sequence; undefined: not allowed there, budget aside). */
  advance(state: number, token: number): number | undefined {
    if (this.accepts(state) && this.eos.includes(token)) return -1;
    const st = this.states;
    const en = this.entries;
    const base = state * STATE_FIELDS;
    const row = st[base + S_ROW]!;
    if (row < 0) return undefined;
    // Rows are sorted by token: binary search.
    let lo = this.rowStart[row]!;
    let hi = this.rowStart[row + 1]! - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const t = en[mid * ENTRY_FIELDS + E_TOKEN]!;
      if (t < token) lo = mid + 1;
      else if (t > token) hi = mid - 1;
      else {
        const o = mid * ENTRY_FIELDS;
        const count = st[base + S_COUNT]!;
        if (count < en[o + E_LO]! || count > en[o + E_HI]!) return undefined;
        const units = en[o + E_UNITS]!;
        return units < 0 ? en[o + E_TARGET]! : state + Math.min(units, st[base + S_ROOM]!) * st[base + S_STRIDE]! + en[o + E_TARGET]!;
      }
    }
    return undefined;
  }

  /** Whether the token sequence is a complete text of the language (end-of-sequence optional at the end). */
  acceptsTokens(tokens: readonly number[]): boolean {
    let s = this.start;
    for (const t of tokens) {
      if (s === -1) return false;
      const n = this.advance(s, t);
      if (n === undefined) return false;
      s = n;
    }
    return s === -1 || this.accepts(s);
  }
}

/** Builds the token automaton of a byte automaton over a vocabulary. */
export function tokenAutomaton(bytes: ByteAutomaton, vocab: Vocabulary): TokenAutomaton {
  checkSingleBytes(bytes, vocab);
  const C = bytes.countedStates;
  const S = bytes.size;
  const rows: number[][] = []; // flat entries per row
  const states = new Int32Array(S * STATE_FIELDS);
  const dist = Int32Array.from(bytes.distance);

  // Explicit states: a concrete walk each.
  for (let s = C; s < S; s++) {
    const row = concreteRow(bytes, vocab, s);
    const o = s * STATE_FIELDS;
    states[o + S_ROW] = rows.length;
    states[o + S_ACCEPT] = bytes.accepts(s) ? 1 : 0;
    rows.push(row);
  }
  // Counted strings: one symbolic walk per body state, shared by every count.
  const firstRows: number[] = [];
  for (const t of bytes.texts) {
    const first = rows.length;
    firstRows.push(first);
    for (let sigma = 0; sigma < t.stride; sigma++) rows.push(symbolicRow(bytes, vocab, t, sigma));
    for (let c = 0; c <= t.cap; c++) {
      for (let sigma = 0; sigma < t.stride; sigma++) {
        const s = t.base + c * t.stride + sigma;
        const o = s * STATE_FIELDS;
        states[o + S_ROW] = first + sigma;
        states[o + S_COUNT] = c;
        states[o + S_ROOM] = t.cap - c;
        states[o + S_STRIDE] = t.stride;
        states[o + S_ACCEPT] = t.close < 0 && t.body.accepting[sigma] === 1 && c >= t.min ? 1 : 0;
      }
    }
  }
  tighten(bytes, rows, firstRows, dist);
  // Entries to states that cannot finish go (counted rows keep theirs: they depend on the count).
  for (let s = C; s < S; s++) {
    const r = states[s * STATE_FIELDS + S_ROW]!;
    const row = rows[r]!;
    let n = 0;
    for (let i = 0; i < row.length; i += ENTRY_FIELDS) {
      if (dist[row[i + E_TARGET]!] === UNREACHABLE) continue;
      for (let f = 0; f < ENTRY_FIELDS; f++) row[n + f] = row[i + f]!;
      n += ENTRY_FIELDS;
    }
    row.length = n;
  }
  for (let s = 0; s < S; s++) states[s * STATE_FIELDS + S_DIST] = dist[s]!;
  const rowStart = new Int32Array(rows.length + 1);
  let total = 0;
  rows.forEach((r, i) => {
    rowStart[i] = total;
    total += r.length / ENTRY_FIELDS;
  });
  rowStart[rows.length] = total;
  const entries = new Int32Array(total * ENTRY_FIELDS);
  rows.forEach((r, i) => entries.set(r, rowStart[i]! * ENTRY_FIELDS));
  if (dist[bytes.start] === UNREACHABLE) throw new GrammarError("the language has no text this vocabulary can write");
  return new TokenAutomaton(vocab.size, bytes.start, states, rowStart, entries, vocab.eos);
}

/**
 * The distances are first counted in bytes (every byte is a token of its own, checked below); a
 * multi-byte token can finish sooner, so explicit states take the best of their tokens, and the
 * strings after them gain what their exits gained. Still upper bounds, each with a token that
 * keeps it, which is all the budget rule needs.
 */
function tighten(bytes: ByteAutomaton, rows: number[][], firstRows: readonly number[], dist: Int32Array): void {
  const C = bytes.countedStates;
  const S = bytes.size;
  // The gain each string's states have taken (gains only grow: distances only fall).
  const applied = new Float64Array(bytes.texts.length);
  // A bounded string's token distances read only its closing entries' targets: counted again only
  // when one of theirs fell (the same inputs give the same distances, already taken).
  const closings = bytes.texts.map((t, i) => (Number.isFinite(t.max) ? closingTargets(t, rows, firstRows[i]!) : new Int32Array(0)));
  const counted: (Int32Array | undefined)[] = [];
  for (let round = 0; round < 64; round++) {
    let changed = false;
    for (let s = S - 1; s >= C; s--) {
      const row = rows[s - C]!;
      let best = dist[s]!;
      for (let i = 0; i < row.length; i += ENTRY_FIELDS) {
        const d = dist[row[i + E_TARGET]!]!;
        if (d !== UNREACHABLE && d + 1 < best) best = d + 1;
      }
      if (best < dist[s]!) {
        dist[s] = best;
        changed = true;
      }
    }
    for (const [i, t] of bytes.texts.entries()) {
      if (t.close < 0 || t.exitState === DEAD) continue;
      // Inside a string, distance = (bytes to finish it) + distance after it.
      const gain = bytes.distance[t.exitState]! - dist[t.exitState]!;
      if (gain <= applied[i]!) continue;
      applied[i] = gain;
      const end = t.base + (t.cap + 1) * t.stride;
      for (let s = t.base; s < end; s++) {
        const d = bytes.distance[s]!;
        if (d !== UNREACHABLE && d - gain < dist[s]!) {
          dist[s] = d - gain;
          changed = true;
        }
      }
    }
    for (const [i, t] of bytes.texts.entries()) {
      if (!Number.isFinite(t.max)) continue;
      const reads = closings[i]!.map((s) => dist[s]!);
      const last = counted[i];
      if (last && last.every((d, k) => d === reads[k])) continue;
      counted[i] = reads;
      if (countedTokenDistances(t, rows, firstRows[i]!, dist)) changed = true;
    }
    if (!changed) return;
  }
}

/** The targets of a string's closing entries (those that leave it), each once. */
function closingTargets(t: ByteAutomaton["texts"][number], rows: readonly number[][], first: number): Int32Array {
  const out = new Set<number>();
  for (let sigma = 0; sigma < t.stride; sigma++) {
    const row = rows[first + sigma]!;
    for (let i = 0; i < row.length; i += ENTRY_FIELDS) if (row[i + E_UNITS]! < 0) out.add(row[i + E_TARGET]!);
  }
  return Int32Array.from(out);
}

/**
 * Inside a bounded string, distances counted in tokens rather than bytes: the bytes that finish
 * it (a closing tag of a dozen bytes, the end of a word) are often a token or two. Per body state,
 * the fewest tokens of the string's own rows to its end (a closing entry, then the distance after
 * it; or, for raw text that ends the language, a body state that accepts), and the counts at which
 * that path applies, [lo, hi]: the entries' guards, and the successor's count within the
 * successor's own range. Body states are settled in order of distance (Dijkstra's way), each on
 * successors already settled, so a state whose count is in its range has a token that keeps its
 * distance (its path's first), which is all the budget rule needs; other counts keep the byte
 * count. Bounded strings only (an unbounded one's counts saturate). Returns whether a distance fell.
 */
function countedTokenDistances(t: ByteAutomaton["texts"][number], rows: readonly number[][], first: number, dist: Int32Array): boolean {
  if (!Number.isFinite(t.max)) return false;
  const n = t.stride;
  const d = new Int32Array(n).fill(UNREACHABLE);
  const lo = new Int32Array(n);
  const hi = new Int32Array(n).fill(-1);
  const settled = new Uint8Array(n);
  if (t.close < 0) {
    for (let sigma = 0; sigma < n; sigma++) {
      if (t.body.accepting[sigma] !== 1 || t.min > t.cap) continue;
      [d[sigma], lo[sigma], hi[sigma], settled[sigma]] = [0, t.min, t.cap, 1];
    }
  }
  for (;;) {
    // Each open body state's best path through settled ones: fewest tokens, then the most counts.
    const best = Array.from({ length: n }, () => ({ d: UNREACHABLE, lo: 0, hi: -1 }));
    for (let sigma = 0; sigma < n; sigma++) {
      if (settled[sigma]) continue;
      const row = rows[first + sigma]!;
      const b = best[sigma]!;
      for (let i = 0; i < row.length; i += ENTRY_FIELDS) {
        const units = row[i + E_UNITS]!;
        let dd: number;
        let l = Math.max(0, row[i + E_LO]!);
        let h = Math.min(t.cap, row[i + E_HI]!);
        if (units < 0) {
          const after = dist[row[i + E_TARGET]!]!;
          if (after === UNREACHABLE) continue;
          dd = after + 1;
        } else {
          const next = sigma + row[i + E_TARGET]!;
          if (!settled[next]) continue;
          dd = d[next]! + 1;
          l = Math.max(l, lo[next]! - units);
          h = Math.min(h, hi[next]! - units);
        }
        if (l > h) continue;
        if (dd < b.d || (dd === b.d && h - l > b.hi - b.lo)) [b.d, b.lo, b.hi] = [dd, l, h];
      }
    }
    const least = Math.min(...best.map((b) => b.d));
    if (least === UNREACHABLE) break;
    best.forEach((b, sigma) => {
      if (b.d === least) [d[sigma], lo[sigma], hi[sigma], settled[sigma]] = [b.d, b.lo, b.hi, 1];
    });
  }
  let changed = false;
  for (let sigma = 0; sigma < n; sigma++) {
    if (!settled[sigma]) continue;
    for (let c = lo[sigma]!; c <= hi[sigma]!; c++) {
      const s = t.base + c * n + sigma;
      if (d[sigma]! < dist[s]!) {
        dist[s] = d[sigma]!;
        changed = true;
      }
    }
  }
  return changed;
}

/** Every byte the automaton can write must be a token of its own (the distance bound rests on it). */
function checkSingleBytes(bytes: ByteAutomaton, vocab: Vocabulary): void {
  const used = new Uint8Array(256);
  const E = bytes.explicitAccepting.length;
  for (let i = 0; i < E * 256; i++) if (bytes.trans[i]! !== DEAD) used[i & 255] = 1;
  for (const t of bytes.texts) {
    for (let i = 0; i < t.body.size * 256; i++) if (t.body.trans[i]! >= 0) used[i & 255] = 1;
    if (t.close >= 0) used[t.close] = 1;
  }
  const missing: string[] = [];
  for (let b = 0; b < 256; b++) if (used[b] && vocab.singleByte[b]! < 0) missing.push(`0x${b.toString(16).padStart(2, "0")}`);
  if (missing.length) throw new GrammarError(`the tokenizer has no single-byte token for ${missing.slice(0, 8).join(", ")}${missing.length > 8 ? ", ..." : ""}; constrained decoding needs a byte-level vocabulary`);
}

/** Entries from a state whose count is known (or that has none): absolute targets, always applying. */
function concreteRow(bytes: ByteAutomaton, vocab: Vocabulary, from: number): number[] {
  const out: number[] = [];
  concreteWalk(bytes, vocab, from, NO_LIMIT_LO, NO_LIMIT_HI, 0, out);
  return sortRow(out);
}

/** Appends the entries of the tokens below trie node `node`, walked from `from`, under the guard lo..hi. */
function concreteWalk(bytes: ByteAutomaton, vocab: Vocabulary, from: number, lo: number, hi: number, node: number, out: number[]): void {
  const stack = [node, from];
  while (stack.length) {
    const state = stack.pop()!;
    const n = stack.pop()!;
    for (let e = vocab.childStart[n]!; e < vocab.childStart[n + 1]!; e++) {
      const to = bytes.step(state, vocab.edgeByte[e]!);
      if (to === DEAD) continue;
      const child = vocab.edgeNode[e]!;
      for (let k = vocab.tokenStart[child]!; k < vocab.tokenStart[child + 1]!; k++) out.push(vocab.nodeTokens[k]!, to, -1, lo, hi);
      if (vocab.childStart[child]! < vocab.childStart[child + 1]!) stack.push(child, to);
    }
  }
}

/**
 * Entries from body state `sigma` of a counted string, for any count: a walk that carries the
 * units written so far instead of the count, and turns what must hold of the count into the
 * entry's lo..hi.
 */
function symbolicRow(bytes: ByteAutomaton, vocab: Vocabulary, t: ByteAutomaton["texts"][number], sigma: number): number[] {
  const out: number[] = [];
  const body = t.body;
  const finite = Number.isFinite(t.max);
  // Frames: trie node, body state, units written, lower bound on the count (astral characters wait for min).
  const stack = [0, sigma, 0, NO_LIMIT_LO];
  while (stack.length) {
    const lo = stack.pop()!;
    const units = stack.pop()!;
    const s = stack.pop()!;
    const n = stack.pop()!;
    for (let e = vocab.childStart[n]!; e < vocab.childStart[n + 1]!; e++) {
      const b = vocab.edgeByte[e]!;
      const child = vocab.edgeNode[e]!;
      const hasKids = vocab.childStart[child]! < vocab.childStart[child + 1]!;
      const to = body.trans[s * 256 + b]!;
      if (to >= 0) {
        const u = units + body.units[s * 256 + b]!;
        const pend = body.pend[to]!;
        if (finite && u + pend > t.max) continue;
        const lo2 = pend === 2 ? Math.max(lo, t.min - u) : lo;
        const hi2 = finite ? t.max - u - pend : NO_LIMIT_HI;
        if (lo2 > hi2 || lo2 > t.cap) continue;
        for (let k = vocab.tokenStart[child]!; k < vocab.tokenStart[child + 1]!; k++) out.push(vocab.nodeTokens[k]!, to - sigma, u, lo2, hi2);
        if (hasKids) stack.push(child, to, u, lo2);
      } else if (b === t.close && body.accepting[s] === 1) {
        const lo2 = Math.max(lo, t.min - units);
        const hi2 = finite ? t.max - units : NO_LIMIT_HI;
        if (lo2 > hi2 || lo2 > t.cap || t.exitState === DEAD) continue;
        const exit = t.exitState;
        for (let k = vocab.tokenStart[child]!; k < vocab.tokenStart[child + 1]!; k++) out.push(vocab.nodeTokens[k]!, exit, -1, lo2, hi2);
        if (hasKids) concreteWalk(bytes, vocab, exit, lo2, hi2, child, out);
      }
    }
  }
  return sortRow(out);
}

function sortRow(flat: number[]): number[] {
  const n = flat.length / ENTRY_FIELDS;
  // One numeric key per entry, token then position (exact in a double), sorted natively.
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = flat[i * ENTRY_FIELDS]! * n + i;
  keys.sort();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const src = keys[i]! % n;
    for (let f = 0; f < ENTRY_FIELDS; f++) out.push(flat[src * ENTRY_FIELDS + f]!);
  }
  return out;
}

/**
 * Thompson's construction: a language tree becomes a byte NFA. Every character becomes the byte
 * sequences that write it (UTF-8, or JSON's escapes inside a quoted string); the edge that ends a
 * character carries its UTF-16 units, and every state knows the units of the character it is in
 * the middle of (`pend`), so a counted string can tell, byte by byte, how long it is and whether
 * the character it started still fits.
 *
 * A counted string (`text`) is not expanded: it becomes a gate state, and its body is compiled to
 * a small DFA of its own (a `TextPart`), which the outer automaton runs with a counter beside it
 * until the byte that closes it (a JSON string's quote, a bounded group's closing character).
 */
import { encodeSet, literalBytes, type ByteSeq, type Encoding } from "./charset.js";
import { GrammarError } from "./errors.js";
import type { Lang } from "./language.js";

export interface Edge {
  readonly lo: number;
  readonly hi: number;
  readonly to: number;
  /** UTF-16 units of the character this byte completes (0 when it completes none). */
  readonly units: number;
}

/** A counted string as the outer NFA refers to it. */
export interface TextPart {
  readonly body: BodyDfa;
  readonly min: number;
  readonly max: number;
  readonly quoted: boolean;
  /** The byte that ends the string (a JSON string's quote; -1: raw text that ends the language). */
  readonly close: number;
  /** The outer NFA state after the closing byte (raw text without one: after the text). */
  readonly exit: number;
  readonly pointer: string;
}

export class Nfa {
  readonly eps: number[][] = [];
  readonly edges: Edge[][] = [];
  /** Units of the character being read in this state (0 on a character boundary). */
  readonly pend: number[] = [];
  /** The counted string this state enters (-1: none). */
  readonly gate: number[] = [];
  readonly texts: TextPart[] = [];

  constructor(private readonly maxStates: number) {}

  get size(): number {
    return this.eps.length;
  }

  add(pend = 0): number {
    if (this.eps.length >= this.maxStates) throw new GrammarError(`the language is too large to compile (over ${this.maxStates} automaton states; lower maxLength, maxItems or the nesting)`);
    this.eps.push([]);
    this.edges.push([]);
    this.pend.push(pend);
    this.gate.push(-1);
    return this.eps.length - 1;
  }

  /** Compiles `l` between two new states; returns them. */
  build(l: Lang, encoding: Encoding, bodyStates: number): { start: number; end: number } {
    const start = this.add();
    const end = this.add();
    this.into(l, start, end, encoding, bodyStates);
    return { start, end };
  }

  private into(l: Lang, from: number, to: number, encoding: Encoding, bodyStates: number): void {
    switch (l.k) {
      case "never":
        return;
      case "literal":
        this.bytes(literalBytes(l.text), from, to, 0);
        return;
      case "chars":
        for (const { seq, units } of encodeSet(l.set, encoding)) this.bytes(seq, from, to, units);
        return;
      case "seq": {
        let at = from;
        l.items.forEach((item, i) => {
          const next = i === l.items.length - 1 ? to : this.add();
          this.into(item, at, next, encoding, bodyStates);
          at = next;
        });
        if (l.items.length === 0) this.eps[from]!.push(to);
        return;
      }
      case "alt":
        for (const item of l.items) this.into(item, from, to, encoding, bodyStates);
        return;
      case "rep": {
        if (l.sep) {
          this.list(l.item, l.sep, l.min, l.max, from, to, encoding, bodyStates);
          return;
        }
        let at = from;
        for (let i = 0; i < l.min; i++) {
          const next = this.add();
          this.into(l.item, at, next, encoding, bodyStates);
          at = next;
        }
        if (l.max === Infinity) {
          const loop = this.add();
          this.eps[at]!.push(loop);
          const back = this.add();
          this.into(l.item, loop, back, encoding, bodyStates);
          this.eps[back]!.push(loop);
          this.eps[loop]!.push(to);
          return;
        }
        for (let i = l.min; i < l.max; i++) {
          this.eps[at]!.push(to);
          const next = i === l.max - 1 ? to : this.add();
          this.into(l.item, at, next, encoding, bodyStates);
          at = next;
        }
        if (l.min === l.max) this.eps[at]!.push(to);
        return;
      }
      case "dfa": {
        const { size, start, trans, accepting } = l.dfa;
        const ids = Array.from({ length: size }, () => this.add());
        this.eps[from]!.push(ids[start]!);
        for (let q = 0; q < size; q++) {
          if (accepting[q]) this.eps[ids[q]!]!.push(to);
          for (let b = 0; b < 256; ) {
            const t = trans[q * 256 + b]!;
            let e = b + 1;
            while (e < 256 && trans[q * 256 + e] === t) e++;
            if (t >= 0) this.edges[ids[q]!]!.push({ lo: b, hi: e - 1, to: ids[t]!, units: 0 });
            b = e;
          }
        }
        return;
      }
      case "object": {
        // Two lanes per member: before anything was written (no comma), and after.
        const lanes = l.members.length + 1;
        const first = Array.from({ length: lanes }, () => this.add());
        const after = Array.from({ length: lanes }, () => this.add());
        const ws = l.ws;
        const lit = (text: string): Lang => ({ k: "literal", text });
        const comma: Lang = { k: "seq", items: [ws, lit(","), ws] };
        const colon: Lang = { k: "seq", items: [ws, lit(":"), ws] };
        this.into({ k: "seq", items: [lit("{"), ws] }, from, first[0]!, encoding, bodyStates);
        l.members.forEach((m, i) => {
          const value = this.add();
          const end = this.add();
          this.into({ k: "seq", items: [lit(m.key), colon] }, first[i]!, value, encoding, bodyStates);
          this.into({ k: "seq", items: [comma, lit(m.key), colon] }, after[i]!, value, encoding, bodyStates);
          this.into(m.value, value, end, encoding, bodyStates);
          this.eps[end]!.push(after[i + 1]!);
          if (!m.required) {
            this.eps[first[i]!]!.push(first[i + 1]!);
            this.eps[after[i]!]!.push(after[i + 1]!);
          }
        });
        const last = lanes - 1;
        if (l.rest) {
          // Further pairs, each through one copy of the key and value.
          const key = this.add();
          const sep = this.add();
          const value = this.add();
          this.eps[first[last]!]!.push(key);
          this.into(comma, after[last]!, key, encoding, bodyStates);
          this.into(l.rest.key, key, sep, encoding, bodyStates);
          this.into(colon, sep, value, encoding, bodyStates);
          this.into(l.rest.value, value, after[last]!, encoding, bodyStates);
        }
        const close: Lang = { k: "seq", items: [ws, lit("}")] };
        this.into(close, first[last]!, to, encoding, bodyStates);
        this.into(close, after[last]!, to, encoding, bodyStates);
        return;
      }
      case "text": {
        const close = l.quoted ? 0x22 : (l.close ?? -1);
        if (close > 0x7f) throw new GrammarError("a counted text's closing character must be ASCII", l.pointer);
        const body = bodyDfa(l.body, l.quoted ? "json" : "utf8", bodyStates, l.pointer);
        if (close >= 0 && !l.quoted) {
          for (let s = 0; s < body.size; s++)
            if (body.trans[s * 256 + close]! >= 0) throw new GrammarError(`a counted text closed by ${JSON.stringify(String.fromCharCode(close))} may not hold that character`, l.pointer);
        }
        const gate = this.add();
        this.gate[gate] = this.texts.length;
        if (l.quoted) this.bytes(literalBytes('"'), from, gate, 0);
        else this.eps[from]!.push(gate);
        this.texts.push({ body, min: l.min, max: l.max, quoted: l.quoted, close, exit: to, pointer: l.pointer });
        return;
      }
    }
  }

  /**
   * item (sep item)* with min..max items. Past the items it must have, an unbounded list loops
   * back through one copy of the item (a bounded one needs a copy per item).
   */
  private list(item: Lang, sep: Lang, min: number, max: number, from: number, to: number, encoding: Encoding, bodyStates: number): void {
    if (min === 0) this.eps[from]!.push(to);
    if (max === Infinity) {
      let at = from;
      for (let i = 1; i < min; i++) {
        const mid = this.add();
        const next = this.add();
        this.into(item, at, mid, encoding, bodyStates);
        this.into(sep, mid, next, encoding, bodyStates);
        at = next;
      }
      const start = this.add();
      const end = this.add();
      this.eps[at]!.push(start);
      this.into(item, start, end, encoding, bodyStates);
      const back = this.add();
      this.into(sep, end, back, encoding, bodyStates);
      this.eps[back]!.push(start);
      this.eps[end]!.push(to);
      return;
    }
    let at = from;
    for (let i = 1; i <= max; i++) {
      const end = i === max ? to : this.add();
      this.into(item, at, end, encoding, bodyStates);
      if (i >= min && i < max) this.eps[end]!.push(to);
      if (i < max) {
        const next = this.add();
        this.into(sep, end, next, encoding, bodyStates);
        at = next;
      }
    }
  }

  /** A chain of byte ranges from `from` to `to`; the last byte carries `units`. */
  private bytes(seq: ByteSeq, from: number, to: number, units: number): void {
    let at = from;
    seq.forEach(([lo, hi], i) => {
      const last = i === seq.length - 1;
      const next = last ? to : this.add(units);
      this.edges[at]!.push({ lo, hi, to: next, units: last ? units : 0 });
      at = next;
    });
    if (seq.length === 0) this.eps[from]!.push(to);
  }

  /** The states reachable from `states` by empty moves (gates included, not entered). */
  closure(states: Iterable<number>): number[] {
    const seen = new Set<number>();
    const stack = [...states];
    while (stack.length) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      for (const t of this.eps[s]!) stack.push(t);
    }
    return [...seen].sort((a, b) => a - b);
  }
}

/**
 * A counted string's body as a DFA over bytes: state 0 starts, `trans[s * 256 + b]` is the next
 * state (-1: no such byte), `units` what that byte completes, `pend[s]` the units of the character
 * in progress, `accepting[s]` whether the text may end here (on a character boundary).
 */
export interface BodyDfa {
  readonly size: number;
  readonly trans: Int32Array;
  readonly units: Uint8Array;
  readonly pend: Uint8Array;
  readonly accepting: Uint8Array;
}

const BODY_STATES = 20_000;

/** Bodies compiled lately, by language: most strings are free text, compiled once. */
const bodies = new Map<string, BodyDfa>();

function bodyDfa(body: Lang, encoding: Encoding, maxStates: number, pointer: string): BodyDfa {
  const key = `${encoding}:${JSON.stringify(body)}`;
  let dfa = bodies.get(key);
  if (!dfa) {
    const nfa = new Nfa(maxStates);
    const b = nfa.build(body, encoding, maxStates);
    // One counter per string: a bounded group inside a string's pattern would need a second.
    if (nfa.texts.length > 0) throw new GrammarError("a counted text may not hold another (a bounded group inside a string's pattern)", pointer);
    dfa = minimizeBody(determinizeBody(nfa, b.start, b.end, pointer));
    if (bodies.size >= 256) bodies.delete(bodies.keys().next().value!);
    bodies.set(key, dfa);
  }
  return dfa;
}

function determinizeBody(nfa: Nfa, start: number, end: number, pointer: string): BodyDfa {
  const sets: number[][] = [];
  const index = new Map<string, number>();
  const intern = (set: number[]): number => {
    const key = set.join(",");
    let id = index.get(key);
    if (id === undefined) {
      if (sets.length >= BODY_STATES) throw new GrammarError(`the string's pattern is too large to compile (over ${BODY_STATES} states)`, pointer);
      id = sets.length;
      sets.push(set);
      index.set(key, id);
    }
    return id;
  };
  intern(nfa.closure([start]));
  const trans: number[] = [];
  const units: number[] = [];
  for (let s = 0; s < sets.length; s++) {
    const set = sets[s]!;
    for (let b = 0; b < 256; b++) {
      const next: number[] = [];
      let w = -1;
      for (const q of set) {
        for (const e of nfa.edges[q]!) {
          if (b < e.lo || b > e.hi) continue;
          next.push(e.to);
          if (w >= 0 && w !== e.units) throw new Error("internal error: a byte completes characters of different lengths");
          w = e.units;
        }
      }
      if (next.length === 0) {
        trans.push(-1);
        units.push(0);
      } else {
        trans.push(intern(nfa.closure(next)));
        units.push(w);
      }
    }
  }
  return {
    size: sets.length,
    trans: Int32Array.from(trans),
    units: Uint8Array.from(units),
    pend: Uint8Array.from(sets, (set) => Math.max(...set.map((q) => nfa.pend[q]!))),
    accepting: Uint8Array.from(sets, (set) => (set.includes(end) ? 1 : 0)),
  };
}

/**
 * The body's smallest DFA (Moore's partition refinement): states that accept alike, are as deep
 * in a character (pend) and go, byte by byte, to equivalent states completing as many units, are
 * one. A counted text is laid out as (count, body state), so the body's size multiplies its
 * bound: a response's body (text without its closing tag, then that tag) shrinks several times.
 * The start stays state 0.
 */
function minimizeBody(d: BodyDfa): BodyDfa {
  const n = d.size;
  let block = new Int32Array(n);
  let count = 0;
  const relabel = (key: (s: number) => string): number => {
    const ids = new Map<string, number>();
    const next = new Int32Array(n);
    for (let s = 0; s < n; s++) {
      const k = key(s);
      let id = ids.get(k);
      if (id === undefined) ids.set(k, (id = ids.size));
      next[s] = id;
    }
    block = next;
    return ids.size;
  };
  count = relabel((s) => `${d.accepting[s]},${d.pend[s]}`);
  for (;;) {
    const before = block;
    const c = relabel((s) => {
      let k = `${before[s]}`;
      for (let b = 0; b < 256; b++) {
        const t = d.trans[s * 256 + b]!;
        k += t < 0 ? ",-" : `,${before[t]}:${d.units[s * 256 + b]}`;
      }
      return k;
    });
    if (c === count) break;
    count = c;
  }
  if (count === n) return d;
  const trans = new Int32Array(count * 256).fill(-1);
  const units = new Uint8Array(count * 256);
  const pend = new Uint8Array(count);
  const accepting = new Uint8Array(count);
  for (let s = 0; s < n; s++) {
    const to = block[s]!;
    pend[to] = d.pend[s]!;
    accepting[to] = d.accepting[s]!;
    for (let b = 0; b < 256; b++) {
      const t = d.trans[s * 256 + b]!;
      trans[to * 256 + b] = t < 0 ? -1 : block[t]!;
      units[to * 256 + b] = d.units[s * 256 + b]!;
    }
  }
  return { size: count, trans, units, pend, accepting };
}

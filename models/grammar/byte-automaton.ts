/**
 * The byte-level DFA of a language: what may come next after any prefix of bytes.
 *
 * Built by the subset construction from the NFA, with one exception that keeps long strings
 * cheap: a counted string (a JSON string, a pattern's bounded group, raw text that ends the
 * language) is a region of states (text, count, body state), laid out as
 * `base + count * stride + bodyState`, that is never expanded into sets; while the automaton is
 * inside one string (a set holding that one position) its next state is computed from the
 * string's small body DFA and the count. Sets that mix a string with other positions (an enum
 * value and a free string that start alike) are ordinary explicit states.
 *
 * State ids: counted states first ([0, countedStates)), then the explicit ones. Also here: each
 * state's distance (in bytes) to the end of the language, the bound that lets a sampler finish
 * within its token budget.
 */
import { GrammarError } from "./errors.js";
import type { Nfa, TextPart } from "./nfa.js";

export const DEAD = -1;
export const UNREACHABLE = 0x7fffffff;

/** A counted string as the automaton lays it out. */
export interface TextLayout extends TextPart {
  readonly base: number;
  readonly stride: number;
  /** Highest count kept: max, or min when unbounded (counts past min are all alike). */
  readonly cap: number;
  /** The state after the closing byte (raw text that ends the language: none, -1). */
  exitState: number;
}

export interface ByteAutomatonLimits {
  /** Explicit (set) states at most. */
  readonly maxExplicit: number;
  /** Counted string states at most (every string's (max + 1) x body states). */
  readonly maxCounted: number;
}

export class ByteAutomaton {
  readonly texts: TextLayout[];
  readonly countedStates: number;
  start: number;
  /** Explicit states: next state per byte ([i * 256 + b], -1 dead). */
  readonly trans: Int32Array;
  explicitAccepting: Uint8Array;
  private readonly textOf: Int32Array;
  /** Bytes to the end of the language from each state (UNREACHABLE when it cannot end). */
  distance: Int32Array;

  constructor(nfa: Nfa, start: number, final: number, limits: ByteAutomatonLimits) {
    let counted = 0;
    this.texts = nfa.texts.map((t) => {
      const cap = Number.isFinite(t.max) ? t.max : t.min;
      const layout: TextLayout = { ...t, base: counted, stride: t.body.size, cap, exitState: DEAD };
      counted += (cap + 1) * t.body.size;
      if (counted > limits.maxCounted) throw new GrammarError(`strings too long to compile (over ${limits.maxCounted} counted states; lower maxLength)`, t.pointer);
      return layout;
    });
    this.countedStates = counted;
    this.textOf = new Int32Array(counted);
    for (const [i, t] of this.texts.entries()) this.textOf.fill(i, t.base, t.base + (t.cap + 1) * t.stride);

    const N = nfa.size;
    const sets: number[][] = [];
    const index = new Map<string, number>();
    // Strings entered so far whose exit state is still to be made.
    const touched: number[] = [];
    // A set of positions (NFA states < N, counted positions N + id) as a state id.
    const resolve = (positions: number[]): number => {
      if (positions.length === 0) return DEAD;
      if (positions.length === 1 && positions[0]! >= N) {
        const id = positions[0]! - N;
        const t = this.texts[this.textOf[id]!]!;
        if (t.exitState === DEAD && t.close >= 0) touched.push(this.textOf[id]!);
        return id;
      }
      const key = positions.join(",");
      let i = index.get(key);
      if (i === undefined) {
        if (sets.length >= limits.maxExplicit) throw new GrammarError(`the language is too large to compile (over ${limits.maxExplicit} automaton states)`);
        i = sets.length;
        sets.push(positions);
        index.set(key, i);
      }
      return counted + i;
    };
    const closure = (states: number[]): number[] => {
      const out = new Set<number>();
      for (const q of nfa.closure(states)) {
        const g = nfa.gate[q]!;
        out.add(g >= 0 ? N + this.texts[g]!.base : q);
      }
      return [...out].sort((a, b) => a - b);
    };
    const exitSets = this.texts.map((t) => closure([t.exit]));
    for (const [i, t] of this.texts.entries()) {
      if (t.close < 0 && (exitSets[i]!.length !== 1 || exitSets[i]![0] !== final || nfa.edges[final]!.length > 0 || nfa.eps[final]!.length > 0))
        throw new GrammarError("raw text must end the language", t.pointer);
    }
    const stepSet = (set: number[], b: number): number[] => {
      const nfaNext: number[] = [];
      const out = new Set<number>();
      for (const p of set) {
        if (p < N) {
          for (const e of nfa.edges[p]!) if (b >= e.lo && b <= e.hi) nfaNext.push(e.to);
          continue;
        }
        const id = p - N;
        const t = this.texts[this.textOf[id]!]!;
        const r = this.countedStep(t, id, b);
        if (r === CLOSE) for (const q of exitSets[this.textOf[id]!]!) out.add(q);
        else if (r !== DEAD) out.add(N + r);
      }
      if (nfaNext.length) for (const q of closure(nfaNext)) out.add(q);
      return [...out].sort((a, b) => a - b);
    };

    // Bytes that every member of a set treats alike step alike: one step per run of them.
    const cuts = (set: number[]): number[] => {
      const at = new Set<number>([0, 256]);
      for (const p of set) {
        if (p < N) {
          for (const e of nfa.edges[p]!) at.add(e.lo).add(e.hi + 1);
          continue;
        }
        const t = this.texts[this.textOf[p - N]!]!;
        const row = ((p - N - t.base) % t.stride) * 256;
        if (t.close >= 0) at.add(t.close).add(t.close + 1);
        for (let b = 1; b < 256; b++) if (t.body.trans[row + b] !== t.body.trans[row + b - 1] || t.body.units[row + b] !== t.body.units[row + b - 1]) at.add(b);
      }
      return [...at].sort((a, b) => a - b);
    };

    this.start = resolve(closure([start]));
    // Transitions as runs: state i's are runs[runStart[i] ..], pairs (first byte, target).
    const runs: number[] = [];
    const runStart: number[] = [];
    const accepting: number[] = [];
    let done = 0;
    const finishTouched = () => {
      while (touched.length) {
        const i = touched.pop()!;
        if (this.texts[i]!.exitState === DEAD) this.texts[i]!.exitState = resolve(exitSets[i]!);
      }
    };
    finishTouched();
    while (done < sets.length) {
      const set = sets[done++]!;
      const at = cuts(set);
      runStart.push(runs.length);
      let prev = NaN;
      for (let k = 0; k + 1 < at.length; k++) {
        const to = resolve(stepSet(set, at[k]!));
        if (to !== prev) runs.push(at[k]!, to);
        prev = to;
      }
      accepting.push(set.some((p) => p === final || (p >= N && this.countedAccepts(p - N))) ? 1 : 0);
      finishTouched();
    }
    runStart.push(runs.length);
    this.explicitAccepting = Uint8Array.from(accepting);
    for (const t of this.texts) {
      if (t.close >= 0 && t.exitState !== DEAD && t.exitState < counted) throw new Error("internal error: a string is followed directly by another string");
    }
    const r = { runs: Int32Array.from(runs), runStart: Int32Array.from(runStart) };
    this.distance = this.distances(r);
    this.trans = this.minimize(r);
  }

  /**
   * Drops the explicit states that cannot reach the end and merges those with the same future
   * (Moore's partition refinement; counted states and dead ends are fixed atoms). The subset
   * construction leaves many such twins: a number's digit lanes, an enum's shared suffixes.
   */
  private minimize({ runs, runStart }: Runs): Int32Array {
    const C = this.countedStates;
    const E = this.explicitAccepting.length;
    const D = this.distance;
    let cls = new Int32Array(E);
    for (let i = 0; i < E; i++) cls[i] = D[C + i] === UNREACHABLE ? -1 : this.explicitAccepting[i]!;
    let count = -1;
    // A state's signature: its class, then (first byte, class or atom of the target) per run.
    const sig: number[] = [];
    const signature = (i: number): number[] => {
      sig.length = 0;
      sig.push(cls[i]!);
      let prev = NaN;
      for (let k = runStart[i]!; k < runStart[i + 1]!; k += 2) {
        const t = runs[k + 1]!;
        const atom = t === DEAD || D[t] === UNREACHABLE ? -1 : t < C ? t : -2 - cls[t - C]!;
        if (atom !== prev) sig.push(runs[k]!, atom);
        prev = atom;
      }
      return sig;
    };
    for (;;) {
      // Signatures hashed; states in one bucket compared in full.
      const buckets = new Map<number, { sig: number[]; id: number }[]>();
      const next = new Int32Array(E);
      let ids = 0;
      for (let i = 0; i < E; i++) {
        if (cls[i]! < 0) {
          next[i] = -1;
          continue;
        }
        const g = signature(i);
        let h = 0x811c9dc5;
        for (const x of g) h = Math.imul(h ^ x, 0x01000193);
        let bucket = buckets.get(h);
        if (!bucket) buckets.set(h, (bucket = []));
        let hit = bucket.find((e) => e.sig.length === g.length && e.sig.every((x, j) => x === g[j]));
        if (!hit) bucket.push((hit = { sig: [...g], id: ids++ }));
        next[i] = hit.id;
      }
      cls = next;
      if (ids === count) break;
      count = ids;
    }
    const map = (t: number): number => (t === DEAD || D[t] === UNREACHABLE ? DEAD : t < C ? t : C + cls[t - C]!);
    const trans = new Int32Array(count * 256);
    const accepting = new Uint8Array(count);
    const distance = new Int32Array(C + count);
    distance.set(D.subarray(0, C));
    const done = new Uint8Array(count);
    for (let i = 0; i < E; i++) {
      const c = cls[i]!;
      if (c < 0 || done[c]) continue;
      done[c] = 1;
      for (let k = runStart[i]!; k < runStart[i + 1]!; k += 2) {
        const end = k + 2 < runStart[i + 1]! ? runs[k + 2]! : 256;
        trans.fill(map(runs[k + 1]!), c * 256 + runs[k]!, c * 256 + end);
      }
      accepting[c] = this.explicitAccepting[i]!;
      distance[C + c] = D[C + i]!;
    }
    if (this.start >= C && map(this.start) === DEAD) throw new GrammarError("the language is empty");
    this.start = map(this.start);
    for (const t of this.texts) if (t.exitState >= C) t.exitState = map(t.exitState);
    this.explicitAccepting = accepting;
    this.distance = distance;
    return trans;
  }

  get size(): number {
    return this.countedStates + this.explicitAccepting.length;
  }

  isCounted(state: number): boolean {
    return state < this.countedStates;
  }

  /** The counted string of a counted state, its count and body state. */
  counted(state: number): { text: TextLayout; textIndex: number; count: number; body: number } {
    const textIndex = this.textOf[state]!;
    const text = this.texts[textIndex]!;
    const off = state - text.base;
    return { text, textIndex, count: Math.floor(off / text.stride), body: off % text.stride };
  }

  step(state: number, b: number): number {
    if (state >= this.countedStates) return this.trans[(state - this.countedStates) * 256 + b]!;
    const t = this.texts[this.textOf[state]!]!;
    const r = this.countedStep(t, state, b);
    return r === CLOSE ? t.exitState : r;
  }

  accepts(state: number): boolean {
    return state >= this.countedStates ? this.explicitAccepting[state - this.countedStates] === 1 : this.countedAccepts(state);
  }

  /** Whether `bytes` (from the start) is a complete word of the language. */
  matches(bytes: Uint8Array): boolean {
    let s = this.start;
    for (const b of bytes) {
      s = this.step(s, b);
      if (s === DEAD) return false;
    }
    return this.accepts(s);
  }

  private countedAccepts(id: number): boolean {
    const t = this.texts[this.textOf[id]!]!;
    if (t.close >= 0) return false;
    const off = id - t.base;
    return t.body.accepting[off % t.stride] === 1 && Math.floor(off / t.stride) >= t.min;
  }

  /** A counted state's next state on byte b: a counted state, CLOSE (the string ends), or DEAD. */
  private countedStep(t: TextLayout, id: number, b: number): number {
    const off = id - t.base;
    const sigma = off % t.stride;
    const c = (off - sigma) / t.stride;
    const body = t.body;
    const next = body.trans[sigma * 256 + b]!;
    if (next >= 0) {
      const c2 = fits(t, c, next, body.units[sigma * 256 + b]!);
      return c2 < 0 ? DEAD : t.base + c2 * t.stride + next;
    }
    if (b === t.close && body.accepting[sigma] === 1 && c >= t.min) return CLOSE;
    return DEAD;
  }

  /**
   * Bytes to the end from every state: inside a string, the fewest bytes that finish it (its
   * minimum length, the character in progress, the closing byte) plus the distance after it;
   * elsewhere, a shortest path (Dijkstra, the strings as weighted edges to their exits).
   */
  private distances({ runs, runStart }: Runs): Int32Array {
    // Strings alike (one body, bounds and closing byte: a reply's states) share their distances.
    const alike = new Map<string, Int32Array>();
    const bodyIds = new Map<object, number>();
    const within = this.texts.map((t) => {
      if (!bodyIds.has(t.body)) bodyIds.set(t.body, bodyIds.size);
      const key = `${bodyIds.get(t.body)},${t.min},${t.max},${t.close}`;
      let h = alike.get(key);
      if (!h) alike.set(key, (h = textDistances(t)));
      return h;
    });
    const C = this.countedStates;
    const E = this.explicitAccepting.length;
    const D = new Int32Array(C + E).fill(UNREACHABLE);
    // Reverse edges between explicit states (and from explicit states to string exits).
    const succ: { to: number; w: number }[][] = Array.from({ length: E }, () => []);
    for (let i = 0; i < E; i++) {
      const seen = new Set<number>();
      for (let k = runStart[i]!; k < runStart[i + 1]!; k += 2) {
        const t = runs[k + 1]!;
        if (t === DEAD || seen.has(t)) continue;
        seen.add(t);
        if (t >= C) succ[i]!.push({ to: t - C, w: 1 });
        else {
          const { text, textIndex } = this.counted(t);
          const h = within[textIndex]![t - text.base]!;
          if (h === UNREACHABLE) continue;
          if (text.close < 0) succ[i]!.push({ to: -1, w: 1 + h });
          else if (text.exitState !== DEAD) succ[i]!.push({ to: text.exitState - C, w: 1 + h });
        }
      }
    }
    const pred: { from: number; w: number }[][] = Array.from({ length: E + 1 }, () => []);
    succ.forEach((list, from) => list.forEach(({ to, w }) => pred[to < 0 ? E : to]!.push({ from, w })));
    const dist = new Float64Array(E + 1).fill(Infinity);
    const heap = new MinHeap();
    for (let i = 0; i < E; i++) if (this.explicitAccepting[i]) heap.push(0, i);
    heap.push(0, E); // the end of raw text
    while (heap.size) {
      const [d, n] = heap.pop();
      if (d >= dist[n]!) continue;
      dist[n] = d;
      for (const { from, w } of pred[n]!) if (d + w < dist[from]!) heap.push(d + w, from);
    }
    for (let i = 0; i < E; i++) D[C + i] = Number.isFinite(dist[i]!) ? dist[i]! : UNREACHABLE;
    for (const [i, t] of this.texts.entries()) {
      const after = t.close >= 0 ? (t.exitState === DEAD ? UNREACHABLE : D[t.exitState]!) : 0;
      const h = within[i]!;
      for (let k = 0; k < h.length; k++) D[t.base + k] = h[k] === UNREACHABLE || after === UNREACHABLE ? UNREACHABLE : h[k]! + after;
    }
    return D;
  }
}

const CLOSE = -2;

/** Explicit states' transitions while the automaton is built: (first byte, target) pairs per state. */
interface Runs {
  readonly runs: Int32Array;
  readonly runStart: Int32Array;
}

/**
 * The count after a move into body state `to` that completes `units`, or -1 when the move breaks
 * the string's bounds: the character in progress must fit under max (counted in UTF-16 units,
 * as zod's max() counts), and a character outside the BMP may only start once min is reached.
 * That last rule keeps min true however a validator counts: UTF-16 units (zod's min()) or code
 * points (JSON Schema's minLength), since every character before it counted one in both.
 */
export function fits(t: TextLayout, c: number, to: number, units: number): number {
  const c2 = c + units;
  const pend = t.body.pend[to]!;
  if (c2 + pend > t.max) return -1;
  if (pend === 2 && c < t.min) return -1;
  return Math.min(c2, t.cap);
}

/**
 * Bytes from each (count, body state) of a string to its end (the closing byte included; raw
 * text that ends the language: to an accepting boundary with count >= min). Counts only grow, so counts are done from
 * the highest down; within one count, a byte that completes no character moves one byte deeper
 * into the character, so body states are done deepest first (and the saturated count of an
 * unbounded string, whose completed characters come back to it, is relaxed until it settles).
 */
function textDistances(t: TextLayout): Int32Array {
  const { body, stride, cap } = t;
  const moveTo: number[][] = [];
  const moveUnits: number[][] = [];
  for (let s = 0; s < stride; s++) {
    const seen = new Set<number>();
    moveTo.push([]);
    moveUnits.push([]);
    for (let b = 0; b < 256; b++) {
      const to = body.trans[s * 256 + b]!;
      const key = to * 8 + body.units[s * 256 + b]!;
      if (to < 0 || seen.has(key)) continue;
      seen.add(key);
      moveTo[s]!.push(to);
      moveUnits[s]!.push(body.units[s * 256 + b]!);
    }
  }
  // Depth in the character being written (0 on a boundary).
  const depth = new Int32Array(stride).fill(-1);
  depth[0] = 0;
  for (const queue = [0]; queue.length; ) {
    const s = queue.shift()!;
    moveTo[s]!.forEach((to, k) => {
      if (depth[to]! < 0) {
        depth[to] = moveUnits[s]![k]! > 0 ? 0 : depth[s]! + 1;
        queue.push(to);
      }
    });
  }
  const order = Array.from({ length: stride }, (_, s) => s).sort((a, b) => depth[b]! - depth[a]!);
  const h = new Int32Array((cap + 1) * stride).fill(UNREACHABLE);
  const end = t.close >= 0 ? 1 : 0;
  const saturates = !Number.isFinite(t.max);
  for (let c = cap; c >= 0; c--) {
    for (let pass = 0; pass < (saturates && c === cap ? stride + 1 : 1); pass++) {
      let changed = false;
      for (const s of order) {
        let best = body.accepting[s] && c >= t.min ? end : UNREACHABLE;
        const tos = moveTo[s]!;
        const us = moveUnits[s]!;
        for (let k = 0; k < tos.length; k++) {
          const c2 = fits(t, c, tos[k]!, us[k]!);
          if (c2 < 0) continue;
          const d = h[c2 * stride + tos[k]!]!;
          if (d !== UNREACHABLE && d + 1 < best) best = d + 1;
        }
        if (best < h[c * stride + s]!) {
          h[c * stride + s] = best;
          changed = true;
        }
      }
      if (!changed) break;
    }
  }
  return h;
}

/** A binary min-heap of (priority, value) pairs. */
export class MinHeap {
  private readonly keys: number[] = [];
  private readonly vals: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(key: number, val: number): void {
    const k = this.keys;
    const v = this.vals;
    k.push(key);
    v.push(val);
    let i = k.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (k[p]! <= k[i]!) break;
      [k[p], k[i]] = [k[i]!, k[p]!];
      [v[p], v[i]] = [v[i]!, v[p]!];
      i = p;
    }
  }

  pop(): [number, number] {
    const k = this.keys;
    const v = this.vals;
    const top: [number, number] = [k[0]!, v[0]!];
    const lk = k.pop()!;
    const lv = v.pop()!;
    if (k.length > 0) {
      k[0] = lk;
      v[0] = lv;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < k.length && k[l]! < k[m]!) m = l;
        if (r < k.length && k[r]! < k[m]!) m = r;
        if (m === i) break;
        [k[m], k[i]] = [k[i]!, k[m]!];
        [v[m], v[i]] = [v[i]!, v[m]!];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Seeded pseudo-random numbers (sfc32 seeded through splitmix32).
 *
 * Worlds never touch Math.random: every draw comes from an Rng whose whole state is four
 * uint32 words, so an episode replays exactly from its seed, and a stream can be saved and
 * resumed (`state()` / `Rng.fromState`).
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  private constructor(a: number, b: number, c: number, d: number) {
    this.a = a >>> 0;
    this.b = b >>> 0;
    this.c = c >>> 0;
    this.d = d >>> 0;
  }

  /** A generator for `seed`; strings are hashed so that named streams ("tomi:42") are stable. */
  static seeded(seed: number | string): Rng {
    let h = typeof seed === "number" ? seed >>> 0 : hashString(seed);
    const next = () => {
      h = (h + 0x9e3779b9) >>> 0;
      let z = h;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    const rng = new Rng(next(), next(), next(), next());
    // Discard the first outputs: sfc32 mixes poorly right after seeding.
    for (let i = 0; i < 12; i++) rng.uint32();
    return rng;
  }

  static fromState(state: readonly number[]): Rng {
    if (state.length !== 4) throw new Error(`Rng state must have 4 words, got ${state.length}`);
    return new Rng(state[0]!, state[1]!, state[2]!, state[3]!);
  }

  state(): [number, number, number, number] {
    return [this.a, this.b, this.c, this.d];
  }

  /** An independent stream derived from this one's current state and a label. */
  fork(label: string): Rng {
    return Rng.seeded(hashString(`${this.a}:${this.b}:${this.c}:${this.d}:${label}`));
  }

  uint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`Rng.int needs a positive integer, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("Rng.pick from an empty list");
    return items[this.int(items.length)]!;
  }

  /** `k` distinct items, in random order. */
  sample<T>(items: readonly T[], k: number): T[] {
    if (k > items.length) throw new RangeError(`cannot sample ${k} of ${items.length} items`);
    return this.shuffle(items).slice(0, k);
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = out[i]!;
      out[i] = out[j]!;
      out[j] = tmp;
    }
    return out;
  }
}

/** FNV-1a, 32 bit. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

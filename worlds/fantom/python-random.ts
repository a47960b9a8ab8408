/**
 * Python's `random` module (MT19937, seeded as `random.seed(int)` seeds it), far enough to
 * replay what FANToM's official evaluator draws: `random.seed(99)` at import, then one
 * `random.choice([True, False])` per belief question, in file order, to decide whether the
 * correct answer is option (a) or (b). Reproducing the draw bit for bit is what makes our
 * multiple-choice prompts (and so every multiple-choice score) the official ones.
 */
const N = 624;
const M = 397;

export class PythonRandom {
  private readonly mt = new Uint32Array(N);
  private index = N + 1;

  /** `random.seed(n)` for a non-negative integer below 2**32 (Python keys it as [n]). */
  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`PythonRandom needs a uint32 seed, got ${seed}`);
    this.initByArray([seed >>> 0]);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** genrand_uint32: the next tempered 32-bit output. */
  uint32(): number {
    const mt = this.mt;
    if (this.index >= N) {
      for (let kk = 0; kk < N; kk++) {
        const y = (mt[kk]! & 0x80000000) | (mt[(kk + 1) % N]! & 0x7fffffff);
        mt[kk] = mt[(kk + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.getrandbits(k)` for 1 <= k <= 32. */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 1 || k > 32) throw new RangeError(`getrandbits needs 1..32 bits, got ${k}`);
    return this.uint32() >>> (32 - k);
  }

  /** `random.random()`: 53 random bits in [0, 1). */
  random(): number {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `random._randbelow(n)` (the getrandbits rejection sampler Python uses since 3.2). */
  randbelow(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > 0xffffffff) throw new RangeError(`randbelow needs 1..2**32-1, got ${n}`);
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `random.choice(seq)`. */
  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new RangeError("choice from an empty sequence");
    return seq[this.randbelow(seq.length)]!;
  }
}

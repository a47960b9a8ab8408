import { afterAll, describe, expect, it } from "vitest";
import { loadNative } from "../../models/native.js";
import { Rng } from "../../worlds/core/rng.js";

const native = loadNative();
const ISAS = (["generic", "avx2", "avx512"] as const).filter((isa) => ({ generic: 0, avx2: 1, avx512: 2 })[isa] <= ({ generic: 0, avx2: 1, avx512: 2 } as Record<string, number>)[native.isa().best]!);
const initial = native.isa().current as "generic" | "avx2" | "avx512";
afterAll(() => native.setIsa(initial));

function random(n: number, rng: Rng): Float32Array {
  return Float32Array.from({ length: n }, () => rng.next() * 2 - 1);
}

/** C = alpha op(A) op(B) + beta C in float64, straight from the definition. */
function reference(ta: boolean, tb: boolean, M: number, N: number, K: number, alpha: number, A: Float32Array, lda: number, B: Float32Array, ldb: number, beta: number, C: Float32Array, ldc: number): Float64Array {
  const out = new Float64Array(M * ldc);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += (ta ? A[k * lda + i]! : A[i * lda + k]!) * (tb ? B[j * ldb + k]! : B[k * ldb + j]!);
      out[i * ldc + j] = alpha * s + beta * C[i * ldc + j]!;
    }
  return out;
}

describe("native gemm", () => {
  it("matches the definition for every transpose case, odd shapes, padded leading dimensions and alpha/beta, on every instruction set", () => {
    const rng = Rng.seeded("gemm");
    const shapes = [
      [1, 1, 1],
      [3, 5, 7],
      [4, 70, 33],
      [13, 17, 300],
      [100, 37, 9],
      [160, 96, 513],
    ];
    for (const isa of ISAS) {
      native.setIsa(isa);
      for (const [M, N, K] of shapes)
        for (const ta of [false, true])
          for (const tb of [false, true]) {
            const lda = (ta ? M! : K!) + 3, ldb = (tb ? K! : N!) + 1, ldc = N! + 2;
            const A = random((ta ? K! : M!) * lda, rng), B = random((tb ? N! : K!) * ldb, rng), C = random(M! * ldc, rng);
            const want = reference(ta, tb, M!, N!, K!, 0.75, A, lda, B, ldb, -0.5, C, ldc);
            native.gemm(ta, tb, M!, N!, K!, 0.75, A, lda, B, ldb, -0.5, C, ldc);
            for (let i = 0; i < M!; i++)
              for (let j = 0; j < ldc; j++) {
                if (j >= N!) continue;
                expect(Math.abs(C[i * ldc + j]! - want[i * ldc + j]!), `${isa} ta=${ta} tb=${tb} ${M}x${N}x${K} at ${i},${j}`).toBeLessThan(1e-5 * (K! + 1));
              }
          }
    }
  });

  it("never reads C when beta is 0 (NaN there stays out of the result)", () => {
    const rng = Rng.seeded("gemm-nan");
    for (const [M, N, K] of [
      [2, 9, 5],
      [50, 40, 30],
    ]) {
      const A = random(M! * K!, rng), B = random(N! * K!, rng);
      const C = new Float32Array(M! * N!).fill(NaN);
      native.gemm(false, true, M!, N!, K!, 1, A, K!, B, K!, 0, C, N!);
      expect(C.every(Number.isFinite)).toBe(true);
    }
  });

  it("gives bit-identical results with AVX2 and AVX-512 micro-kernels (one FMA chain per element, in k order)", () => {
    if (!ISAS.includes("avx512")) return;
    const rng = Rng.seeded("gemm-bits");
    const [M, N, K] = [150, 200, 700];
    const A = random(M * K, rng), B = random(N * K, rng);
    const out = (isa: "avx2" | "avx512") => {
      native.setIsa(isa);
      const C = new Float32Array(M * N);
      native.gemm(false, true, M, N, K, 1, A, K, B, K, 0, C, N);
      return C;
    };
    expect(out("avx512")).toEqual(out("avx2"));
  });

  it("computes in float64 too (the gradient checks run there)", () => {
    const rng = Rng.seeded("gemm64");
    const [M, N, K] = [7, 11, 13];
    const A = Float64Array.from({ length: M * K }, () => rng.next() - 0.5);
    const B = Float64Array.from({ length: K * N }, () => rng.next() - 0.5);
    const C = new Float64Array(M * N);
    native.gemm(false, false, M, N, K, 1, A, K, B, N, 0, C, N);
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let s = 0;
        for (let k = 0; k < K; k++) s += A[i * K + k]! * B[k * N + j]!;
        expect(C[i * N + j]).toBeCloseTo(s, 12);
      }
  });

  it("rejects arrays too small for their shape", () => {
    expect(() => native.gemm(false, false, 4, 4, 4, 1, new Float32Array(15), 4, new Float32Array(16), 4, 0, new Float32Array(16), 4)).toThrow(/too small/);
  });
});

// Packed GEMM. The loop nest is BLIS's: for each NC-wide panel of op(B) and KC-deep slice, pack
// the slice of B into NR-wide micro-panels; for each MC-tall block of op(A), pack it into MR-tall
// micro-panels; then a register-blocked micro-kernel computes each MR x NR tile of C. Packing
// absorbs the transposes, so one micro-kernel serves all four (ta, tb) cases.
//
// Every micro-kernel accumulates each element of C in one register lane, in k order, with fused
// multiply-adds: the AVX2 and AVX-512 kernels give bit-identical results, and so does any split
// of C across threads. Threads each take a contiguous share of C's rows (or columns, when C is
// wide) and pack their own operands.
#include "gemm.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <utility>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SW_X86 1
#endif

namespace sw::cpu {
namespace {

template <typename T>
class AlignedScratch {
 public:
  ~AlignedScratch() { std::free(data_); }
  T* get(size_t n) {
    if (n > capacity_) {
      std::free(data_);
      size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
      data_ = static_cast<T*>(std::aligned_alloc(64, bytes));
      if (!data_) throw std::bad_alloc();
      capacity_ = n;
    }
    return data_;
  }

 private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

template <typename T>
T* pack_a_scratch(size_t n) {
  thread_local AlignedScratch<T> s;
  return s.get(n);
}
template <typename T>
T* pack_b_scratch(size_t n) {
  thread_local AlignedScratch<T> s;
  return s.get(n);
}

template <typename T>
using MicroKernel = void (*)(int kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta, int mr, int nr);

template <typename T>
struct KernelSpec {
  MicroKernel<T> fn;
  int mr, nr;  // register tile
  int kc, mc, nc;  // cache blocks (mc a multiple of mr, nc of nr)
};

// Writes alpha * acc (+ beta * C) for the valid mr x nr corner of a tile.
template <typename T, int MR, int NR>
inline void store_tile(const T* acc, T* c, int64_t ldc, T alpha, T beta, int mr, int nr) {
  for (int i = 0; i < mr; i++) {
    T* ci = c + i * ldc;
    for (int j = 0; j < nr; j++) {
      T v = alpha * acc[i * NR + j];
      ci[j] = beta == T(0) ? v : v + beta * ci[j];
    }
  }
}

template <typename T, int MR, int NR>
void micro_generic(int kc, const T* a, const T* b, T* c, int64_t ldc, T alpha, T beta, int mr, int nr) {
  T acc[MR * NR] = {};
  for (int k = 0; k < kc; k++) {
    const T* ak = a + k * MR;
    const T* bk = b + k * NR;
    for (int i = 0; i < MR; i++) {
      const T ai = ak[i];
      for (int j = 0; j < NR; j++) acc[i * NR + j] += ai * bk[j];
    }
  }
  store_tile<T, MR, NR>(acc, c, ldc, alpha, beta, mr, nr);
}

#ifdef SW_X86
template <int MR>
__attribute__((target("avx2,fma"))) void micro_avx2(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                                                     int mr, int nr) {
  __m256 acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int k = 0; k < kc; k++) {
    const __m256 b0 = _mm256_load_ps(b + k * 16);
    const __m256 b1 = _mm256_load_ps(b + k * 16 + 8);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      const __m256 ai = _mm256_broadcast_ss(a + k * MR + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (mr == MR && nr == 16) {
    const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      float* ci = c + i * ldc;
      __m256 r0 = _mm256_mul_ps(va, acc[i][0]);
      __m256 r1 = _mm256_mul_ps(va, acc[i][1]);
      if (beta != 0.0f) {
        r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);
        r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r1);
      }
      _mm256_storeu_ps(ci, r0);
      _mm256_storeu_ps(ci + 8, r1);
    }
    return;
  }
  alignas(64) float tmp[MR * 16];
  for (int i = 0; i < MR; i++) {
    _mm256_store_ps(tmp + i * 16, acc[i][0]);
    _mm256_store_ps(tmp + i * 16 + 8, acc[i][1]);
  }
  store_tile<float, MR, 16>(tmp, c, ldc, alpha, beta, mr, nr);
}

template <int MR>
__attribute__((target("avx512f,fma"))) void micro_avx512(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                                          float beta, int mr, int nr) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int k = 0; k < kc; k++) {
    const __m512 b0 = _mm512_load_ps(b + k * 32);
    const __m512 b1 = _mm512_load_ps(b + k * 32 + 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      const __m512 ai = _mm512_set1_ps(a[k * MR + i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha);
  if (mr == MR && nr == 32) {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      float* ci = c + i * ldc;
      __m512 r0 = _mm512_mul_ps(va, acc[i][0]);
      __m512 r1 = _mm512_mul_ps(va, acc[i][1]);
      if (beta != 0.0f) {
        r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci), r0);
        r1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16), r1);
      }
      _mm512_storeu_ps(ci, r0);
      _mm512_storeu_ps(ci + 16, r1);
    }
    return;
  }
  alignas(64) float tmp[MR * 32];
  for (int i = 0; i < MR; i++) {
    _mm512_store_ps(tmp + i * 32, acc[i][0]);
    _mm512_store_ps(tmp + i * 32 + 16, acc[i][1]);
  }
  store_tile<float, MR, 32>(tmp, c, ldc, alpha, beta, mr, nr);
}
#endif

// Register tiles and cache blocks per instruction set. kc * nr * sizeof(T) (one micro-panel of
// B) stays in L1; mc * kc (a packed block of A) in L2; kc * nc (a packed panel of B) in L3.
template <typename T>
KernelSpec<T> kernel_spec(Isa isa);

template <>
KernelSpec<float> kernel_spec<float>(Isa isa) {
#ifdef SW_X86
  if (isa == Isa::avx512) return {micro_avx512<12>, 12, 32, 256, 144, 3072};
  if (isa == Isa::avx2) return {micro_avx2<6>, 6, 16, 256, 144, 3072};
#endif
  (void)isa;
  return {micro_generic<float, 4, 16>, 4, 16, 256, 128, 2048};
}

template <>
KernelSpec<double> kernel_spec<double>(Isa) {
  return {micro_generic<double, 4, 8>, 4, 8, 256, 128, 2048};
}

// op(A) rows [i0, i0 + mc) x cols [k0, k0 + kc) into MR-row micro-panels, k-major, zero-padded.
template <typename T>
void pack_a(T* dst, const T* A, int64_t lda, bool ta, int i0, int mc, int k0, int kc, int MR) {
  for (int ir = 0; ir < mc; ir += MR) {
    const int mr = std::min(MR, mc - ir);
    T* d = dst + static_cast<int64_t>(ir) * kc;
    if (!ta) {
      for (int i = 0; i < mr; i++) {
        const T* src = A + static_cast<int64_t>(i0 + ir + i) * lda + k0;
        for (int k = 0; k < kc; k++) d[k * MR + i] = src[k];
      }
      for (int i = mr; i < MR; i++)
        for (int k = 0; k < kc; k++) d[k * MR + i] = T(0);
    } else {
      for (int k = 0; k < kc; k++) {
        const T* src = A + static_cast<int64_t>(k0 + k) * lda + i0 + ir;
        T* dk = d + k * MR;
        for (int i = 0; i < mr; i++) dk[i] = src[i];
        for (int i = mr; i < MR; i++) dk[i] = T(0);
      }
    }
  }
}

// op(B) rows [k0, k0 + kc) x cols [j0, j0 + nc) into NR-column micro-panels, k-major, zero-padded.
template <typename T>
void pack_b(T* dst, const T* B, int64_t ldb, bool tb, int k0, int kc, int j0, int nc, int NR) {
  for (int jr = 0; jr < nc; jr += NR) {
    const int nr = std::min(NR, nc - jr);
    T* d = dst + static_cast<int64_t>(jr) * kc;
    if (tb) {
      for (int j = 0; j < nr; j++) {
        const T* src = B + static_cast<int64_t>(j0 + jr + j) * ldb + k0;
        for (int k = 0; k < kc; k++) d[k * NR + j] = src[k];
      }
      for (int j = nr; j < NR; j++)
        for (int k = 0; k < kc; k++) d[k * NR + j] = T(0);
    } else {
      for (int k = 0; k < kc; k++) {
        const T* src = B + static_cast<int64_t>(k0 + k) * ldb + j0 + jr;
        T* dk = d + k * NR;
        for (int j = 0; j < nr; j++) dk[j] = src[j];
        for (int j = nr; j < NR; j++) dk[j] = T(0);
      }
    }
  }
}

template <typename T>
void scale_c(T* C, int64_t ldc, int M, int N, T beta) {
  for (int i = 0; i < M; i++) {
    T* ci = C + static_cast<int64_t>(i) * ldc;
    if (beta == T(0))
      std::fill(ci, ci + N, T(0));
    else
      for (int j = 0; j < N; j++) ci[j] *= beta;
  }
}

template <typename T>
void gemm_serial(const KernelSpec<T>& ks, bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
                 T beta, T* C, int64_t ldc) {
  const int MR = ks.mr, NR = ks.nr;
  T* bp = pack_b_scratch<T>(static_cast<size_t>(ks.kc) * ks.nc);
  T* ap = pack_a_scratch<T>(static_cast<size_t>(ks.mc) * ks.kc);
  for (int jc = 0; jc < N; jc += ks.nc) {
    const int nc = std::min(ks.nc, N - jc);
    for (int pc = 0; pc < K; pc += ks.kc) {
      const int kc = std::min(ks.kc, K - pc);
      const T beta_here = pc == 0 ? beta : T(1);
      pack_b(bp, B, ldb, tb, pc, kc, jc, nc, NR);
      for (int ic = 0; ic < M; ic += ks.mc) {
        const int mc = std::min(ks.mc, M - ic);
        pack_a(ap, A, lda, ta, ic, mc, pc, kc, MR);
        for (int jr = 0; jr < nc; jr += NR) {
          const int nr = std::min(NR, nc - jr);
          const T* bpanel = bp + static_cast<int64_t>(jr) * kc;
          for (int ir = 0; ir < mc; ir += MR) {
            const int mr = std::min(MR, mc - ir);
            ks.fn(kc, ap + static_cast<int64_t>(ir) * kc, bpanel, C + static_cast<int64_t>(ic + ir) * ldc + jc + jr, ldc, alpha, beta_here, mr,
                  nr);
          }
        }
      }
    }
  }
}

// ---- few-row products (decoding): C[m, n] = alpha * dot(A[m, :], B[n, :]) + beta * C[m, n] ----
// Reads each row of B (a weight matrix, [out, in]) once per group of up to kDotGroup rows of A,
// with no packing: decoding multiplies a handful of rows by every weight, so the weights' trip
// from memory is the cost that matters.
constexpr int kDotRows = 16;
constexpr int kDotGroup = 8;

template <typename T>
void dot_rows_generic(const T* A, int64_t lda, int M, const T* w, int K, T* out) {
  for (int m = 0; m < M; m++) {
    const T* x = A + m * lda;
    T s = 0;
    for (int k = 0; k < K; k++) s += x[k] * w[k];
    out[m] = s;
  }
}

#ifdef SW_X86
__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

template <int MB>
__attribute__((target("avx2,fma"))) void dot_rows_avx2(const float* A, int64_t lda, const float* w, int K, float* out) {
  __m256 acc[MB][2];
#pragma GCC unroll 8
  for (int m = 0; m < MB; m++) acc[m][0] = acc[m][1] = _mm256_setzero_ps();
  int k = 0;
  for (; k + 16 <= K; k += 16) {
    const __m256 w0 = _mm256_loadu_ps(w + k), w1 = _mm256_loadu_ps(w + k + 8);
#pragma GCC unroll 8
    for (int m = 0; m < MB; m++) {
      acc[m][0] = _mm256_fmadd_ps(_mm256_loadu_ps(A + m * lda + k), w0, acc[m][0]);
      acc[m][1] = _mm256_fmadd_ps(_mm256_loadu_ps(A + m * lda + k + 8), w1, acc[m][1]);
    }
  }
  for (int m = 0; m < MB; m++) {
    float s = hsum256(_mm256_add_ps(acc[m][0], acc[m][1]));
    for (int kk = k; kk < K; kk++) s += A[m * lda + kk] * w[kk];
    out[m] = s;
  }
}

template <int MB>
__attribute__((target("avx512f,fma"))) void dot_rows_avx512(const float* A, int64_t lda, const float* w, int K, float* out) {
  __m512 acc[MB][2];
#pragma GCC unroll 8
  for (int m = 0; m < MB; m++) acc[m][0] = acc[m][1] = _mm512_setzero_ps();
  int k = 0;
  for (; k + 32 <= K; k += 32) {
    const __m512 w0 = _mm512_loadu_ps(w + k), w1 = _mm512_loadu_ps(w + k + 16);
#pragma GCC unroll 8
    for (int m = 0; m < MB; m++) {
      acc[m][0] = _mm512_fmadd_ps(_mm512_loadu_ps(A + m * lda + k), w0, acc[m][0]);
      acc[m][1] = _mm512_fmadd_ps(_mm512_loadu_ps(A + m * lda + k + 16), w1, acc[m][1]);
    }
  }
  for (int m = 0; m < MB; m++) {
    // (_mm512_reduce_add_ps trips a false uninitialised warning in GCC 12.)
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, _mm512_add_ps(acc[m][0], acc[m][1]));
    float s = hsum256(_mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8)));
    for (int kk = k; kk < K; kk++) s += A[m * lda + kk] * w[kk];
    out[m] = s;
  }
}

// Sums of 16 vectors at once: r[i] = sum of the lanes of v[i] (a transpose-and-add tree: 15 adds
// and 30 shuffles instead of 16 separate horizontal sums).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) inline __m512 hsum16(const __m512* v) {
  __m512 w[8], x[4];
  for (int i = 0; i < 8; i++) w[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; i++) x[i] = _mm512_add_ps(_mm512_shuffle_ps(w[2 * i], w[2 * i + 1], 0x44), _mm512_shuffle_ps(w[2 * i], w[2 * i + 1], 0xEE));
  const __m512 z0 = _mm512_add_ps(_mm512_shuffle_f32x4(x[0], x[1], 0x88), _mm512_shuffle_f32x4(x[0], x[1], 0xDD));
  const __m512 z1 = _mm512_add_ps(_mm512_shuffle_f32x4(x[2], x[3], 0x88), _mm512_shuffle_f32x4(x[2], x[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(z0, z1, 0x88), _mm512_shuffle_f32x4(z0, z1, 0xDD));
}
#pragma GCC diagnostic pop

// Two rows of B against MB rows of A: out0[m] = A[m] . w0, out1[m] = A[m] . w1.
template <int MB>
__attribute__((target("avx512f,fma"))) void dot2_rows_avx512(const float* A, int64_t lda, const float* w0, const float* w1, int K, float* out0,
                                                              float* out1) {
  __m512 acc[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) acc[i] = _mm512_setzero_ps();
  for (int k = 0; k < K; k += 16) {
    const __mmask16 mask = K - k >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (K - k)) - 1);
    const __m512 a0 = _mm512_maskz_loadu_ps(mask, w0 + k), a1 = _mm512_maskz_loadu_ps(mask, w1 + k);
#pragma GCC unroll 8
    for (int m = 0; m < MB; m++) {
      const __m512 x = _mm512_maskz_loadu_ps(mask, A + m * lda + k);
      acc[m] = _mm512_fmadd_ps(x, a0, acc[m]);
      acc[8 + m] = _mm512_fmadd_ps(x, a1, acc[8 + m]);
    }
  }
  alignas(64) float sums[16];
  _mm512_store_ps(sums, hsum16(acc));
  for (int m = 0; m < MB; m++) {
    out0[m] = sums[m];
    out1[m] = sums[8 + m];
  }
}

using Dot2Fn = void (*)(const float*, int64_t, const float*, const float*, int, float*, float*);
template <int... Ms>
constexpr std::array<Dot2Fn, sizeof...(Ms)> dot2_table_avx512(std::integer_sequence<int, Ms...>) {
  return {dot2_rows_avx512<Ms + 1>...};
}

using DotFn = void (*)(const float*, int64_t, const float*, int, float*);

template <int... Ms>
constexpr std::array<DotFn, sizeof...(Ms)> dot_table_avx512(std::integer_sequence<int, Ms...>) {
  return {dot_rows_avx512<Ms + 1>...};
}
template <int... Ms>
constexpr std::array<DotFn, sizeof...(Ms)> dot_table_avx2(std::integer_sequence<int, Ms...>) {
  return {dot_rows_avx2<Ms + 1>...};
}
const auto kDotAvx512 = dot_table_avx512(std::make_integer_sequence<int, kDotGroup>{});
const auto kDotAvx2 = dot_table_avx2(std::make_integer_sequence<int, kDotGroup>{});
const auto kDot2Avx512 = dot2_table_avx512(std::make_integer_sequence<int, kDotGroup>{});
#endif

template <typename T>
void gemm_dot(ThreadPool& pool, int M, int N, int K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc,
              Isa isa) {
  // rows(a, mb, w, out): out[0..mb) = dots of rows a[0..mb) with w
  auto rows = [&](const T* a, int mb, const T* w, T* out) {
    if constexpr (std::is_same_v<T, float>) {
#ifdef SW_X86
      if (isa == Isa::avx512) return kDotAvx512[mb - 1](a, lda, w, K, out);
      if (isa == Isa::avx2) return kDotAvx2[mb - 1](a, lda, w, K, out);
#endif
    }
    (void)isa;
    dot_rows_generic(a, lda, mb, w, K, out);
  };
  const int64_t grain = std::max<int64_t>(16, (1 << 16) / std::max(K, 1));
  auto put = [&](int m0, int mb, int64_t n, const T* out) {
    for (int m = 0; m < mb; m++) {
      T& c = C[(m0 + m) * ldc + n];
      c = beta == T(0) ? alpha * out[m] : alpha * out[m] + beta * c;
    }
  };
  // Chunks of an even number of rows of B, so AVX-512 can take them two at a time.
  const int64_t pairs = (N + 1) / 2;
  pool.parallel_for(pairs, std::max<int64_t>(8, grain / 2), [&](int64_t p0, int64_t p1, int) {
    const int64_t n0 = 2 * p0, n1 = std::min<int64_t>(N, 2 * p1);
    T out[kDotGroup], out1[kDotGroup];
    for (int m0 = 0; m0 < M; m0 += kDotGroup) {
      const int mb = std::min(kDotGroup, M - m0);
      int64_t n = n0;
      if constexpr (std::is_same_v<T, float>) {
#ifdef SW_X86
        if (isa == Isa::avx512)
          for (; n + 1 < n1; n += 2) {
            kDot2Avx512[mb - 1](A + m0 * lda, lda, B + n * ldb, B + (n + 1) * ldb, K, out, out1);
            put(m0, mb, n, out);
            put(m0, mb, n + 1, out1);
          }
#endif
      }
      for (; n < n1; n++) {
        rows(A + m0 * lda, mb, B + n * ldb, out);
        put(m0, mb, n, out);
      }
    }
  });
}

std::atomic<int> g_isa{-1};

}  // namespace

Isa detect_isa() {
#ifdef SW_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
#endif
  return Isa::generic;
}

Isa current_isa() {
  int v = g_isa.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(detect_isa());
    g_isa.store(v, std::memory_order_relaxed);
  }
  return static_cast<Isa>(v);
}

void set_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(detect_isa()))
    throw std::runtime_error(std::string("this CPU does not support ") + isa_name(isa) + " (best: " + isa_name(detect_isa()) + ")");
  g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    default:
      return "generic";
  }
}

template <typename T>
void gemm(ThreadPool& pool, bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C,
          int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == T(0)) {
    scale_c(C, ldc, M, N, beta);
    return;
  }
  const Isa isa = current_isa();
  if (!ta && tb && M <= kDotRows) return gemm_dot(pool, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, isa);

  const KernelSpec<T> ks = kernel_spec<T>(isa);
  const double flops = 2.0 * M * N * K;
  const int threads = flops < 4e5 ? 1 : pool.size();
  if (threads == 1) return gemm_serial(ks, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);

  // Give each thread a contiguous share of C along the dimension with more micro-tiles.
  const int tiles_m = (M + ks.mr - 1) / ks.mr, tiles_n = (N + ks.nr - 1) / ks.nr;
  const bool split_m = tiles_m >= tiles_n;
  const int tiles = split_m ? tiles_m : tiles_n;
  const int parts = std::min(threads, tiles);
  pool.run(parts, [&](int64_t p, int) {
    const int t0 = static_cast<int>(tiles * p / parts), t1 = static_cast<int>(tiles * (p + 1) / parts);
    if (split_m) {
      const int i0 = t0 * ks.mr, i1 = std::min(M, t1 * ks.mr);
      if (i0 >= i1) return;
      const T* a = ta ? A + i0 : A + static_cast<int64_t>(i0) * lda;
      gemm_serial(ks, ta, tb, i1 - i0, N, K, alpha, a, lda, B, ldb, beta, C + static_cast<int64_t>(i0) * ldc, ldc);
    } else {
      const int j0 = t0 * ks.nr, j1 = std::min(N, t1 * ks.nr);
      if (j0 >= j1) return;
      const T* b = tb ? B + static_cast<int64_t>(j0) * ldb : B + j0;
      gemm_serial(ks, ta, tb, M, j1 - j0, K, alpha, A, lda, b, ldb, beta, C + j0, ldc);
    }
  });
}

template void gemm<float>(ThreadPool&, bool, bool, int, int, int, float, const float*, int64_t, const float*, int64_t, float, float*, int64_t);
template void gemm<double>(ThreadPool&, bool, bool, int, int, int, double, const double*, int64_t, const double*, int64_t, double, double*,
                           int64_t);

}  // namespace sw::cpu

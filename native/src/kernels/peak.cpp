#include "peak.h"

#include <atomic>
#include <chrono>

#include "gemm.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SW_X86 1
#endif

namespace sw::cpu {
namespace {

constexpr int kChains = 12;  // enough independent accumulators to cover FMA latency

#ifdef SW_X86
__attribute__((target("avx512f,fma"))) float fma_loop_avx512(long iters) {
  __m512 a[kChains];
  for (int i = 0; i < kChains; i++) a[i] = _mm512_set1_ps(0.001f * i);
  const __m512 b = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-6f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; i++) a[i] = _mm512_fmadd_ps(a[i], b, c);
  }
  __m512 s = a[0];
  for (int i = 1; i < kChains; i++) s = _mm512_add_ps(s, a[i]);
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0];
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iters) {
  __m256 a[kChains];
  for (int i = 0; i < kChains; i++) a[i] = _mm256_set1_ps(0.001f * i);
  const __m256 b = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-6f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; i++) a[i] = _mm256_fmadd_ps(a[i], b, c);
  }
  __m256 s = a[0];
  for (int i = 1; i < kChains; i++) s = _mm256_add_ps(s, a[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0];
}
#endif

float fma_loop_generic(long iters) {
  float a[kChains * 8];
  for (int i = 0; i < kChains * 8; i++) a[i] = 0.001f * i;
  for (long it = 0; it < iters; it++)
    for (int i = 0; i < kChains * 8; i++) a[i] = a[i] * 0.9999f + 1e-6f;
  float s = 0;
  for (float v : a) s += v;
  return s;
}

}  // namespace

double measure_peak_gflops(ThreadPool& pool, double seconds) {
  const Isa isa = current_isa();
  int lanes = 8;
  float (*loop)(long) = fma_loop_generic;
#ifdef SW_X86
  if (isa == Isa::avx512) {
    loop = fma_loop_avx512;
    lanes = 16;
  } else if (isa == Isa::avx2) {
    loop = fma_loop_avx2;
  }
#endif
  // Calibrate on one thread, then run every thread for about `seconds`.
  long iters = 1 << 20;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    volatile float sink = loop(iters);
    (void)sink;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > 0.02) {
      iters = static_cast<long>(iters * seconds / el);
      break;
    }
    iters *= 4;
  }
  std::atomic<long> total{0};
  auto t0 = std::chrono::steady_clock::now();
  pool.run(pool.size(), [&](int64_t, int) {
    volatile float sink = loop(iters);
    (void)sink;
    total += iters;
  });
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * kChains * lanes * static_cast<double>(total.load()) / el / 1e9;
}

}  // namespace sw::cpu

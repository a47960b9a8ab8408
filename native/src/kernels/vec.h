// Small vector helpers for the CPU kernels. The addon is compiled for AVX2 + FMA (the minimum it
// supports); float reductions are written with intrinsics because the compiler will not reorder
// a floating-point sum by itself. Double versions are plain loops (used for gradient checks).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SW_VEC_AVX2 1
#endif

namespace sw::vec {

template <typename T>
inline T dot(const T* a, const T* b, int n) {
  T s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// y += alpha * x
template <typename T>
inline void axpy(T* y, T alpha, const T* x, int n) {
  for (int i = 0; i < n; i++) y[i] += alpha * x[i];
}

#ifdef SW_VEC_AVX2
inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

template <>
inline float dot<float>(const float* a, const float* b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

template <>
inline void axpy<float>(float* y, float alpha, const float* x, int n) {
  const __m256 va = _mm256_set1_ps(alpha);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; i++) y[i] += alpha * x[i];
}
#endif

// Sum of squares accumulated in double.
template <typename T>
inline double sum_squares(const T* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += static_cast<double>(x[i]) * x[i];
  return s;
}

}  // namespace sw::vec

// CPU matrix multiplication: a packed, cache-blocked GEMM (the BLIS loop structure) with SIMD
// micro-kernels chosen at run time (AVX-512 where the CPU has it, else AVX2, else portable C++),
// and a dot-product path for the few-row products of decoding.
#pragma once

#include <cstdint>

#include "../thread_pool.h"

namespace sw::cpu {

enum class Isa { generic = 0, avx2 = 1, avx512 = 2 };

// The best instruction set this CPU supports (and this build was compiled for).
Isa detect_isa();
// The set in use; set_isa() picks another one (tests and benchmarks compare them). Requesting a
// set the CPU lacks throws.
Isa current_isa();
void set_isa(Isa isa);
const char* isa_name(Isa isa);

// C[M,N] = alpha * op(A) op(B) + beta * C (row-major; beta == 0 never reads C).
template <typename T>
void gemm(ThreadPool& pool, bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C,
          int64_t ldc);

}  // namespace sw::cpu

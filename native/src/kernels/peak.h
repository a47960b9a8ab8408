// Measures the CPU's attainable fp32 throughput: independent chains of fused multiply-adds on
// every pool thread with the widest vectors in use. The benchmark reports achieved GFLOP/s as a
// share of this figure.
#pragma once

#include "../thread_pool.h"

namespace sw::cpu {

// GFLOP/s over about `seconds` of work.
double measure_peak_gflops(ThreadPool& pool, double seconds);

}  // namespace sw::cpu

// What the CUDA sources build on: the CUDA runtime under nvcc, or, with SW_CUDA_EMULATOR, the
// host emulator (emulator.h) that runs the same kernels and backend on the CPU for tests.
// Kernels are written so that both compile them: launches go through SW_LAUNCH, shared memory
// is declared with SW_SHARED_ARRAY / SW_DYNAMIC_SHARED, warp exchanges use __shfl_*_sync.
#pragma once

#include <stdexcept>
#include <string>

#ifdef SW_CUDA_EMULATOR
#include "emulator.h"
#else
#include <cuda_runtime.h>
#endif

namespace sw::cuda {

[[noreturn]] inline void fail(const char* what, cudaError_t e) {
  throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace sw::cuda

#define SW_CUDA_CHECK(expr)                                 \
  do {                                                      \
    const cudaError_t sw_err_ = (expr);                     \
    if (sw_err_ != cudaSuccess) ::sw::cuda::fail(#expr, sw_err_); \
  } while (0)

#ifdef SW_CUDA_EMULATOR
#define SW_LAUNCH(kernel, grid, block, smem, stream, ...) \
  ::sw::emu::launch(#kernel, dim3(grid), dim3(block), (smem), [&] { kernel(__VA_ARGS__); })
#define SW_SHARED_ARRAY(type, name, n) type* name = static_cast<type*>(::sw::emu::static_shared(sizeof(type) * (n)))
#define SW_DYNAMIC_SHARED(type, name) type* name = static_cast<type*>(::sw::emu::dynamic_shared())
#else
#define SW_LAUNCH(kernel, grid, block, smem, stream, ...)                 \
  do {                                                                    \
    kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__);           \
    const cudaError_t sw_err_ = cudaGetLastError();                       \
    if (sw_err_ != cudaSuccess) ::sw::cuda::fail("launching " #kernel, sw_err_); \
  } while (0)
#define SW_SHARED_ARRAY(type, name, n) __shared__ type name[n]
#define SW_DYNAMIC_SHARED(type, name)                     \
  extern __shared__ __align__(16) unsigned char sw_smem_[]; \
  type* name = reinterpret_cast<type*>(sw_smem_)
#endif

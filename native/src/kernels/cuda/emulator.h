// A host emulator for the CUDA backend's tests: the subset of the CUDA runtime and cuBLAS the
// backend uses, and kernels run block by block with one fiber per CUDA thread. __syncthreads and
// the warp exchanges switch fibers, so a missing barrier, a barrier some threads skip (reported
// as a deadlock) or a wrong index shows up on the CPU. Device memory is host memory that starts
// filled with NaN bytes, as is shared memory, so a read of something never written poisons the
// result. Built only with SW_CUDA_EMULATOR (the emulated addon the parity tests use here).
#pragma once

#include <math.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

using std::max;
using std::min;

struct alignas(8) float2 {
  float x, y;
};

struct alignas(16) float4 {
  float x, y, z, w;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

using cudaError_t = int;
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorInvalidValue = 1;
constexpr cudaError_t cudaErrorMemoryAllocation = 2;
constexpr cudaError_t cudaErrorNoDevice = 100;

struct EmuStream;
struct EmuEvent;
using cudaStream_t = EmuStream*;
using cudaEvent_t = EmuEvent*;

enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
constexpr unsigned cudaStreamNonBlocking = 1;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major, minor;
  int multiProcessorCount;
  size_t sharedMemPerBlockOptin;
};

const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDriverGetVersion(int* v);
cudaError_t cudaRuntimeGetVersion(int* v);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMalloc(void** p, size_t bytes);
cudaError_t cudaFree(void* p);
cudaError_t cudaMallocHost(void** p, size_t bytes);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s = nullptr);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s = nullptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
template <typename F>
cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int) {
  return cudaSuccess;
}

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __restrict__

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

namespace sw::emu {

struct ThreadIndex {
  dim3 thread, block, block_dim, grid_dim;
};

// The running CUDA thread's indices.
const ThreadIndex& current();
void syncthreads();
void syncwarp();
// Exchanges 8 bytes with lane `src` (or lane ^ mask) of the warp; every lane of the warp must call.
uint64_t exchange(uint64_t value, int src_lane, bool xor_mask);
unsigned ballot(bool pred);
// The running thread's lane in its warp.
int lane_id();
// Every lane's `bytes` (at most 64) from `mine` into all[lane * bytes]: a warp-wide exchange for
// the emulated tensor-core instructions (mma.cuh). Every lane of the warp must call.
void warp_gather(const void* mine, void* all, size_t bytes);

template <typename T>
T shfl(T v, int lane, bool xor_mask) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = exchange(bits, lane, xor_mask);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

void* dynamic_shared();
void* static_shared(size_t bytes);

// Runs `body` once per thread of every block, blocks one after another.
void launch(const char* name, dim3 grid, dim3 block, size_t shared_bytes, const std::function<void()>& body);

}  // namespace sw::emu

#define threadIdx (::sw::emu::current().thread)
#define blockIdx (::sw::emu::current().block)
#define blockDim (::sw::emu::current().block_dim)
#define gridDim (::sw::emu::current().grid_dim)
#define __syncthreads() ::sw::emu::syncthreads()
#define __syncwarp(...) ::sw::emu::syncwarp()
#define __shfl_sync(mask, v, lane) ::sw::emu::shfl((v), (lane), false)
#define __shfl_xor_sync(mask, v, lane_mask) ::sw::emu::shfl((v), (lane_mask), true)
#define __ballot_sync(mask, pred) ::sw::emu::ballot(pred)

// ---- cuBLAS, emulated (column-major, as the library) ----
namespace sw::emu {
int cublas_create(void** handle);
int cublas_destroy(void* handle);
int cublas_set_stream(void* handle, cudaStream_t s);
int cublas_set_math_mode(void* handle, int mode);
int cublas_gemm_ex(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int atype, int lda, const void* B,
                   int btype, int ldb, const void* beta, void* C, int ctype, int ldc, int compute, int algo);
}  // namespace sw::emu

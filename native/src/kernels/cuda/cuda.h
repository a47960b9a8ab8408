// The CUDA backend as the rest of the engine sees it: plain C++ (no CUDA headers), so that the
// addon compiles the same way whether or not it was built with CUDA. cuda_backend.cu implements
// these functions; cuda_absent.cpp implements them for builds without nvcc.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../backend.h"

namespace sw {

// How the GPU computes matrix products and training attention. Master weights, AdamW moments,
// gradients, stored activations and every other kernel stay fp32 in all three; fp32 is the
// parity mode (native/README.md says exactly what is bf16 where).
enum class MatmulPrecision {
  fp32,  // fp32 FMA (CUBLAS_COMPUTE_32F, no TF32); attention on the CUDA cores
  tf32,  // tensor cores on tf32-rounded operands, fp32 accumulation; attention on the tensor cores
  bf16,  // tensor cores on bf16-stored operands (a bf16 copy of the weights), fp32 accumulation
};

inline const char* precision_name(MatmulPrecision p) {
  return p == MatmulPrecision::tf32 ? "tf32" : p == MatmulPrecision::bf16 ? "bf16" : "fp32";
}

// Throws std::invalid_argument for a name that is not fp32, tf32 or bf16.
inline MatmulPrecision parse_precision(const std::string& name) {
  if (name == "fp32") return MatmulPrecision::fp32;
  if (name == "tf32") return MatmulPrecision::tf32;
  if (name == "bf16") return MatmulPrecision::bf16;
  throw std::invalid_argument("precision must be fp32, tf32 or bf16 (got " + name + ")");
}

struct CudaStatus {
  bool built = false;      // the addon was compiled with the CUDA backend
  bool available = false;  // and a GPU and cuBLAS were found
  std::string reason;      // why not, when not available
  std::string name;        // the GPU's name
  size_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int driver_version = 0, runtime_version = 0;  // as CUDA encodes them (13000 = 13.0)
  std::string cublas;                           // the cuBLAS library that was loaded
};

// Probes once (later calls return the first answer): device, driver, cuBLAS.
const CudaStatus& cuda_status();

// A backend on GPU 0. Throws std::runtime_error with cuda_status().reason when unavailable.
std::unique_ptr<Backend<float>> make_cuda_backend(MatmulPrecision precision);

// Seconds per product C[M,N] = op(A) op(B) (row-major, random operands in GPU memory), median of
// `reps` timed runs after a warm-up. mode: fp32, tf32, bf16 (fp32 operands, bf16 tensor cores) or
// bf16-operands (operands stored as bf16, fp32 result): the last is what true bf16 activations
// and weight copies would cost.
double cuda_gemm_seconds(const std::string& mode, bool ta, bool tb, int M, int N, int K, int reps);

// Time per kind of kernel (matrix products, attention forward, ...) over every CUDA model, while
// profiling is on. Each timed kernel is waited for, so the run is slower than an untimed one.
struct CudaProfileEntry {
  std::string what;
  int64_t calls = 0;
  double seconds = 0;
};
void cuda_profile_start();
std::vector<CudaProfileEntry> cuda_profile_stop();

}  // namespace sw

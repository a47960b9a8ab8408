// The CUDA entry points of an addon built without nvcc: the backend is reported as not built,
// with the reason, and asking for it fails with that reason.
#include <stdexcept>

#include "cuda.h"

namespace sw {

const CudaStatus& cuda_status() {
  static const CudaStatus status = [] {
    CudaStatus s;
    s.reason = "this addon was built without the CUDA backend (no nvcc was found when it was built; install the CUDA toolkit and run `npm run build:native -- --rebuild`)";
    return s;
  }();
  return status;
}

std::unique_ptr<Backend<float>> make_cuda_backend(MatmulPrecision) { throw std::runtime_error(cuda_status().reason); }

double cuda_gemm_seconds(const std::string&, bool, bool, int, int, int, int) { throw std::runtime_error(cuda_status().reason); }

void cuda_profile_start() { throw std::runtime_error(cuda_status().reason); }

std::vector<CudaProfileEntry> cuda_profile_stop() { return {}; }

}  // namespace sw

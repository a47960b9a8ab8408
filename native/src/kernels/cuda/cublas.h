// cuBLAS, loaded at run time (dlopen), so that the addon builds and loads where cuBLAS is not
// installed (the toolkit on the developer machines has none) and finds it where it is: the
// library's C ABI is stable, and the few entry points and enum values used here are declared
// from its documentation. Under the emulator the same table points at emulated functions.
#pragma once

#include <string>

#include "runtime.h"

namespace sw::cuda {

// cublasOperation_t, cudaDataType_t, cublasComputeType_t, cublasMath_t, cublasGemmAlgo_t values.
enum : int { kOpN = 0, kOpT = 1 };
enum : int { kR32F = 0, kR16BF = 14 };
enum : int { kCompute32F = 68, kCompute32FFast16BF = 75, kCompute32FFastTF32 = 77 };
enum : int { kDefaultMath = 0 };
enum : int { kGemmDefault = -1 };

struct Cublas {
  using Handle = void*;
  int (*create)(Handle*) = nullptr;
  int (*destroy)(Handle) = nullptr;
  int (*set_stream)(Handle, cudaStream_t) = nullptr;
  int (*set_math_mode)(Handle, int) = nullptr;
  int (*gemm_ex)(Handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A, int atype, int lda, const void* B,
                 int btype, int ldb, const void* beta, void* C, int ctype, int ldc, int compute, int algo) = nullptr;
  std::string path;  // the library loaded
};

// Loads cuBLAS once. Returns null, with the places tried in *reason, when none loads. Looks at
// $SOCIALWORLD_CUBLAS (the library or its folder), $CUDA_HOME / $CUDA_PATH /lib64,
// /usr/local/cuda/lib64, the nvidia/cublas/lib (and nvidia/cu13/lib, nvidia/cu12/lib) folders
// of the Python environments of the python3 found on $PATH, then the dynamic loader's own search
// ($LD_LIBRARY_PATH, ldconfig), for libcublas.so.13, .so.12 and .so.
const Cublas* load_cublas(std::string* reason);

// cuBLAS's status as a sentence.
std::string cublas_status_name(int status);

}  // namespace sw::cuda

// Finding and loading cuBLAS (see cublas.h).
#include "cublas.h"

#include <glob.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#ifndef SW_CUDA_EMULATOR
#include <dlfcn.h>
#endif

namespace sw::cuda {

std::string cublas_status_name(int status) {
  switch (status) {
    case 0:
      return "success";
    case 1:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case 8:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "cuBLAS status " + std::to_string(status);
  }
}

#ifdef SW_CUDA_EMULATOR

const Cublas* load_cublas(std::string*) {
  static const Cublas table = [] {
    Cublas c;
    c.create = emu::cublas_create;
    c.destroy = emu::cublas_destroy;
    c.set_stream = emu::cublas_set_stream;
    c.set_math_mode = emu::cublas_set_math_mode;
    c.gemm_ex = emu::cublas_gemm_ex;
    c.path = "emulated cuBLAS (host)";
    return c;
  }();
  return &table;
}

#else

namespace {

const char* const kNames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void add_glob(const std::string& pattern, std::vector<std::string>& out) {
  glob_t g;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; i++) out.push_back(g.gl_pathv[i]);
  globfree(&g);
}

// Folders to look in, in order.
std::vector<std::string> candidate_dirs() {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var)) {
      dirs.push_back(std::string(v) + "/lib64");
      dirs.push_back(std::string(v) + "/lib");
    }
  dirs.push_back("/usr/local/cuda/lib64");
  // pip's nvidia-cublas wheels, in the environment of each python3 on PATH.
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      const size_t end = p.find(':', start);
      const std::string bin = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!bin.empty())
        for (const char* sub : {"nvidia/cublas/lib", "nvidia/cu13/lib", "nvidia/cu12/lib"})
          add_glob(bin + "/../lib/python3*/site-packages/" + sub, dirs);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return dirs;
}

template <typename F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

}  // namespace

const Cublas* load_cublas(std::string* reason) {
  static std::once_flag once;
  static Cublas table;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    std::vector<std::string> files;
    if (const char* env = std::getenv("SOCIALWORLD_CUBLAS")) {
      if (is_dir(env))
        for (const char* n : kNames) files.push_back(std::string(env) + "/" + n);
      else
        files.push_back(env);
    }
    for (const std::string& d : candidate_dirs())
      for (const char* n : kNames) files.push_back(d + "/" + n);
    for (const char* n : kNames) files.push_back(n);  // the loader's own search
    std::string tried;
    for (const std::string& f : files) {
      const bool bare = f.find('/') == std::string::npos;
      struct stat st;
      if (!bare && stat(f.c_str(), &st) != 0) continue;
      // libcublas needs libcublasLt of the same version, beside it: load that first, globally.
      const std::string dir = bare ? "" : f.substr(0, f.rfind('/') + 1);
      const std::string suffix = f.substr(f.find("libcublas.so") + 12);
      dlopen((dir + "libcublasLt.so" + suffix).c_str(), RTLD_NOW | RTLD_GLOBAL);
      void* lib = dlopen(f.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        if (!bare) tried += "\n  " + f + ": " + dlerror();
        continue;
      }
      Cublas c;
      if (bind(lib, "cublasCreate_v2", c.create) && bind(lib, "cublasDestroy_v2", c.destroy) && bind(lib, "cublasSetStream_v2", c.set_stream) &&
          bind(lib, "cublasSetMathMode", c.set_math_mode) && bind(lib, "cublasGemmEx", c.gemm_ex)) {
        Dl_info info;
        c.path = dladdr(reinterpret_cast<void*>(c.gemm_ex), &info) && info.dli_fname ? info.dli_fname : f;
        table = c;
        ok = true;
        return;
      }
      tried += "\n  " + f + ": missing cuBLAS entry points";
      dlclose(lib);
    }
    why = "cuBLAS was not found (set SOCIALWORLD_CUBLAS to libcublas.so or its folder; pip's nvidia-cublas or the CUDA toolkit has it). Tried " +
          std::to_string(files.size()) + " places" + (tried.empty() ? "" : "; these failed to load:" + tried);
  });
  if (!ok && reason) *reason = why;
  return ok ? &table : nullptr;
}

#endif

}  // namespace sw::cuda

{
  # The native policy engine. x86-64 builds target AVX2 + FMA as the baseline; the GEMM picks
  # AVX-512 micro-kernels at run time where the CPU has them (function-level target attributes).
  "targets": [
    {
      "target_name": "socialworld_native",
      "sources": [
        "src/addon.cpp",
        "src/generation.cpp",
        "src/model.cpp",
        "src/sampler.cpp",
        "src/thread_pool.cpp",
        "src/kernels/cpu_backend.cpp",
        "src/kernels/gemm.cpp",
        "src/kernels/peak.cpp",
        "src/kernels/cuda/cuda_absent.cpp"
      ],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except_all"],
      "cflags!": ["-fno-exceptions", "-O2", "-O3"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [
        ["target_arch=='x64'", {
          "cflags_cc": ["-mavx2", "-mfma", "-mf16c"]
        }],
        ["OS=='mac'", {
          "xcode_settings": {
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "OTHER_CPLUSPLUSFLAGS": ["-O3"]
          }
        }]
      ]
    }
  ]
}

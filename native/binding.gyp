{
  # The native policy engine. x86-64 builds target AVX2 + FMA as the baseline; the GEMM picks
  # AVX-512 micro-kernels at run time where the CPU has them (function-level target attributes).
  # build.mjs sets the variables: socialworld_cuda=1 links the CUDA backend (objects it compiled
  # with nvcc into build/cuda/, and the static CUDA runtime from cuda_lib); socialworld_emulator=1
  # adds socialworld_native_emulated, the same addon with the CUDA backend running on the host
  # emulator (src/kernels/cuda/emulator.h), for the GPU parity tests on machines without a GPU.
  "variables": {
    "socialworld_cuda%": 0,
    "socialworld_emulator%": 0,
    "cuda_lib%": ""
  },
  "target_defaults": {
    "sources": [
      "src/addon.cpp",
      "src/generation.cpp",
      "src/model.cpp",
      "src/lora.cpp",
      "src/sampler.cpp",
      "src/thread_pool.cpp",
      "src/kernels/cpu_backend.cpp",
      "src/kernels/gemm.cpp",
      "src/kernels/peak.cpp"
    ],
    "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except_all"],
    "cflags!": ["-fno-exceptions", "-O2", "-O3"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
    "cflags_cc": ["-std=c++17", "-O3", "-fexceptions"],
    "defines": ["NAPI_VERSION=8", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
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
  },
  "targets": [
    {
      "target_name": "socialworld_native",
      "conditions": [
        ["socialworld_cuda==1", {
          "libraries": [
            "<(module_root_dir)/build/cuda/cuda_backend.o",
            "<(module_root_dir)/build/cuda/attention.o",
            "<(module_root_dir)/build/cuda/cublas.o",
            "<(cuda_lib)/libcudart_static.a",
            "-ldl",
            "-lrt",
            "-lpthread"
          ]
        }, {
          "sources": ["src/kernels/cuda/cuda_absent.cpp"]
        }]
      ]
    }
  ],
  "conditions": [
    ["socialworld_emulator==1", {
      "targets": [
        {
          "target_name": "socialworld_native_emulated",
          "defines": ["SW_CUDA_EMULATOR"],
          "cflags_cc": ["-Wno-unknown-pragmas", "-Wno-clobbered"],
          "sources": [
            "src/kernels/cuda/emulated_backend.cpp",
            "src/kernels/cuda/emulated_attention.cpp",
            "src/kernels/cuda/cublas.cpp",
            "src/kernels/cuda/emulator.cpp"
          ]
        }
      ]
    }]
  ]
}

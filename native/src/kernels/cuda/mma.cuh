// The tensor cores' warp-wide matrix products, as the attention kernels use them: mma.sync with
// fp32 accumulation, D[16, 8] += A[16, K] B[K, 8], on bf16 operands (K = 16) or tf32 operands
// (K = 8; fp32 with a 10-bit mantissa). Each lane holds a fixed part of every operand (PTX ISA,
// "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8"), with g = lane / 4 and t = lane % 4:
//   bf16, two per 32-bit register (the lower k or column in the low half):
//     A: a[0] = A[g][2t, 2t+1]   a[1] = A[g+8][2t, 2t+1]   a[2] = A[g][2t+8, 2t+9]   a[3] = A[g+8][2t+8, 2t+9]
//     B: b[0] = B[2t, 2t+1][g]   b[1] = B[2t+8, 2t+9][g]
//   tf32, one per register:
//     A: a[0] = A[g][t]   a[1] = A[g+8][t]   a[2] = A[g][t+4]   a[3] = A[g+8][t+4]
//     B: b[0] = B[t][g]   b[1] = B[t+4][g]
//   D (both): d[0], d[1] = D[g][2t, 2t+1]   d[2], d[3] = D[g+8][2t, 2t+1]
// Under the emulator the warp gathers its fragments and each lane computes its four outputs from
// the same layout, so a kernel that puts a value in the wrong register fails there as on a GPU.
#pragma once

#include <cstdint>

#include "runtime.h"

#ifndef SW_CUDA_EMULATOR
#include <cuda_bf16.h>
#endif

namespace sw::cuda {

#ifdef SW_CUDA_EMULATOR
// fp32 to bf16 bits, rounding to nearest even; NaN stays NaN (the emulator's poison).
inline uint32_t bf16_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

inline float bf16_value(uint32_t half) {
  const uint32_t bits = half << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// d += A B, A [16][K] and B [K][8] assembled from every lane's fragments: place(g, t, fragments,
// A, B) puts lane (g, t)'s operand values where the layout says. Products of bf16 or tf32 values
// are exact in fp32; the sum runs in k order.
template <int K, typename Fragments, typename Place>
inline void emulated_mma(float (&d)[4], const Fragments& mine, Place place) {
  Fragments all[32];
  ::sw::emu::warp_gather(&mine, all, sizeof(Fragments));
  float A[16][K], B[K][8];
  for (int l = 0; l < 32; l++) place(l / 4, l % 4, all[l], A, B);
  const int lane = ::sw::emu::lane_id(), g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; i++) {
    const int row = g + 8 * (i / 2), col = 2 * t + (i % 2);
    float s = 0.0f;
    for (int k = 0; k < K; k++) s += A[row][k] * B[k][col];
    d[i] += s;
  }
}
#endif

// x rounded to tf32 (nearest, ties away from zero), as fp32 bits.
__device__ __forceinline__ float round_tf32(float x) {
#ifdef SW_CUDA_EMULATOR
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) < 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
#else
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
#endif
}

// Two floats as bf16 in one register, `lo` in the low half.
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
#ifdef SW_CUDA_EMULATOR
  return bf16_bits(lo) | (bf16_bits(hi) << 16);
#else
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
#endif
}

// d += A B for one 16 x 8 x 16 tile (fragments as above); every lane of the warp must call.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#ifdef SW_CUDA_EMULATOR
  struct Fragments {
    uint32_t a[4], b[2];
  };
  emulated_mma<16>(d, Fragments{{a[0], a[1], a[2], a[3]}, {b[0], b[1]}}, [](int g, int t, const Fragments& f, float (&A)[16][16], float (&B)[16][8]) {
    for (int half = 0; half < 2; half++) {
      const int sh = 16 * half;
      A[g][2 * t + half] = bf16_value((f.a[0] >> sh) & 0xffffu);
      A[g + 8][2 * t + half] = bf16_value((f.a[1] >> sh) & 0xffffu);
      A[g][2 * t + 8 + half] = bf16_value((f.a[2] >> sh) & 0xffffu);
      A[g + 8][2 * t + 8 + half] = bf16_value((f.a[3] >> sh) & 0xffffu);
      B[2 * t + half][g] = bf16_value((f.b[0] >> sh) & 0xffffu);
      B[2 * t + 8 + half][g] = bf16_value((f.b[1] >> sh) & 0xffffu);
    }
  });
#else
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// d += A B for one 16 x 8 x 8 tile of tf32 operands (fp32 values already rounded by round_tf32).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float (&a)[4], const float (&b)[2]) {
#ifdef SW_CUDA_EMULATOR
  struct Fragments {
    float a[4], b[2];
  };
  emulated_mma<8>(d, Fragments{{a[0], a[1], a[2], a[3]}, {b[0], b[1]}}, [](int g, int t, const Fragments& f, float (&A)[16][8], float (&B)[8][8]) {
    A[g][t] = f.a[0];
    A[g + 8][t] = f.a[1];
    A[g][t + 4] = f.a[2];
    A[g + 8][t + 4] = f.a[3];
    B[t][g] = f.b[0];
    B[t + 4][g] = f.b[1];
  });
#else
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b[0])),
        "r"(__float_as_uint(b[1])));
#endif
}

}  // namespace sw::cuda

// Flash attention on the tensor cores, for the tf32 and bf16 precision modes (attention.cu keeps
// its fp32 CUDA-core kernels for the fp32 parity mode). Same algorithm as those kernels: 64 x 64
// tiles, scores and probabilities only in registers, the backward recomputing probabilities from
// the forward's log-sum-exp, dK/dV and dQ in separate kernels so no sum depends on scheduling.
// What changes is the arithmetic: every product is mma.sync with fp32 accumulation (mma.cuh).
// The score-like products (S = Q K^T and dP = dO V^T) take tf32 operands: their results go
// through exp() and through dP - D, which turn the relative error of bf16 operands into an
// absolute error of probabilities that grows with the scores (bf16 there failed the parity
// check's 0.999 gradient cosine on the 1m preset). The products with probabilities (P V, P^T dO,
// dS^T Q, dS K) take bf16 operands, P and dS rounded as they leave the accumulators. Softmax
// statistics, accumulators and outputs stay fp32.
//
// A block is four warps; warp w owns rows 16w .. 16w+15 of the block's 64-row tile, so a row's
// scores live in the four lanes of one quad (mma's D layout) and row reductions are two shuffles.
// The second product of each pair takes its A operand straight from the first product's
// accumulators (the D layout of two 8-column tiles is the A layout of one 16-deep step), which is
// why P, dS^T and P^T never touch shared memory. Shared tiles are tf32 row-major ([64][HD + 4]
// floats) for the score products and bf16 pairs in 32-bit words, transposed ([HD][36 words]), for
// the others; the padding puts the eight rows a fragment load touches in distinct banks.
#pragma once

#include <cmath>

#include "mma.cuh"
#include "reduce.cuh"

namespace sw::cuda::tc {

constexpr int kTile = 64;
constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr float kLog2e = 1.4426950408889634f;

// Floats in a padded tf32 row of HD, and words in a padded bf16 row of 64.
__host__ __device__ constexpr int f32_row(int hd) { return hd + 4; }
constexpr int kTrRow = kTile / 2 + 4;

// Rows [row0, row0 + 64) x HD of an fp32 matrix (rows `stride` floats apart, 16-byte aligned):
// into `rm` row-major as tf32 ([64][f32_row(HD)] floats) and/or into `tr` transposed as bf16
// ([HD][kTrRow] words, a word holding two rows). Rows at or past `limit` are zero. An item is two
// rows x four columns; a warp covers eight row pairs x four column groups.
template <int HD>
__device__ __forceinline__ void load_tile(float* rm, uint32_t* tr, const float* src, int64_t stride, int row0, int limit) {
  constexpr int FW = f32_row(HD);
  constexpr int kItems = (kTile / 2) * (HD / 4);
  for (int i = threadIdx.x; i < kItems; i += kThreads) {
    const int lane = i % 32, chunk = i / 32;
    const int rp = (chunk % 4) * 8 + lane / 4;  // row pair
    const int c = ((chunk / 4) * 4 + lane % 4) * 4;
    const int r = 2 * rp;
    float4 v0 = {0.0f, 0.0f, 0.0f, 0.0f}, v1 = {0.0f, 0.0f, 0.0f, 0.0f};
    if (row0 + r < limit) v0 = *reinterpret_cast<const float4*>(src + static_cast<int64_t>(row0 + r) * stride + c);
    if (row0 + r + 1 < limit) v1 = *reinterpret_cast<const float4*>(src + static_cast<int64_t>(row0 + r + 1) * stride + c);
    if (rm) {
      *reinterpret_cast<float4*>(rm + r * FW + c) = float4{round_tf32(v0.x), round_tf32(v0.y), round_tf32(v0.z), round_tf32(v0.w)};
      *reinterpret_cast<float4*>(rm + (r + 1) * FW + c) = float4{round_tf32(v1.x), round_tf32(v1.y), round_tf32(v1.z), round_tf32(v1.w)};
    }
    if (tr) {
      tr[(c + 0) * kTrRow + rp] = pack_bf16(v0.x, v1.x);
      tr[(c + 1) * kTrRow + rp] = pack_bf16(v0.y, v1.y);
      tr[(c + 2) * kTrRow + rp] = pack_bf16(v0.z, v1.z);
      tr[(c + 3) * kTrRow + rp] = pack_bf16(v0.w, v1.w);
    }
  }
}

// The bf16 B fragment for output columns [8 n, 8 n + 8) and k [16 kc, 16 kc + 16) from a
// transposed tile (B^T row-major: the output column is its row).
__device__ __forceinline__ void load_b_bf16(uint32_t (&b)[2], const uint32_t* tr, int n, int kc, int g, int t) {
  b[0] = tr[(8 * n + g) * kTrRow + kc * 8 + t];
  b[1] = tr[(8 * n + g) * kTrRow + kc * 8 + 4 + t];
}

// Accumulators of a 16 x 64 product (eight 8-column tiles) as the A operand of the next product's
// k step kc (columns 16 kc .. 16 kc + 15), rounded to bf16.
__device__ __forceinline__ void accumulators_as_a(uint32_t (&a)[4], const float (&s)[8][4], int kc) {
  a[0] = pack_bf16(s[2 * kc][0], s[2 * kc][1]);
  a[1] = pack_bf16(s[2 * kc][2], s[2 * kc][3]);
  a[2] = pack_bf16(s[2 * kc + 1][0], s[2 * kc + 1][1]);
  a[3] = pack_bf16(s[2 * kc + 1][2], s[2 * kc + 1][3]);
}

template <int R, int C>
__device__ __forceinline__ void clear(float (&x)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; i++)
#pragma unroll
    for (int j = 0; j < C; j++) x[i][j] = 0.0f;
}

// s (16 rows x 64 columns, eight 8-column tiles) += A B^T over HD in tf32: A is rows [r0, r0 + 16)
// of the row-major tile `at`, B^T the row-major tile `bt`.
template <int HD>
__device__ __forceinline__ void tile_product(float (&s)[8][4], const float* at, int r0, const float* bt, int g, int t) {
  constexpr int FW = f32_row(HD);
#pragma unroll
  for (int kk = 0; kk < HD / 8; kk++) {
    float a[4];
    a[0] = at[(r0 + g) * FW + kk * 8 + t];
    a[1] = at[(r0 + g + 8) * FW + kk * 8 + t];
    a[2] = at[(r0 + g) * FW + kk * 8 + 4 + t];
    a[3] = at[(r0 + g + 8) * FW + kk * 8 + 4 + t];
#pragma unroll
    for (int n = 0; n < 8; n++) {
      float b[2];
      b[0] = bt[(8 * n + g) * FW + kk * 8 + t];
      b[1] = bt[(8 * n + g) * FW + kk * 8 + 4 + t];
      mma_tf32(s[n], a, b);
    }
  }
}

// acc (16 rows x HD) += S B in bf16, S the accumulators of a 16 x 64 product, B from a transposed
// tile ([HD][64 rows of B]).
template <int HD>
__device__ __forceinline__ void accumulate(float (&acc)[HD / 8][4], const float (&s)[8][4], const uint32_t* b_tr, int g, int t) {
#pragma unroll
  for (int kc = 0; kc < kTile / 16; kc++) {
    uint32_t a[4];
    accumulators_as_a(a, s, kc);
#pragma unroll
    for (int dn = 0; dn < HD / 8; dn++) {
      uint32_t b[2];
      load_b_bf16(b, b_tr, dn, kc, g, t);
      mma_bf16(acc[dn], a, b);
    }
  }
}

// Row `i / 2` (0: the lane's row g, 1: g + 8) and column of accumulator element (n, i).
__device__ __forceinline__ int acc_col(int n, int i, int t) { return 8 * n + 2 * t + (i & 1); }

// Writes 16 x HD accumulators (times `scale`) to rows r0 + g and r0 + g + 8 of dst (rows past
// `limit` skipped).
template <int HD>
__device__ __forceinline__ void store_rows(float* dst, int64_t stride, int r0, int limit, const float (&acc)[HD / 8][4], float scale, int g, int t) {
#pragma unroll
  for (int half = 0; half < 2; half++) {
    const int r = r0 + g + 8 * half;
    if (r >= limit) continue;
    float* row = dst + static_cast<int64_t>(r) * stride;
#pragma unroll
    for (int dn = 0; dn < HD / 8; dn++) {
      float2 v;
      v.x = acc[dn][2 * half] * scale;
      v.y = acc[dn][2 * half + 1] * scale;
      *reinterpret_cast<float2*>(row + 8 * dn + 2 * t) = v;
    }
  }
}

// Forward, training layout. Grid (query tiles, heads, batch). lse gets natural-log log-sum-exps,
// as the fp32 kernel writes them.
template <int HD>
__global__ void __launch_bounds__(kThreads) k_forward(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k,
                                                      const float* __restrict__ v, int64_t kv_pos_stride, int64_t kv_seq_stride,
                                                      float* __restrict__ out, int64_t out_stride, float* __restrict__ lse, int S, int heads,
                                                      int group, float scale_log2) {
  constexpr int FW = f32_row(HD), DN = HD / 8;
  SW_DYNAMIC_SHARED(float, sm);
  float* Qs = sm;                                            // [64][FW] tf32
  float* Ks = Qs + kTile * FW;                               // [64][FW] tf32
  uint32_t* Vt = reinterpret_cast<uint32_t*>(Ks + kTile * FW);  // [HD][kTrRow] bf16 pairs
  const int q0 = blockIdx.x * kTile, h = blockIdx.y, b = blockIdx.z, kvh = h / group;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, wr = 16 * warp;
  const int64_t row0 = static_cast<int64_t>(b) * S;
  const float* kb = k + b * kv_seq_stride + static_cast<int64_t>(kvh) * HD;
  const float* vb = v + b * kv_seq_stride + static_cast<int64_t>(kvh) * HD;
  load_tile<HD>(Qs, nullptr, q + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0, S);

  const int qrow[2] = {q0 + wr + g, q0 + wr + g + 8};
  float o[DN][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  clear(o);
  const int tiles = (min(S, q0 + kTile) - 1) / kTile + 1;  // up to the tile of the block's last query
  for (int kt = 0; kt < tiles; kt++) {
    const int k0 = kt * kTile;
    __syncthreads();  // the previous tile's Ks and Vt are read
    load_tile<HD>(Ks, nullptr, kb, kv_pos_stride, k0, S);
    load_tile<HD>(nullptr, Vt, vb, kv_pos_stride, k0, S);
    __syncthreads();
    float s[8][4];
    clear(s);
    tile_product<HD>(s, Qs, wr, Ks, g, t);
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const int kj = k0 + acc_col(n, i, t);
        s[n][i] = kj <= qrow[i / 2] && kj < S ? s[n][i] * scale_log2 : -INFINITY;
        mx[i / 2] = fmaxf(mx[i / 2], s[n][i]);
      }
    float base[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(kFull, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(kFull, mx[r], 2));
      const float m_new = fmaxf(m[r], mx[r]);
      base[r] = m_new == -INFINITY ? 0.0f : m_new;  // a row with nothing visible yet stays empty
      const float corr = exp2f(m[r] - base[r]);
      m[r] = m_new;
      l[r] *= corr;  // each lane sums its own columns; the quad's sum is taken at the end
#pragma unroll
      for (int dn = 0; dn < DN; dn++) {
        o[dn][2 * r] *= corr;
        o[dn][2 * r + 1] *= corr;
      }
    }
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
      for (int i = 0; i < 4; i++) {
        s[n][i] = exp2f(s[n][i] - base[i / 2]);
        l[i / 2] += s[n][i];
      }
    accumulate<HD>(o, s, Vt, g, t);  // O += P V
  }
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    l[r] += __shfl_xor_sync(kFull, l[r], 1);
    l[r] += __shfl_xor_sync(kFull, l[r], 2);
    inv[r] = 1.0f / l[r];
  }
#pragma unroll
  for (int dn = 0; dn < DN; dn++) {
    o[dn][0] *= inv[0];
    o[dn][1] *= inv[0];
    o[dn][2] *= inv[1];
    o[dn][3] *= inv[1];
  }
  store_rows<HD>(out + row0 * out_stride + static_cast<int64_t>(h) * HD, out_stride, q0 + wr, S, o, 1.0f, g, t);
  if (lse && t == 0)
#pragma unroll
    for (int r = 0; r < 2; r++)
      if (qrow[r] < S) lse[(row0 + qrow[r]) * heads + h] = (m[r] + log2f(l[r])) * 0.6931471805599453f;
}

// dK and dV of one 64-key tile from one query head h, over every query tile at or after the keys.
// Grid (key tiles, heads, batch). With several query heads per kv head, each head's share goes to
// its own slice (column h * HD) of partial buffers [rows][heads * HD] and k_sum_group adds them
// in head order; with one, dk and dv are the gradients themselves (dk_stride: their row stride).
template <int HD>
__global__ void __launch_bounds__(kThreads) k_backward_kv(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k,
                                                          const float* __restrict__ v, int64_t kv_stride, const float* __restrict__ dout,
                                                          int64_t out_stride, const float* __restrict__ lse, const float* __restrict__ D,
                                                          float* __restrict__ dk, float* __restrict__ dv, int64_t dk_stride, int S, int heads, int group, float scale_log2, float scale) {
  constexpr int FW = f32_row(HD), DN = HD / 8;
  SW_DYNAMIC_SHARED(float, sm);
  float* Ks = sm;                                              // [64][FW] tf32
  float* Vs = Ks + kTile * FW;                                 // [64][FW] tf32
  float* Qs = Vs + kTile * FW;                                 // [64][FW] tf32
  float* dOs = Qs + kTile * FW;                                // [64][FW] tf32
  float* Ls = dOs + kTile * FW;                                // [64], log2 units
  float* Ds = Ls + kTile;                                      // [64]
  uint32_t* Qt = reinterpret_cast<uint32_t*>(Ds + kTile);      // [HD][kTrRow] bf16 pairs
  uint32_t* dOt = Qt + HD * kTrRow;                            // [HD][kTrRow] bf16 pairs
  const int k0 = blockIdx.x * kTile, h = blockIdx.y, b = blockIdx.z, kvh = h / group;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, wr = 16 * warp;
  const int64_t row0 = static_cast<int64_t>(b) * S;
  load_tile<HD>(Ks, nullptr, k + row0 * kv_stride + static_cast<int64_t>(kvh) * HD, kv_stride, k0, S);
  load_tile<HD>(Vs, nullptr, v + row0 * kv_stride + static_cast<int64_t>(kvh) * HD, kv_stride, k0, S);
  const int krow[2] = {k0 + wr + g, k0 + wr + g + 8};
  float dK[DN][4], dV[DN][4];
  clear(dK);
  clear(dV);
  const int qtiles = (S + kTile - 1) / kTile;
  for (int qt = blockIdx.x; qt < qtiles; qt++) {
    const int q0 = qt * kTile;
    __syncthreads();  // the previous tile's Q, dO and row statistics are read
    load_tile<HD>(Qs, Qt, q + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0, S);
    load_tile<HD>(dOs, dOt, dout + row0 * out_stride + static_cast<int64_t>(h) * HD, out_stride, q0, S);
    for (int i = threadIdx.x; i < kTile; i += kThreads) {
      const bool ok = q0 + i < S;
      Ls[i] = ok ? lse[(row0 + q0 + i) * heads + h] * kLog2e : 0.0f;
      Ds[i] = ok ? D[(row0 + q0 + i) * heads + h] : 0.0f;
    }
    __syncthreads();
    // P^T[key][query] = exp(scale k.q - lse[query]) where the query sees the key.
    float p[8][4];
    clear(p);
    tile_product<HD>(p, Ks, wr, Qs, g, t);
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const int c = acc_col(n, i, t), qi = q0 + c;
        p[n][i] = krow[i / 2] <= qi && qi < S ? exp2f(p[n][i] * scale_log2 - Ls[c]) : 0.0f;
      }
    accumulate<HD>(dV, p, dOt, g, t);  // dV += P^T dO
    float dp[8][4];
    clear(dp);
    tile_product<HD>(dp, Vs, wr, dOs, g, t);  // dP^T[key][query] = v . dout
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
      for (int i = 0; i < 4; i++) p[n][i] *= dp[n][i] - Ds[acc_col(n, i, t)];  // dS^T, without the scale
    accumulate<HD>(dK, p, Qt, g, t);  // dK += dS^T Q
  }
  const int64_t col = static_cast<int64_t>(h) * HD;  // = kvh * HD when group is 1
  store_rows<HD>(dk + row0 * dk_stride + col, dk_stride, k0 + wr, S, dK, scale, g, t);
  store_rows<HD>(dv + row0 * dk_stride + col, dk_stride, k0 + wr, S, dV, 1.0f, g, t);
}

// dk[r, kvh * HD + d] = sum over the group's heads hh, in order, of part[r, (kvh * group + hh) * HD + d].
template <int HD>
__global__ void k_sum_group(float* __restrict__ dk, float* __restrict__ dv, int64_t kv_stride, const float* __restrict__ pk,
                            const float* __restrict__ pv, int64_t rows, int kv_heads, int group) {
  const int64_t n = rows * kv_heads * HD;
  const int64_t pstride = static_cast<int64_t>(kv_heads) * group * HD;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / (static_cast<int64_t>(kv_heads) * HD);
    const int c = static_cast<int>(i % (static_cast<int64_t>(kv_heads) * HD));
    const int kvh = c / HD, d = c % HD;
    const float* a = pk + r * pstride + static_cast<int64_t>(kvh) * group * HD + d;
    const float* bb = pv + r * pstride + static_cast<int64_t>(kvh) * group * HD + d;
    float sk = 0.0f, sv = 0.0f;
    for (int hh = 0; hh < group; hh++) {
      sk += a[hh * HD];
      sv += bb[hh * HD];
    }
    dk[r * kv_stride + c] = sk;
    dv[r * kv_stride + c] = sv;
  }
}

// dQ of one 64-query tile of head h, over the key tiles it sees. Grid (query tiles, heads, batch).
template <int HD>
__global__ void __launch_bounds__(kThreads) k_backward_q(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k,
                                                         const float* __restrict__ v, int64_t kv_stride, const float* __restrict__ dout,
                                                         int64_t out_stride, const float* __restrict__ lse, const float* __restrict__ D,
                                                         float* __restrict__ dq, int S, int heads, int group, float scale_log2, float scale) {
  constexpr int FW = f32_row(HD), DN = HD / 8;
  SW_DYNAMIC_SHARED(float, sm);
  float* Qs = sm;                                               // [64][FW] tf32
  float* dOs = Qs + kTile * FW;                                 // [64][FW] tf32
  float* Ks = dOs + kTile * FW;                                 // [64][FW] tf32
  float* Vs = Ks + kTile * FW;                                  // [64][FW] tf32
  uint32_t* Kt = reinterpret_cast<uint32_t*>(Vs + kTile * FW);  // [HD][kTrRow] bf16 pairs
  const int q0 = blockIdx.x * kTile, h = blockIdx.y, b = blockIdx.z, kvh = h / group;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, wr = 16 * warp;
  const int64_t row0 = static_cast<int64_t>(b) * S;
  load_tile<HD>(Qs, nullptr, q + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0, S);
  load_tile<HD>(dOs, nullptr, dout + row0 * out_stride + static_cast<int64_t>(h) * HD, out_stride, q0, S);
  const int qrow[2] = {q0 + wr + g, q0 + wr + g + 8};
  float L[2], Dr[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    const bool ok = qrow[r] < S;
    L[r] = ok ? lse[(row0 + qrow[r]) * heads + h] * kLog2e : 0.0f;
    Dr[r] = ok ? D[(row0 + qrow[r]) * heads + h] : 0.0f;
  }
  float dQ[DN][4];
  clear(dQ);
  const float* kb = k + row0 * kv_stride + static_cast<int64_t>(kvh) * HD;
  const float* vb = v + row0 * kv_stride + static_cast<int64_t>(kvh) * HD;
  for (int kt = 0; kt <= static_cast<int>(blockIdx.x); kt++) {
    const int k0 = kt * kTile;
    __syncthreads();  // the previous tile's Ks, Vs and Kt are read
    load_tile<HD>(Ks, Kt, kb, kv_stride, k0, S);
    load_tile<HD>(Vs, nullptr, vb, kv_stride, k0, S);
    __syncthreads();
    float s[8][4], dp[8][4];
    clear(s);
    clear(dp);
    tile_product<HD>(s, Qs, wr, Ks, g, t);    // S = Q K^T
    tile_product<HD>(dp, dOs, wr, Vs, g, t);  // dP = dO V^T
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const int kj = k0 + acc_col(n, i, t), r = i / 2;
        const float p = kj <= qrow[r] && qrow[r] < S ? exp2f(s[n][i] * scale_log2 - L[r]) : 0.0f;
        s[n][i] = p * (dp[n][i] - Dr[r]);  // dS, without the scale
      }
    accumulate<HD>(dQ, s, Kt, g, t);  // dQ += dS K
  }
  store_rows<HD>(dq + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0 + wr, S, dQ, scale, g, t);
}

// Shared memory of each kernel, in bytes.
template <int HD>
constexpr size_t forward_shared() {
  return sizeof(float) * 2 * kTile * f32_row(HD) + sizeof(uint32_t) * HD * kTrRow;
}
template <int HD>
constexpr size_t backward_kv_shared() {
  return sizeof(float) * (4 * kTile * f32_row(HD) + 2 * kTile) + sizeof(uint32_t) * 2 * HD * kTrRow;
}
template <int HD>
constexpr size_t backward_q_shared() {
  return sizeof(float) * 4 * kTile * f32_row(HD) + sizeof(uint32_t) * HD * kTrRow;
}

}  // namespace sw::cuda::tc

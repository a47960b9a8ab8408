// The attention kernels (see attention.h). Tiled kernels run 256 threads as a 16 x 16 grid:
// thread (ty, tx) owns rows ty*4 .. ty*4+3 of a 64-row tile and columns tx, tx+16, tx+32, tx+48
// of a 64-column tile, so the 16 threads of a row group are one half-warp and row reductions
// are four shuffles. Shared rows are padded by four floats: rows stay 16-byte aligned for float4
// reads (one shared-memory instruction for four of the products' operands, which keeps the FMA
// units rather than shared memory the limit), and eight consecutive rows start in distinct banks.
#include "attention.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attention_tensor_cores.cuh"
#include "reduce.cuh"

namespace sw::cuda {
namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;
constexpr int kPld = kTile + 4;  // padded row of a [64, 64] tile

template <int HD>
__host__ __device__ constexpr int padded() {
  return HD + 4;
}

// Rows [row0, row0 + 64) x HD of a strided matrix into shared memory; rows past `limit` are zero.
template <int HD>
__device__ __forceinline__ void load_tile(float* dst, const float* src, int64_t stride, int row0, int limit) {
  constexpr int LD = padded<HD>();
  for (int i = threadIdx.x; i < kTile * HD; i += kThreads) {
    const int r = i / HD, d = i % HD;
    dst[r * LD + d] = row0 + r < limit ? src[static_cast<int64_t>(row0 + r) * stride + d] : 0.0f;
  }
}

// The log-sum-exp and D = dot(dout, out) of queries [q0, q0 + 64) of head h (0 past the end).
__device__ __forceinline__ void load_row_stats(float* Ls, float* Ds, const float* lse, const float* D, int64_t row0, int q0, int S, int heads,
                                               int h) {
  for (int i = threadIdx.x; i < kTile; i += kThreads) {
    const bool ok = q0 + i < S;
    Ls[i] = ok ? lse[(row0 + q0 + i) * heads + h] : 0.0f;
    Ds[i] = ok ? D[(row0 + q0 + i) * heads + h] : 0.0f;
  }
}

template <int R, int C>
__device__ __forceinline__ void clear(float (&a)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; i++)
#pragma unroll
    for (int j = 0; j < C; j++) a[i][j] = 0.0f;
}

// Sum and max over the 16 threads of a row group (a half-warp).
__device__ __forceinline__ float group_max(float v) {
  for (int o = 8; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFull, v, o));
  return v;
}
__device__ __forceinline__ float group_sum(float v) {
  for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// s[i][j] = sum_d A[ty*4+i][d] * B[tx+16j][d] over two padded [64, HD] tiles.
template <int HD>
__device__ __forceinline__ void tile_dot(float (&s)[4][4], const float* A, const float* B, int ty, int tx) {
  constexpr int LD = padded<HD>();
  clear(s);
  for (int d = 0; d < HD; d += 4) {
    float4 a[4], b[4];
#pragma unroll
    for (int i = 0; i < 4; i++) a[i] = load4(A + (ty * 4 + i) * LD + d);
#pragma unroll
    for (int j = 0; j < 4; j++) b[j] = load4(B + (tx + 16 * j) * LD + d);
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        float v = s[i][j];
        v = fmaf(a[i].x, b[j].x, v);
        v = fmaf(a[i].y, b[j].y, v);
        v = fmaf(a[i].z, b[j].z, v);
        s[i][j] = fmaf(a[i].w, b[j].w, v);
      }
  }
}

// acc[i][c] += sum_r P[ty*4+i][r] * B[r][tx+16c]: a [64, 64] tile (kPld rows) times a padded [64, HD] tile.
template <int HD>
__device__ __forceinline__ void tile_accumulate(float (&acc)[4][HD / 16], const float* P, const float* B, int ty, int tx) {
  constexpr int LD = padded<HD>();
  constexpr int CW = HD / 16;
  for (int r = 0; r < kTile; r += 4) {
    float4 p[4];
#pragma unroll
    for (int i = 0; i < 4; i++) p[i] = load4(P + (ty * 4 + i) * kPld + r);
#pragma unroll
    for (int k = 0; k < 4; k++) {
      float b[CW];
#pragma unroll
      for (int c = 0; c < CW; c++) b[c] = B[(r + k) * LD + tx + 16 * c];
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const float pk = k == 0 ? p[i].x : k == 1 ? p[i].y : k == 2 ? p[i].z : p[i].w;
#pragma unroll
        for (int c = 0; c < CW; c++) acc[i][c] = fmaf(pk, b[c], acc[i][c]);
      }
    }
  }
}

// Forward, training layout. Grid (query tiles, heads, batch).
template <int HD>
__global__ void __launch_bounds__(kThreads) k_flash_forward(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k,
                                                            const float* __restrict__ v, int64_t kv_pos_stride, int64_t kv_seq_stride,
                                                            float* __restrict__ out, int64_t out_stride, float* __restrict__ lse, int S,
                                                            int heads, int group, float scale) {
  constexpr int LD = padded<HD>();
  constexpr int CW = HD / 16;
  SW_DYNAMIC_SHARED(float, sm);
  float* Qs = sm;
  float* Ks = Qs + kTile * LD;
  float* Vs = Ks + kTile * LD;
  float* Ps = Vs + kTile * LD;
  const int q0 = blockIdx.x * kTile, h = blockIdx.y, b = blockIdx.z, g = h / group;
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  const int64_t row0 = static_cast<int64_t>(b) * S;
  const float* kb = k + b * kv_seq_stride + static_cast<int64_t>(g) * HD;
  const float* vb = v + b * kv_seq_stride + static_cast<int64_t>(g) * HD;
  load_tile<HD>(Qs, q + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0, S);

  float m[4], l[4], acc[4][CW];
  clear(acc);
#pragma unroll
  for (int i = 0; i < 4; i++) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
  }
  const int tiles = (min(S, q0 + kTile) - 1) / kTile + 1;  // up to the tile of the block's last query
  for (int kt = 0; kt < tiles; kt++) {
    const int k0 = kt * kTile;
    __syncthreads();  // the previous tile's Ks, Vs and Ps are read
    load_tile<HD>(Ks, kb, kv_pos_stride, k0, S);
    load_tile<HD>(Vs, vb, kv_pos_stride, k0, S);
    __syncthreads();
    float s[4][4];
    tile_dot<HD>(s, Qs, Ks, ty, tx);
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int qi = q0 + ty * 4 + i;
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const int kj = k0 + tx + 16 * j;
        s[i][j] = kj <= qi && kj < S ? s[i][j] * scale : -INFINITY;
        mx = fmaxf(mx, s[i][j]);
      }
      const float m_new = fmaxf(m[i], group_max(mx));
      const float base = m_new == -INFINITY ? 0.0f : m_new;  // a row with nothing visible yet stays empty
      const float corr = expf(m[i] - base);
      float rs = 0.0f;
#pragma unroll
      for (int j = 0; j < 4; j++) {
        s[i][j] = expf(s[i][j] - base);
        rs += s[i][j];
      }
      l[i] = l[i] * corr + group_sum(rs);
      m[i] = m_new;
#pragma unroll
      for (int c = 0; c < CW; c++) acc[i][c] *= corr;
#pragma unroll
      for (int j = 0; j < 4; j++) Ps[(ty * 4 + i) * kPld + tx + 16 * j] = s[i][j];
    }
    __syncthreads();
    tile_accumulate<HD>(acc, Ps, Vs, ty, tx);
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int qi = q0 + ty * 4 + i;
    if (qi >= S) continue;
    const float inv = 1.0f / l[i];
    float* o = out + (row0 + qi) * out_stride + static_cast<int64_t>(h) * HD;
#pragma unroll
    for (int c = 0; c < CW; c++) o[tx + 16 * c] = acc[i][c] * inv;
    if (lse && tx == 0) lse[(row0 + qi) * heads + h] = m[i] + logf(l[i]);
  }
}

// Forward for arbitrary rows against a KV cache. Grid (rows, kv heads), block 32 x group: warp w
// is query head kv_head * group + w; lane j scores key k0 + j of each 32-key tile.
template <int HD>
__global__ void k_attention_rows(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k, const float* __restrict__ v,
                                 int64_t kv_seq_stride, int64_t kv_pos_stride, const int32_t* __restrict__ seq, const int32_t* __restrict__ pos,
                                 float* __restrict__ out, int64_t out_stride, float* __restrict__ lse, int heads, int group, float scale) {
  constexpr int LD = HD + 1;  // lane j reads row j: one float of padding spreads the rows over the banks
  constexpr int CW = (HD + 31) / 32;
  SW_DYNAMIC_SHARED(float, sm);
  float* Qs = sm;  // [group, HD]
  float* Ks = Qs + group * HD;
  float* Vs = Ks + 32 * LD;
  const int r = blockIdx.x, g = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, h = g * group + warp;
  const int n = pos[r] + 1;
  const int64_t base = static_cast<int64_t>(seq[r]) * kv_seq_stride + static_cast<int64_t>(g) * HD;
  const float* qr = q + static_cast<int64_t>(r) * q_stride + static_cast<int64_t>(g) * group * HD;
  for (int i = threadIdx.x; i < group * HD; i += blockDim.x) Qs[i] = qr[i];
  float m = -INFINITY, l = 0.0f, acc[CW];
#pragma unroll
  for (int c = 0; c < CW; c++) acc[c] = 0.0f;
  for (int k0 = 0; k0 < n; k0 += 32) {
    __syncthreads();
    for (int i = threadIdx.x; i < 32 * HD; i += blockDim.x) {
      const int j = i / HD, d = i % HD;
      const bool ok = k0 + j < n;
      const int64_t at = base + static_cast<int64_t>(k0 + j) * kv_pos_stride + d;
      Ks[j * LD + d] = ok ? k[at] : 0.0f;
      Vs[j * LD + d] = ok ? v[at] : 0.0f;
    }
    __syncthreads();
    float s = -INFINITY;
    if (k0 + lane < n) {
      float dot = 0.0f;
      for (int d = 0; d < HD; d++) dot = fmaf(Qs[warp * HD + d], Ks[lane * LD + d], dot);
      s = dot * scale;
    }
    const float m_new = fmaxf(m, warp_max(s));  // key k0 is always visible
    const float corr = expf(m - m_new);
    const float p = expf(s - m_new);
    l = l * corr + warp_sum(p);
    m = m_new;
    const int nk = min(32, n - k0);
#pragma unroll
    for (int c = 0; c < CW; c++) acc[c] *= corr;
    for (int j = 0; j < nk; j++) {
      const float pj = __shfl_sync(kFull, p, j);
#pragma unroll
      for (int c = 0; c < CW; c++) {
        const int d = lane + 32 * c;
        if (d < HD) acc[c] = fmaf(pj, Vs[j * LD + d], acc[c]);
      }
    }
  }
  float* o = out + static_cast<int64_t>(r) * out_stride + static_cast<int64_t>(h) * HD;
#pragma unroll
  for (int c = 0; c < CW; c++) {
    const int d = lane + 32 * c;
    if (d < HD) o[d] = acc[c] / l;
  }
  if (lse && lane == 0) lse[static_cast<int64_t>(r) * heads + h] = m + logf(l);
}

// D[row, h] = dot(dout, out) per (row, head): a warp each.
template <int HD>
__global__ void k_attention_delta(const float* __restrict__ out, const float* __restrict__ dout, int64_t out_stride, float* __restrict__ D,
                                  int64_t rows, int heads) {
  const int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const bool ok = w < rows * heads;
  float s = 0.0f;
  if (ok) {
    const int64_t r = w / heads;
    const int h = static_cast<int>(w % heads);
    const float* o = out + r * out_stride + static_cast<int64_t>(h) * HD;
    const float* d = dout + r * out_stride + static_cast<int64_t>(h) * HD;
    for (int i = lane; i < HD; i += 32) s = fmaf(o[i], d[i], s);
  }
  s = warp_sum(s);
  if (ok && lane == 0) D[w] = s;
}

// The backward kernels' shared memory: four padded [64, HD] tiles, a [64, 64] tile and two rows.
template <int HD>
struct BackwardTiles {
  static constexpr size_t kFloats = 4 * kTile * padded<HD>() + kTile * kPld + 2 * kTile;
  float *Q, *dO, *K, *V, *P, *L, *D;
  __device__ explicit BackwardTiles(float* sm)
      : Q(sm), dO(Q + kTile * padded<HD>()), K(dO + kTile * padded<HD>()), V(K + kTile * padded<HD>()), P(V + kTile * padded<HD>()), L(P + kTile * kPld), D(L + kTile) {}
};

// dK and dV of one 64-key tile of kv head g, over the group's query heads and every query tile at
// or after the keys. Grid (key tiles, kv heads, batch).
template <int HD>
__global__ void __launch_bounds__(kThreads) k_flash_backward_kv(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k,
                                                                const float* __restrict__ v, int64_t kv_stride, const float* __restrict__ dout,
                                                                int64_t out_stride, const float* __restrict__ lse, const float* __restrict__ D,
                                                                float* __restrict__ dk, float* __restrict__ dv, int S, int heads, int group,
                                                                float scale) {
  constexpr int CW = HD / 16;
  SW_DYNAMIC_SHARED(float, sm);
  const BackwardTiles<HD> sh(sm);  // sh.P is [key, query]
  const int k0 = blockIdx.x * kTile, g = blockIdx.y, b = blockIdx.z;
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  const int64_t row0 = static_cast<int64_t>(b) * S;
  load_tile<HD>(sh.K, k + row0 * kv_stride + static_cast<int64_t>(g) * HD, kv_stride, k0, S);
  load_tile<HD>(sh.V, v + row0 * kv_stride + static_cast<int64_t>(g) * HD, kv_stride, k0, S);
  float dK[4][CW], dV[4][CW];
  clear(dK);
  clear(dV);
  const int qtiles = (S + kTile - 1) / kTile;
  for (int hh = 0; hh < group; hh++) {
    const int h = g * group + hh;
    for (int qt = blockIdx.x; qt < qtiles; qt++) {
      const int q0 = qt * kTile;
      __syncthreads();  // the previous iteration's sh.Q, sh.dO, sh.P, sh.L and sh.D are read
      load_tile<HD>(sh.Q, q + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0, S);
      load_tile<HD>(sh.dO, dout + row0 * out_stride + static_cast<int64_t>(h) * HD, out_stride, q0, S);
      load_row_stats(sh.L, sh.D, lse, D, row0, q0, S, heads, h);
      __syncthreads();
      // P^T[key][query] = exp(scale k.q - lse[query]) where the query sees the key.
      float p[4][4], dp[4][4];
      tile_dot<HD>(p, sh.K, sh.Q, ty, tx);
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
          const int kj = k0 + ty * 4 + i, qi = q0 + tx + 16 * j;
          p[i][j] = kj <= qi && qi < S ? expf(p[i][j] * scale - sh.L[tx + 16 * j]) : 0.0f;
          sh.P[(ty * 4 + i) * kPld + tx + 16 * j] = p[i][j];
        }
      __syncthreads();
      tile_accumulate<HD>(dV, sh.P, sh.dO, ty, tx);  // dV += P^T dO
      tile_dot<HD>(dp, sh.V, sh.dO, ty, tx);         // dP^T[key][query] = v . dout
      __syncthreads();                           // sh.P is read: it now takes dS^T
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) sh.P[(ty * 4 + i) * kPld + tx + 16 * j] = p[i][j] * (dp[i][j] - sh.D[tx + 16 * j]) * scale;
      __syncthreads();
      tile_accumulate<HD>(dK, sh.P, sh.Q, ty, tx);  // dK += dS^T Q
    }
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int kj = k0 + ty * 4 + i;
    if (kj >= S) continue;
    float* dkr = dk + (row0 + kj) * kv_stride + static_cast<int64_t>(g) * HD;
    float* dvr = dv + (row0 + kj) * kv_stride + static_cast<int64_t>(g) * HD;
#pragma unroll
    for (int c = 0; c < CW; c++) {
      dkr[tx + 16 * c] = dK[i][c];
      dvr[tx + 16 * c] = dV[i][c];
    }
  }
}

// dQ of one 64-query tile of head h, over the key tiles it sees. Grid (query tiles, heads, batch).
template <int HD>
__global__ void __launch_bounds__(kThreads) k_flash_backward_q(const float* __restrict__ q, int64_t q_stride, const float* __restrict__ k,
                                                               const float* __restrict__ v, int64_t kv_stride, const float* __restrict__ dout,
                                                               int64_t out_stride, const float* __restrict__ lse, const float* __restrict__ D,
                                                               float* __restrict__ dq, int S, int heads, int group, float scale) {
  constexpr int CW = HD / 16;
  SW_DYNAMIC_SHARED(float, sm);
  const BackwardTiles<HD> sh(sm);  // sh.P is [query, key]
  const int q0 = blockIdx.x * kTile, h = blockIdx.y, b = blockIdx.z, g = h / group;
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  const int64_t row0 = static_cast<int64_t>(b) * S;
  load_tile<HD>(sh.Q, q + row0 * q_stride + static_cast<int64_t>(h) * HD, q_stride, q0, S);
  load_tile<HD>(sh.dO, dout + row0 * out_stride + static_cast<int64_t>(h) * HD, out_stride, q0, S);
  load_row_stats(sh.L, sh.D, lse, D, row0, q0, S, heads, h);
  float dQ[4][CW];
  clear(dQ);
  const float* kb = k + row0 * kv_stride + static_cast<int64_t>(g) * HD;
  const float* vb = v + row0 * kv_stride + static_cast<int64_t>(g) * HD;
  for (int kt = 0; kt <= static_cast<int>(blockIdx.x); kt++) {
    const int k0 = kt * kTile;
    __syncthreads();  // the previous tile's sh.K and sh.P are read (and sh.Q, sh.dO, sh.L, sh.D written)
    load_tile<HD>(sh.K, kb, kv_stride, k0, S);
    load_tile<HD>(sh.V, vb, kv_stride, k0, S);
    __syncthreads();
    float p[4][4], dp[4][4];
    tile_dot<HD>(p, sh.Q, sh.K, ty, tx);
    tile_dot<HD>(dp, sh.dO, sh.V, ty, tx);
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const int qi = q0 + ty * 4 + i, kj = k0 + tx + 16 * j;
        const float pij = kj <= qi && qi < S ? expf(p[i][j] * scale - sh.L[ty * 4 + i]) : 0.0f;
        sh.P[(ty * 4 + i) * kPld + tx + 16 * j] = pij * (dp[i][j] - sh.D[ty * 4 + i]) * scale;
      }
    __syncthreads();
    tile_accumulate<HD>(dQ, sh.P, sh.K, ty, tx);  // dQ += dS K
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int qi = q0 + ty * 4 + i;
    if (qi >= S) continue;
    float* dqr = dq + (row0 + qi) * q_stride + static_cast<int64_t>(h) * HD;
#pragma unroll
    for (int c = 0; c < CW; c++) dqr[tx + 16 * c] = dQ[i][c];
  }
}

template <typename K>
void allow_shared(K* kernel, size_t bytes) {
  if (bytes > 48 * 1024) SW_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

template <int HD>
void forward_dense(const AttentionArgs<float>& a, cudaStream_t stream) {
  const int S = a.dense_seq_len, batch = a.rows / S, group = a.heads / a.kv_heads;
  const size_t smem = sizeof(float) * (3 * kTile * padded<HD>() + kTile * kPld);
  allow_shared(k_flash_forward<HD>, smem);
  const dim3 grid((S + kTile - 1) / kTile, a.heads, batch);
  SW_LAUNCH(k_flash_forward<HD>, grid, kThreads, smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_pos_stride, a.kv_seq_stride, a.out, a.out_stride,
            a.lse, S, a.heads, group, static_cast<float>(1.0 / std::sqrt(static_cast<double>(HD))));
}

// The tensor-core kernels read float4 rows: strides and starts must be 16-byte aligned.
bool aligned4(const void* p, int64_t stride) { return reinterpret_cast<uintptr_t>(p) % 16 == 0 && stride % 4 == 0; }

template <int HD>
void forward_dense_tc(const AttentionArgs<float>& a, cudaStream_t stream) {
  const int S = a.dense_seq_len, batch = a.rows / S, group = a.heads / a.kv_heads;
  constexpr size_t smem = tc::forward_shared<HD>();
  allow_shared(tc::k_forward<HD>, smem);
  const dim3 grid((S + tc::kTile - 1) / tc::kTile, a.heads, batch);
  SW_LAUNCH(tc::k_forward<HD>, grid, tc::kThreads, smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_pos_stride, a.kv_seq_stride, a.out,
            a.out_stride, a.lse, S, a.heads, group, static_cast<float>(tc::kLog2e / std::sqrt(static_cast<double>(HD))));
}

template <int HD>
void forward_rows(const AttentionArgs<float>& a, cudaStream_t stream) {
  const int group = a.heads / a.kv_heads;
  if (group > 32) throw std::invalid_argument("the CUDA attention kernels take at most 32 query heads per key/value head");
  const size_t smem = sizeof(float) * (group * HD + 2 * 32 * (HD + 1));
  allow_shared(k_attention_rows<HD>, smem);
  SW_LAUNCH(k_attention_rows<HD>, dim3(a.rows, a.kv_heads), 32 * group, smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_seq_stride, a.kv_pos_stride,
            a.seq, a.pos, a.out, a.out_stride, a.lse, a.heads, group, static_cast<float>(1.0 / std::sqrt(static_cast<double>(HD))));
}

template <int HD>
void backward(const AttentionGradArgs<float>& a, bool tensor_cores, float* scratch, cudaStream_t stream) {
  const int S = a.seq_len, group = a.heads / a.kv_heads;
  const int64_t rows = static_cast<int64_t>(a.batch) * S;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(HD)));
  const int64_t warps = rows * a.heads;
  float* D = scratch;
  SW_LAUNCH(k_attention_delta<HD>, static_cast<unsigned>((warps + 7) / 8), 256, 0, stream, a.out, a.dout, a.out_stride, D, rows, a.heads);
  if (tensor_cores) {
    const int tiles = (S + tc::kTile - 1) / tc::kTile;
    const float scale_log2 = scale * tc::kLog2e;
    constexpr size_t kv_smem = tc::backward_kv_shared<HD>(), q_smem = tc::backward_q_shared<HD>();
    allow_shared(tc::k_backward_kv<HD>, kv_smem);
    allow_shared(tc::k_backward_q<HD>, q_smem);
    // Each query head's dK/dV share, summed over the group afterwards in head order (no atomics).
    float* dk = a.dk;
    float* dv = a.dv;
    int64_t stride = a.kv_pos_stride;
    if (group > 1) {
      dk = D + rows * a.heads;
      dv = dk + rows * a.heads * HD;
      stride = static_cast<int64_t>(a.heads) * HD;
    }
    SW_LAUNCH(tc::k_backward_kv<HD>, dim3(tiles, a.heads, a.batch), tc::kThreads, kv_smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_pos_stride,
              a.dout, a.out_stride, a.lse, D, dk, dv, stride, S, a.heads, group, scale_log2, scale);
    if (group > 1) {
      const int64_t n = rows * a.kv_heads * HD;
      const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, int64_t(1) << 16));
      SW_LAUNCH(tc::k_sum_group<HD>, blocks, 256, 0, stream, a.dk, a.dv, a.kv_pos_stride, dk, dv, rows, a.kv_heads, group);
    }
    SW_LAUNCH(tc::k_backward_q<HD>, dim3(tiles, a.heads, a.batch), tc::kThreads, q_smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_pos_stride,
              a.dout, a.out_stride, a.lse, D, a.dq, S, a.heads, group, scale_log2, scale);
    return;
  }
  const size_t smem = sizeof(float) * BackwardTiles<HD>::kFloats;
  allow_shared(k_flash_backward_kv<HD>, smem);
  allow_shared(k_flash_backward_q<HD>, smem);
  const int tiles = (S + kTile - 1) / kTile;
  SW_LAUNCH(k_flash_backward_kv<HD>, dim3(tiles, a.kv_heads, a.batch), kThreads, smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_pos_stride, a.dout,
            a.out_stride, a.lse, D, a.dk, a.dv, S, a.heads, group, scale);
  SW_LAUNCH(k_flash_backward_q<HD>, dim3(tiles, a.heads, a.batch), kThreads, smem, stream, a.q, a.q_stride, a.k, a.v, a.kv_pos_stride, a.dout,
            a.out_stride, a.lse, D, a.dq, S, a.heads, group, scale);
}

[[noreturn]] void unsupported(int hd) {
  throw std::invalid_argument("head_dim " + std::to_string(hd) + " is not supported by the CUDA attention kernels (16, 32, 64 or 128)");
}

}  // namespace

bool attention_head_dim_supported(int hd) { return hd == 16 || hd == 32 || hd == 64 || hd == 128; }

// Calls fn<head_dim> args for the head dimensions compiled.
#define SW_HEAD_DIMS(hd, fn, args) \
  switch (hd) {                    \
    case 16:                       \
      return fn<16> args;          \
    case 32:                       \
      return fn<32> args;          \
    case 64:                       \
      return fn<64> args;          \
    case 128:                      \
      return fn<128> args;         \
    default:                       \
      unsupported(hd);             \
  }

bool attention_tensor_cores_apply(const AttentionArgs<float>& a) {
  return aligned4(a.q, a.q_stride) && aligned4(a.k, a.kv_pos_stride) && aligned4(a.v, a.kv_seq_stride) && aligned4(a.out, a.out_stride);
}

bool attention_tensor_cores_apply(const AttentionGradArgs<float>& a) {
  return aligned4(a.q, a.q_stride) && aligned4(a.k, a.kv_pos_stride) && aligned4(a.v, a.kv_pos_stride) && aligned4(a.dout, a.out_stride) &&
         aligned4(a.dq, a.q_stride) && aligned4(a.dk, a.kv_pos_stride) && aligned4(a.dv, a.kv_pos_stride);
}

void attention_forward_dense(const AttentionArgs<float>& a, bool tensor_cores, cudaStream_t stream) {
  if (tensor_cores && attention_tensor_cores_apply(a)) {
    SW_HEAD_DIMS(a.head_dim, forward_dense_tc, (a, stream))
  }
  SW_HEAD_DIMS(a.head_dim, forward_dense, (a, stream))
}

void attention_forward_rows(const AttentionArgs<float>& a, cudaStream_t stream) { SW_HEAD_DIMS(a.head_dim, forward_rows, (a, stream)) }

size_t attention_backward_scratch_floats(const AttentionGradArgs<float>& a, bool tensor_cores) {
  const size_t rows = static_cast<size_t>(a.batch) * a.seq_len;
  const bool partials = tensor_cores && attention_tensor_cores_apply(a) && a.heads > a.kv_heads;
  return rows * a.heads * (partials ? 1 + 2 * static_cast<size_t>(a.head_dim) : 1);
}

void attention_backward(const AttentionGradArgs<float>& a, bool tensor_cores, float* scratch, cudaStream_t stream) {
  const bool tc = tensor_cores && attention_tensor_cores_apply(a);
  SW_HEAD_DIMS(a.head_dim, backward, (a, tc, scratch, stream))
}

}  // namespace sw::cuda

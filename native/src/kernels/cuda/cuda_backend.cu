// The CUDA backend: every kernel of backend.h on GPU 0, in fp32 storage, on one stream per model.
// Matrix products go to cuBLAS (loaded at run time, cublas.h) in the model's MatmulPrecision;
// attention is fused (attention.cu); the rest are the kernels below. Reductions run in a fixed
// order (no atomics), so the same inputs give the same bits on every run, as on the CPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "../../sampler.h"
#include "attention.h"
#include "cublas.h"
#include "cuda.h"
#include "reduce.cuh"
#include "runtime.h"

#ifndef SW_CUDA_EMULATOR
#include <dlfcn.h>
#endif

#ifndef SW_CUDA_ARCHS
#define SW_CUDA_ARCHS "emulated"
#endif

namespace sw {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRowThreads = 512;     // one block per row of logits
constexpr int kSampleThreads = 1024;
constexpr int kColRows = 64;         // rows per partial column sum
constexpr int64_t kSumChunk = 1 << 16;

unsigned grid_for(int64_t n, int threads = kThreads) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + threads - 1) / threads, int64_t(1) << 20)));
}

#define SW_GRID_STRIDE(i, n) \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void k_probe(int* out) {
  if (threadIdx.x == 0) out[0] = 1;
}

// Runs k_probe and returns the launch's or the execution's error.
cudaError_t run_probe(int* flag) {
#ifdef SW_CUDA_EMULATOR
  ::sw::emu::launch("k_probe", dim3(1), dim3(32), 0, [&] { k_probe(flag); });
  return cudaSuccess;
#else
  k_probe<<<1, 32>>>(flag);
  const cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
#endif
}

__global__ void k_embedding_forward(float* __restrict__ out, const int32_t* __restrict__ tokens, const float* __restrict__ table, int dim) {
  const int64_t r = blockIdx.x;
  const float* src = table + static_cast<int64_t>(tokens[r]) * dim;
  float* dst = out + r * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dst[c] = src[c];
}

// dtable[tokens[r]] += dout[r]. The block of a token's first row adds all of that token's rows,
// in row order (as the CPU does), and the blocks of its later rows do nothing.
__global__ void k_embedding_backward(float* __restrict__ dtable, const int32_t* __restrict__ tokens, const float* __restrict__ dout, int rows,
                                     int dim) {
  SW_SHARED_ARRAY(int, seen, 1);
  const int r = blockIdx.x, tok = tokens[r];
  if (threadIdx.x == 0) seen[0] = 0;
  __syncthreads();
  for (int j = threadIdx.x; j < r; j += blockDim.x)
    if (tokens[j] == tok) seen[0] = 1;
  __syncthreads();
  if (seen[0]) return;  // every thread of the block leaves here
  float* d = dtable + static_cast<int64_t>(tok) * dim;
  for (int c0 = 0; c0 < dim; c0 += 4 * blockDim.x) {
    float acc[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int c = c0 + threadIdx.x + i * blockDim.x;
      acc[i] = c < dim ? d[c] : 0.0f;
    }
    for (int j = r; j < rows; j++) {
      if (tokens[j] != tok) continue;
      const float* g = dout + static_cast<int64_t>(j) * dim;
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const int c = c0 + threadIdx.x + i * blockDim.x;
        if (c < dim) acc[i] += g[c];
      }
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int c = c0 + threadIdx.x + i * blockDim.x;
      if (c < dim) d[c] = acc[i];
    }
  }
}

__global__ void k_rmsnorm_forward(float* __restrict__ out, float* __restrict__ rstd, const float* __restrict__ x, const float* __restrict__ w,
                                  int dim, double eps) {
  SW_SHARED_ARRAY(double, red, 32);
  const int64_t r = blockIdx.x;
  const float* xr = x + r * dim;
  float* yr = out + r * dim;
  double ss = 0;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) ss += static_cast<double>(xr[c]) * xr[c];
  ss = block_sum(ss, red);
  const float s = static_cast<float>(1.0 / sqrt(ss / dim + eps));
  if (rstd && threadIdx.x == 0) rstd[r] = s;
  // Hugging Face's order: normalise, then scale by the weight.
  for (int c = threadIdx.x; c < dim; c += blockDim.x) yr[c] = w[c] * (xr[c] * s);
}

__global__ void k_rmsnorm_backward_dx(float* __restrict__ dx, const float* __restrict__ dout, const float* __restrict__ x,
                                      const float* __restrict__ w, const float* __restrict__ rstd, int dim) {
  SW_SHARED_ARRAY(double, red, 32);
  const int64_t r = blockIdx.x;
  const float* xr = x + r * dim;
  const float* gr = dout + r * dim;
  float* dxr = dx + r * dim;
  double dot = 0;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dot += static_cast<double>(gr[c]) * w[c] * xr[c];
  dot = block_sum(dot, red);
  const float s = rstd[r];
  const float k = static_cast<float>(dot * s * s * s / dim);
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dxr[c] += s * (gr[c] * w[c]) - k * xr[c];
}

// partial[chunk, c] = sum over the chunk's rows of a[r, c] (times x[r, c] * rstd[r] when x is
// given: the RMSNorm weight's gradient). Block (32, 8), grid (column groups, row chunks).
__global__ void k_colsum_partial(float* __restrict__ partial, const float* __restrict__ a, int64_t lda, const float* __restrict__ x,
                                 const float* __restrict__ rstd, int rows, int cols) {
  SW_SHARED_ARRAY(float, part, 8 * 33);
  const int c = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
  const int r0 = chunk * kColRows, r1 = min(rows, r0 + kColRows);
  float acc = 0.0f;
  if (c < cols)
    for (int r = r0 + threadIdx.y; r < r1; r += 8) {
      float v = a[static_cast<int64_t>(r) * lda + c];
      if (x) v = v * x[static_cast<int64_t>(r) * cols + c] * rstd[r];
      acc += v;
    }
  part[threadIdx.y * 33 + threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float s = 0.0f;
    for (int y = 0; y < 8; y++) s += part[y * 33 + threadIdx.x];
    partial[static_cast<int64_t>(chunk) * cols + c] = s;
  }
}

__global__ void k_colsum_final(float* __restrict__ dst, const float* __restrict__ partial, int chunks, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.0f;
  for (int ch = 0; ch < chunks; ch++) s += partial[static_cast<int64_t>(ch) * cols + c];
  dst[c] += s;
}

__global__ void k_add_bias(float* __restrict__ x, int64_t ld, const float* __restrict__ bias, int64_t rows, int cols) {
  SW_GRID_STRIDE(i, rows * cols) {
    const int64_t r = i / cols;
    const int c = static_cast<int>(i % cols);
    x[r * ld + c] += bias[c];
  }
}

__global__ void k_rope(float* __restrict__ x, int64_t ld, const int32_t* __restrict__ pos, int64_t rows, int heads, int head_dim,
                       const float* __restrict__ cos_t, const float* __restrict__ sin_t, bool inverse) {
  const int half = head_dim / 2;
  SW_GRID_STRIDE(i, rows * heads * half) {
    const int64_t r = i / (static_cast<int64_t>(heads) * half);
    const int rem = static_cast<int>(i % (static_cast<int64_t>(heads) * half));
    const int h = rem / half, j = rem % half;
    float* v = x + r * ld + static_cast<int64_t>(h) * head_dim;
    const float c = cos_t[static_cast<int64_t>(pos[r]) * half + j], s = sin_t[static_cast<int64_t>(pos[r]) * half + j];
    const float a = v[j], b = v[j + half];
    if (!inverse) {
      v[j] = a * c - b * s;
      v[j + half] = b * c + a * s;
    } else {
      v[j] = a * c + b * s;
      v[j + half] = b * c - a * s;
    }
  }
}

__global__ void k_swiglu_forward(float* __restrict__ out, const float* __restrict__ gu, int64_t rows, int dim) {
  SW_GRID_STRIDE(i, rows * dim) {
    const int64_t r = i / dim;
    const int j = static_cast<int>(i % dim);
    const float g = gu[r * 2 * dim + j], u = gu[r * 2 * dim + dim + j];
    out[i] = g / (1.0f + expf(-g)) * u;
  }
}

__global__ void k_swiglu_backward(float* __restrict__ dgu, const float* __restrict__ dout, const float* __restrict__ gu, int64_t rows, int dim) {
  SW_GRID_STRIDE(i, rows * dim) {
    const int64_t r = i / dim;
    const int j = static_cast<int>(i % dim);
    const float g = gu[r * 2 * dim + j], u = gu[r * 2 * dim + dim + j], d = dout[i];
    const float sig = 1.0f / (1.0f + expf(-g));
    dgu[r * 2 * dim + dim + j] = d * (g * sig);
    dgu[r * 2 * dim + j] = d * u * sig * (1.0f + g * (1.0f - sig));
  }
}

__global__ void k_add(float* __restrict__ y, const float* __restrict__ x, int64_t n) {
  SW_GRID_STRIDE(i, n) y[i] += x[i];
}

__global__ void k_dropout(float* out, const float* x, int64_t n, double p, uint64_t seed, float inv) {
  SW_GRID_STRIDE(i, n) { out[i] = dropout_uniform(seed, static_cast<uint64_t>(i)) >= p ? x[i] * inv : 0.0f; }
}

__global__ void k_cache_store(float* __restrict__ k, float* __restrict__ v, const float* __restrict__ src, int64_t ld, int64_t k_off,
                              int64_t v_off, int width, const int32_t* __restrict__ seq, const int32_t* __restrict__ pos, int64_t seq_stride) {
  const int64_t r = blockIdx.x;
  const int64_t at = seq[r] * seq_stride + static_cast<int64_t>(pos[r]) * width;
  for (int c = threadIdx.x; c < width; c += blockDim.x) {
    k[at + c] = src[r * ld + k_off + c];
    v[at + c] = src[r * ld + v_off + c];
  }
}

// Whether the increasing ids a[0, n) hold x.
__device__ __forceinline__ bool sorted_holds(const int32_t* a, int n, int x) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (a[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && a[lo] == x;
}

// Soft tokens (Backend::embedding_mix_*). out[r] = sum_k weights[k] * table[ids[k]] over the row's
// entries in order (so a one-hot row is its token exactly); a row without entries is left alone.
__global__ void k_embedding_mix_forward(float* __restrict__ out, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,
                                        const float* __restrict__ weights, const float* __restrict__ table, int dim) {
  const int64_t r = blockIdx.x;
  const int32_t k0 = offsets[r], k1 = offsets[r + 1];
  if (k0 == k1) return;
  float* dst = out + r * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    float acc = 0.0f;
    for (int32_t k = k0; k < k1; k++) acc += weights[k] * table[static_cast<int64_t>(ids[k]) * dim + c];
    dst[c] = acc;
  }
}

// dtable[id] += weights[k] * dout[row of k] for every entry k naming id: one block per distinct id,
// adding its entries in entry order (the CPU's order). groups[g0, g1) lists a group's entries.
__global__ void k_embedding_mix_table(float* __restrict__ dtable, const int32_t* __restrict__ group_start, const int32_t* __restrict__ groups,
                                      const int32_t* __restrict__ entry_row, const int32_t* __restrict__ ids, const float* __restrict__ weights,
                                      const float* __restrict__ dout, int dim) {
  const int32_t g0 = group_start[blockIdx.x], g1 = group_start[blockIdx.x + 1];
  float* d = dtable + static_cast<int64_t>(ids[groups[g0]]) * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    float acc = d[c];
    for (int32_t j = g0; j < g1; j++) {
      const int32_t k = groups[j];
      acc += weights[k] * dout[static_cast<int64_t>(entry_row[k]) * dim + c];
    }
    d[c] = acc;
  }
}

// dweights[k] = <dout[row of k], table[ids[k]]>, one block per entry (a fixed-order reduction).
__global__ void k_embedding_mix_weights(float* __restrict__ dweights, const int32_t* __restrict__ entry_row, const int32_t* __restrict__ ids,
                                        const float* __restrict__ table, const float* __restrict__ dout, int dim) {
  SW_SHARED_ARRAY(double, red, 32);
  const int64_t k = blockIdx.x;
  const float* t = table + static_cast<int64_t>(ids[k]) * dim;
  const float* g = dout + static_cast<int64_t>(entry_row[k]) * dim;
  double acc = 0;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) acc += static_cast<double>(g[c]) * t[c];
  acc = block_sum(acc, red);
  if (threadIdx.x == 0) dweights[k] = static_cast<float>(acc);
}

// The Gumbel head (see Backend::gumbel_loss), one block per soft row: lp over the row's support S,
// the mean Gumbel log-density of its recorded noise, and with grad the logits' gradient (0 off S),
// staged in `staged` (one float per entry) while the row's logits are still being read.
__global__ void k_gumbel_loss(float* __restrict__ logits, const int32_t* __restrict__ offsets, const int32_t* __restrict__ ids,
                              const float* __restrict__ noised, const float* __restrict__ weights, double inv_t, float* __restrict__ logdens,
                              double* __restrict__ row_loss, float* __restrict__ staged, int vocab, bool grad) {
  SW_SHARED_ARRAY(float, redf, 32);
  SW_SHARED_ARRAY(double, redd, 32);
  const int64_t r = blockIdx.x;
  float* z = logits + r * vocab;
  const int32_t k0 = offsets[r], n = offsets[r + 1] - k0;
  const int32_t* S = ids + k0;
  const float* q = noised + k0;
  float mz = -INFINITY;
  for (int k = threadIdx.x; k < n; k += blockDim.x) mz = fmaxf(mz, z[S[k]]);
  // The largest scaled logit (the temperature is positive, so the largest logit's).
  const double m = static_cast<double>(block_max(mz, redf)) * inv_t;
  double sum = 0;
  for (int k = threadIdx.x; k < n; k += blockDim.x) sum += exp(static_cast<double>(z[S[k]]) * inv_t - m);
  const double lse = m + log(block_sum(sum, redd));
  double dens = 0, sum_a = 0;
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const double lp = static_cast<double>(z[S[k]]) * inv_t - lse;
    const double g = q[k] - lp;
    dens += -g - exp(-g);
    sum_a += (1.0 - exp(lp - q[k])) / n;
  }
  dens = block_sum(dens, redd) / n;
  sum_a = block_sum(sum_a, redd);
  const double w = weights ? weights[r] : 1.0;
  if (threadIdx.x == 0) {
    logdens[r] = static_cast<float>(dens);
    row_loss[r] = -w * dens;
  }
  if (!grad) return;
  // d dens / d u_j = a_j - p_j sum_i a_i with a_i = (1 - exp(-g_i)) / n; du/dz = 1 / temperature.
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const double lp = static_cast<double>(z[S[k]]) * inv_t - lse;
    const double a = (1.0 - exp(lp - q[k])) / n;
    staged[k0 + k] = static_cast<float>(-w * inv_t * (a - exp(lp) * sum_a));
  }
  __syncthreads();
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) z[c] = 0.0f;
  __syncthreads();
  for (int k = threadIdx.x; k < n; k += blockDim.x) z[S[k]] = staged[k0 + k];
}

// The policy-gradient head (see Backend::token_loss), one block per row of logits; with inv_t 1
// and no entropy it is the cross-entropy head. row_loss[r] = -w logp - ew H. A masked row
// (TokenMasks) reduces over its allowed tokens; its gradient, written in place, is 0 elsewhere
// (each thread tells its own columns apart by a binary search in the sorted mask).
__global__ void k_token_loss(float* __restrict__ logits, const int32_t* __restrict__ targets, const float* __restrict__ weights,
                             const float* __restrict__ entropy_weights, double inv_t, const int32_t* __restrict__ mask_rows,
                             const int32_t* __restrict__ mask_tokens, float* __restrict__ logp, float* __restrict__ entropy,
                             double* __restrict__ row_loss, int vocab, bool grad) {
  SW_SHARED_ARRAY(float, redf, 32);
  SW_SHARED_ARRAY(double, redd, 32);
  const int64_t r = blockIdx.x;
  float* z = logits + r * vocab;
  const int t = targets[r];
  // No target, or a token its grammar forced (log-prob 0 and no gradient, exactly, as the sampler
  // reports it): nothing to learn.
  if (t < 0 || (mask_rows && mask_rows[2 * r + 1] == 1)) {
    if (threadIdx.x == 0) {
      logp[r] = 0.0f;
      if (entropy) entropy[r] = 0.0f;
      row_loss[r] = 0.0;
    }
    if (grad)
      for (int c = threadIdx.x; c < vocab; c += blockDim.x) z[c] = 0.0f;
    return;
  }
  const float zt = z[t];
  const double w = weights ? weights[r] : 1.0;
  const double ew = entropy_weights ? entropy_weights[r] : 0.0;
  const float it = static_cast<float>(inv_t);
  // The row's candidates: allowed[0, n) (increasing), or the whole vocabulary.
  const bool masked = mask_rows && mask_rows[2 * r + 1] > 0;
  const int32_t* allowed = masked ? mask_tokens + mask_rows[2 * r] : nullptr;
  const int n = masked ? mask_rows[2 * r + 1] : vocab;
  float mz = -INFINITY;
  for (int k = threadIdx.x; k < n; k += blockDim.x) mz = fmaxf(mz, z[masked ? allowed[k] : k]);
  const float m = block_max(mz, redf) * it;
  // The normalizer and sum(exp(u - m) u) in one pass: H = lse - sum_i p_i u_i.
  double sum = 0, sum_u = 0;
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const float u = z[masked ? allowed[k] : k] * it;
    const float ex = expf(u - m);
    sum += ex;
    sum_u += static_cast<double>(ex) * u;
  }
  sum = block_sum(sum, redd);
  sum_u = block_sum(sum_u, redd);
  const double lse = m + log(sum);
  const double lp = static_cast<double>(zt) * inv_t - lse;
  const double h = lse - sum_u / sum;
  if (threadIdx.x == 0) {
    logp[r] = static_cast<float>(lp);
    if (entropy) entropy[r] = static_cast<float>(h);
    row_loss[r] = -w * lp - ew * h;
  }
  if (grad) {
    // d(-w logp_t)/du_i = w (p_i - [i == t]); d(-ew H)/du_i = ew p_i (log p_i + H); du/dz = 1 / temperature.
    const float lf = static_cast<float>(lse), hf = static_cast<float>(h), wf = static_cast<float>(w), ewf = static_cast<float>(ew);
    for (int c = threadIdx.x; c < vocab; c += blockDim.x) {
      if (masked && !sorted_holds(allowed, n, c)) {
        z[c] = 0.0f;
        continue;
      }
      const float u = z[c] * it;
      const float p = expf(u - lf);
      z[c] = it * (wf * p + ewf * p * (u - lf + hf)) - (c == t ? it * wf : 0.0f);
    }
  }
}

// out[0] = sum of in[0..n) (one block, fixed order).
__global__ void k_sum(double* __restrict__ out, const double* __restrict__ in, int64_t n) {
  SW_SHARED_ARRAY(double, red, 32);
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += in[i];
  s = block_sum(s, red);
  if (threadIdx.x == 0) out[0] = s;
}

__global__ void k_sum_squares(double* __restrict__ partial, const float* __restrict__ x, int64_t n) {
  SW_SHARED_ARRAY(double, red, 32);
  const int64_t lo = static_cast<int64_t>(blockIdx.x) * kSumChunk, hi = min(n, lo + kSumChunk);
  double s = 0;
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += static_cast<double>(x[i]) * x[i];
  s = block_sum(s, red);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// fp32 to bf16 bits, rounding to nearest even (NaN stays NaN).
__device__ __forceinline__ uint16_t to_bf16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// AdamW on n parameters; p16, when given, gets the new parameters in bf16 too.
__global__ void k_adamw(float* __restrict__ p, uint16_t* __restrict__ p16, const float* __restrict__ g, float* __restrict__ m,
                        float* __restrict__ v, int64_t n, float step_size, float sqrt_bc2, float decay, float b1, float b2, float eps, float gs) {
  SW_GRID_STRIDE(i, n) {
    const float gi = g[i] * gs;
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float pi = p[i] * decay - step_size * mi / (sqrtf(vi) / sqrt_bc2 + eps);
    p[i] = pi;
    if (p16) p16[i] = to_bf16(pi);
  }
}

// dst[r * cols + c] = bf16(src[r * ld + c]): an operand made compact and bf16 for cuBLAS; four
// columns a thread where rows are 16-byte aligned.
__global__ void k_operand_to_bf16(uint16_t* __restrict__ dst, const float* __restrict__ src, int64_t rows, int cols, int64_t ld, bool vec4) {
  const int step = vec4 ? 4 : 1;
  const int per_row = cols / step;
  SW_GRID_STRIDE(i, rows * per_row) {
    const int64_t r = i / per_row;
    const int c = static_cast<int>(i % per_row) * step;
    const float* s = src + r * ld + c;
    uint16_t* d = dst + r * cols + c;
    if (vec4) {
      const float4 x = *reinterpret_cast<const float4*>(s);
      d[0] = to_bf16(x.x);
      d[1] = to_bf16(x.y);
      d[2] = to_bf16(x.z);
      d[3] = to_bf16(x.w);
    } else {
      d[0] = to_bf16(s[0]);
    }
  }
}

// One block per row: greedy (argmax, first index of the maximum) or a draw from softmax(z / T)
// by inverse CDF in index order at uniforms[r] (as sample_token without top-k / top-p). Each
// thread sums a contiguous segment, so the cumulative mass is found in index order.
__global__ void k_sample(const float* __restrict__ logits, int vocab, double temperature, bool greedy, const double* __restrict__ uniforms,
                         int32_t* __restrict__ tokens, double* __restrict__ logprobs) {
  SW_SHARED_ARRAY(double, seg, kSampleThreads + 1);
  SW_SHARED_ARRAY(double, best_v, 32);
  SW_SHARED_ARRAY(int, best_i, 32);
  const int64_t r = blockIdx.x;
  const float* z = logits + r * vocab;
  const double temp = greedy ? 1.0 : temperature;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, threads = blockDim.x;
  double bv = -INFINITY;
  int bi = vocab;
  for (int c = tid; c < vocab; c += threads) {
    const double u = z[c] / temp;
    if (u > bv) {
      bv = u;
      bi = c;
    }
  }
  warp_argmax(bv, bi);
  if (lane == 0) {
    best_v[warp] = bv;
    best_i[warp] = bi;
  }
  __syncthreads();
  bv = lane < threads / 32 ? best_v[lane] : -INFINITY;
  bi = lane < threads / 32 ? best_i[lane] : vocab;
  warp_argmax(bv, bi);
  if (bi >= vocab) bi = 0;  // no finite logit: the CPU sampler's answer
  const double m = bv;
  const int seg_len = (vocab + threads - 1) / threads;
  const int lo = min(vocab, tid * seg_len), hi = min(vocab, lo + seg_len);
  double s = 0;
  for (int c = lo; c < hi; c++) s += exp(z[c] / temp - m);
  seg[tid] = s;
  __syncthreads();
  if (tid == 0) {
    double acc = 0;
    for (int i = 0; i < threads; i++) {
      const double x = seg[i];
      seg[i] = acc;
      acc += x;
    }
    seg[threads] = acc;
    tokens[r] = bi;
    logprobs[r] = z[bi] / temp - (m + log(acc));
  }
  __syncthreads();
  if (greedy) return;
  const double total = seg[threads], lse = m + log(total);
  const double target = uniforms[r] * total;
  if (lo < hi && seg[tid] <= target && target < seg[tid + 1]) {
    double acc = seg[tid];
    int token = -1, last = lo;
    for (int c = lo; c < hi; c++) {
      const double p = exp(z[c] / temp - m);
      if (p > 0) last = c;
      acc += p;
      if (target < acc) {
        token = c;
        break;
      }
    }
    if (token < 0) token = last;  // rounding put the target past this segment's own sum
    tokens[r] = token;
    logprobs[r] = z[token] / temp - lse;
  }
}

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform values in [-scale, scale) from a hash of (seed, index): benchmark operands.
__global__ void k_fill_random(float* __restrict__ x, int64_t n, uint64_t seed, float scale) {
  SW_GRID_STRIDE(i, n) {
    const uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i));
    x[i] = (static_cast<float>(h >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;
  }
}


// ---- profiling: per-category time, each kernel waited for (SOCIALWORLD timing runs only) ----

std::mutex g_profile_lock;
bool g_profiling = false;
std::map<std::string, std::pair<int64_t, double>> g_profile;

class Scope {
 public:
  Scope(const char* what, cudaStream_t s) : what_(what), stream_(s), on_(g_profiling) {
    if (on_) {
      SW_CUDA_CHECK(cudaStreamSynchronize(stream_));
      t0_ = std::chrono::steady_clock::now();
    }
  }
  ~Scope() {
    if (!on_) return;
    if (cudaStreamSynchronize(stream_) != cudaSuccess) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::lock_guard<std::mutex> lock(g_profile_lock);
    auto& e = g_profile[what_];
    e.first++;
    e.second += s;
  }

 private:
  const char* what_;
  cudaStream_t stream_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

std::string gib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1u << 30));
  return buf;
}

}  // namespace

// A grow-only device buffer for a kernel's temporaries.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > bytes_) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = nullptr;
      bytes_ = 0;
      const cudaError_t e = cudaMalloc(&ptr_, bytes);
      if (e != cudaSuccess) throw std::runtime_error("not enough GPU memory for a " + std::to_string(bytes) + "-byte scratch buffer");
      bytes_ = bytes;
    }
    return ptr_;
  }
  ~Scratch() {
    if (ptr_) cudaFree(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class CudaBackend final : public Backend<float> {
 public:
  explicit CudaBackend(MatmulPrecision precision) : precision_(precision) {
    const CudaStatus& st = cuda_status();
    if (!st.available) throw std::runtime_error("the cuda device is not available: " + st.reason);
    std::string why;
    blas_ = load_cublas(&why);
    SW_CUDA_CHECK(cudaSetDevice(0));
    SW_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const int s = blas_->create(&handle_);
    if (s != 0) throw std::runtime_error("cublasCreate failed: " + cublas_status_name(s) + " (" + blas_->path + ")");
    blas_check(blas_->set_stream(handle_, stream_), "cublasSetStream");
    blas_check(blas_->set_math_mode(handle_, kDefaultMath), "cublasSetMathMode");
  }

  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    for (Staging& s : staging_)
      if (s.host) {
        cudaEventDestroy(s.done);
        cudaFreeHost(s.host);
      }
    if (handle_) blas_->destroy(handle_);
    cudaStreamDestroy(stream_);
  }

  const char* name() const override { return "cuda"; }
  int threads() const override { return 1; }
  bool host_memory() const override { return false; }

  void check_fits(size_t bytes, const std::string& what) override {
    size_t free_b = 0, total_b = 0;
    SW_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    // Headroom for cuBLAS's workspaces and the kernels' scratch buffers.
    const size_t headroom = size_t(64) << 20;
    if (bytes + headroom > free_b)
      throw std::runtime_error("not enough GPU memory for " + what + ": it needs " + gib(bytes) + " (" + std::to_string(bytes) + " bytes), and " +
                               gib(free_b) + " of the GPU's " + gib(total_b) + " are free");
  }

  std::shared_ptr<float> alloc(size_t n) override { return std::static_pointer_cast<float>(alloc_bytes(n * sizeof(float))); }

  std::shared_ptr<void> alloc_bytes(size_t bytes) override {
    void* p = nullptr;
    const size_t n = std::max<size_t>(bytes, 4);
    if (cudaMalloc(&p, n) != cudaSuccess) {
      cudaGetLastError();  // clear it: an allocation failure leaves the context usable
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      throw std::runtime_error("out of GPU memory: an allocation of " + gib(n) + " (" + std::to_string(n) + " bytes) failed with " + gib(free_b) +
                               " of " + gib(total_b) + " free");
    }
    SW_CUDA_CHECK(cudaMemsetAsync(p, 0, n, stream_));
    // cudaFree waits for the device, so no kernel still uses the memory; errors at process exit
    // (the runtime already unloaded) are ignored.
    return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
  }

  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    Scope scope = op("copies");
    touch_params(dst);
    if (bytes > kStagingBytes) {
      // A copy from pageable memory waits for the stream, then for the copy itself.
      SW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
      SW_CUDA_CHECK(cudaStreamSynchronize(stream_));
      return;
    }
    // Small inputs (a step's tokens and positions) go through pinned buffers, so the copy joins
    // the stream without waiting for the kernels before it: decoding issues a step's kernels
    // while the previous ones run. A slot is reused once its last copy has finished.
    Staging& s = staging_[next_staging_];
    next_staging_ = (next_staging_ + 1) % staging_.size();
    if (!s.host) {
      SW_CUDA_CHECK(cudaMallocHost(&s.host, kStagingBytes));
      SW_CUDA_CHECK(cudaEventCreate(&s.done));
    } else {
      SW_CUDA_CHECK(cudaEventSynchronize(s.done));
    }
    std::memcpy(s.host, src, bytes);
    SW_CUDA_CHECK(cudaMemcpyAsync(dst, s.host, bytes, cudaMemcpyHostToDevice, stream_));
    SW_CUDA_CHECK(cudaEventRecord(s.done, stream_));
  }

  void download(void* dst, const void* src, size_t bytes) override {
    Scope scope = op("copies");
    if (bytes) SW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    SW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void synchronize() override { SW_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  // A 1 GiB block of fp32 logits: large products for the LM head at a 150k vocabulary.
  size_t logit_budget() const override { return size_t(1) << 28; }

  void zero(float* x, size_t n) override {
    generation_++;
    touch_params(x);
    if (n) SW_CUDA_CHECK(cudaMemsetAsync(x, 0, n * sizeof(float), stream_));
  }

  void copy(float* dst, const float* src, size_t n) override {
    generation_++;
    touch_params(dst);
    if (n) SW_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  }

  void set_parameters(const float* params, size_t n) override {
    if (precision_ != MatmulPrecision::bf16 || n == 0) return;
    check_fits(2 * n, "the parameters' bf16 copy");
    params16_ = std::static_pointer_cast<uint16_t>(alloc_bytes(2 * n));
    params_ = params;
    params_n_ = n;
    params16_stale_ = true;
  }

  void gemm(bool ta, bool tb, int M, int N, int K, float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
            int64_t ldc) override {
    if (M == 0 || N == 0) return;
    Scope scope("matrix products", stream_);
    if (precision_ != MatmulPrecision::bf16 || K == 0) {
      gemm_raw(ta, tb, M, N, K, alpha, A, kR32F, lda, B, kR32F, ldb, beta, C, ldc, compute_type(precision_));
      return;
    }
    // bf16 operands (cuBLAS's bf16 kernels run 1.5-3x faster than its bf16 mode on fp32
    // operands): the parameters' bf16 copy, or the activation converted once.
    int64_t lda16 = lda, ldb16 = ldb;
    const uint16_t* a16 = bf16_operand(0, A, ta ? K : M, ta ? M : K, lda, &lda16);
    const uint16_t* b16 = bf16_operand(1, B, tb ? N : K, tb ? K : N, ldb, &ldb16);
    gemm_raw(ta, tb, M, N, K, alpha, a16, kR16BF, lda16, b16, kR16BF, ldb16, beta, C, ldc, kCompute32F);
    // A converted operand that overlaps what the product wrote is stale now.
    for (Converted& c : converted_)
      if (c.src && overlaps(C, static_cast<size_t>(M - 1) * ldc + N, c.src, static_cast<size_t>(c.rows - 1) * c.ld + c.cols)) c.src = nullptr;
  }

  void embedding_forward(float* out, const int32_t* tokens, const float* table, int rows, int dim) override {
    if (rows == 0) return;
    Scope scope = op("embeddings");
    SW_LAUNCH(k_embedding_forward, rows, 128, 0, stream_, out, tokens, table, dim);
  }

  void embedding_backward(float* dtable, const int32_t* tokens, const float* dout, int rows, int dim, int) override {
    if (rows == 0) return;
    Scope scope = op("embeddings");
    SW_LAUNCH(k_embedding_backward, rows, kThreads, 0, stream_, dtable, tokens, dout, rows, dim);
  }

  void embedding_mix_forward(float* out, SoftEntries entries, const float* weights, const float* table, int rows, int dim) override {
    if (rows == 0) return;
    Scope scope = op("embeddings");
    SW_LAUNCH(k_embedding_mix_forward, rows, 128, 0, stream_, out, entries.offsets, entries.ids, weights, table, dim);
  }

  // The entries are grouped on the host, from the host's copy of offsets and ids, so that each
  // id's gradient row is summed by one block in the CPU's order, with no atomics.
  void embedding_mix_backward(float* dtable, float* dweights, SoftEntries entries, const float* weights, const float* table, const float* dout,
                              int rows, int dim) override {
    if (rows == 0 || (!dtable && !dweights)) return;
    Scope scope = op("embeddings");
    const int32_t* off = entries.host_offsets;
    const int32_t* id = entries.host_ids;
    const int32_t* ids = entries.ids;
    const int32_t E = off[rows];
    if (E == 0) return;
    // plan = [entry_row (E) | groups (E) | group_start (G + 1)]
    std::vector<int32_t> plan(2 * static_cast<size_t>(E));
    for (int r = 0; r < rows; r++)
      for (int32_t k = off[r]; k < off[r + 1]; k++) plan[k] = r;
    int32_t* groups = plan.data() + E;
    for (int32_t k = 0; k < E; k++) groups[k] = k;
    std::stable_sort(groups, groups + E, [&](int32_t a, int32_t b) { return id[a] < id[b]; });
    std::vector<int32_t> starts;
    for (int32_t j = 0; j < E; j++)
      if (j == 0 || id[groups[j]] != id[groups[j - 1]]) starts.push_back(j);
    const int G = static_cast<int>(starts.size());
    starts.push_back(E);
    plan.insert(plan.end(), starts.begin(), starts.end());
    int32_t* d_plan = static_cast<int32_t*>(soft_scratch_.get(plan.size() * sizeof(int32_t)));
    upload(d_plan, plan.data(), plan.size() * sizeof(int32_t));
    if (dtable) SW_LAUNCH(k_embedding_mix_table, G, 128, 0, stream_, dtable, d_plan + 2 * E, d_plan + E, d_plan, ids, weights, dout, dim);
    if (dweights) SW_LAUNCH(k_embedding_mix_weights, E, kThreads, 0, stream_, dweights, d_plan, ids, table, dout, dim);
  }

  double gumbel_loss(float* logits, SoftEntries entries, const float* noised, const float* weights, double temperature, float* logdens, int rows,
                     int vocab, bool grad) override {
    if (rows == 0) return 0.0;
    Scope scope = op("loss head");
    const int32_t E = entries.host_offsets[rows];
    double* row_loss = static_cast<double*>(loss_scratch_.get(sizeof(double) * (rows + 1)));
    float* staged = static_cast<float*>(gumbel_scratch_.get(sizeof(float) * std::max<int32_t>(E, 1)));
    SW_LAUNCH(k_gumbel_loss, rows, kRowThreads, 0, stream_, logits, entries.offsets, entries.ids, noised, weights, 1.0 / temperature, logdens, row_loss, staged,
              vocab, grad);
    return sum_on_device(row_loss, rows);
  }

  void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, int rows, int dim, double eps) override {
    if (rows == 0) return;
    Scope scope = op("norms");
    SW_LAUNCH(k_rmsnorm_forward, rows, kThreads, 0, stream_, out, rstd, x, w, dim, eps);
  }

  void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w, const float* rstd, int rows, int dim) override {
    if (rows == 0) return;
    Scope scope = op("norms");
    SW_LAUNCH(k_rmsnorm_backward_dx, rows, kThreads, 0, stream_, dx, dout, x, w, rstd, dim);
    if (dw) column_sums(dw, dout, dim, x, rstd, rows, dim);
  }

  void add_bias(float* x, int64_t ld, const float* bias, int rows, int cols) override {
    const int64_t n = static_cast<int64_t>(rows) * cols;
    if (n == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_add_bias, grid_for(n), kThreads, 0, stream_, x, ld, bias, static_cast<int64_t>(rows), cols);
  }

  void bias_backward(float* dbias, const float* dout, int64_t ld, int rows, int cols) override {
    if (rows == 0) return;
    Scope scope = op("elementwise");
    column_sums(dbias, dout, ld, nullptr, nullptr, rows, cols);
  }

  void rope(float* x, int64_t ld, const int32_t* pos, int rows, int heads, int head_dim, const float* cos, const float* sin, bool inverse) override {
    const int64_t n = static_cast<int64_t>(rows) * heads * (head_dim / 2);
    if (n == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_rope, grid_for(n), kThreads, 0, stream_, x, ld, pos, static_cast<int64_t>(rows), heads, head_dim, cos, sin, inverse);
  }

  void attention_forward(const AttentionArgs<float>& a) override {
    if (a.rows == 0) return;
    Scope scope = op("attention forward");
    if (a.dense_seq_len > 0)
      attention_forward_dense(a, tensor_core_attention(), stream_);
    else
      attention_forward_rows(a, stream_);
  }

  void attention_backward(const AttentionGradArgs<float>& a) override {
    Scope scope = op("attention backward");
    const bool tc = tensor_core_attention();
    float* scratch = static_cast<float*>(attention_scratch_.get(sizeof(float) * attention_backward_scratch_floats(a, tc)));
    cuda::attention_backward(a, tc, scratch, stream_);
  }

  void swiglu_forward(float* out, const float* gu, int rows, int dim) override {
    const int64_t n = static_cast<int64_t>(rows) * dim;
    if (n == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_swiglu_forward, grid_for(n), kThreads, 0, stream_, out, gu, static_cast<int64_t>(rows), dim);
  }

  void swiglu_backward(float* dgu, const float* dout, const float* gu, int rows, int dim) override {
    const int64_t n = static_cast<int64_t>(rows) * dim;
    if (n == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_swiglu_backward, grid_for(n), kThreads, 0, stream_, dgu, dout, gu, static_cast<int64_t>(rows), dim);
  }

  void add(float* y, const float* x, size_t n) override {
    if (n == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_add, grid_for(static_cast<int64_t>(n)), kThreads, 0, stream_, y, x, static_cast<int64_t>(n));
  }

  void dropout(float* out, const float* x, size_t n, double p, uint64_t seed) override {
    if (n == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_dropout, grid_for(static_cast<int64_t>(n)), kThreads, 0, stream_, out, x, static_cast<int64_t>(n), p, seed,
              static_cast<float>(1.0 / (1.0 - p)));
  }

  void cache_store(float* k, float* v, const float* src, int64_t ld, int64_t k_off, int64_t v_off, int width, const int32_t* seq, const int32_t* pos,
                   int rows, int64_t seq_stride) override {
    if (rows == 0) return;
    Scope scope = op("elementwise");
    SW_LAUNCH(k_cache_store, rows, 128, 0, stream_, k, v, src, ld, k_off, v_off, width, seq, pos, seq_stride);
  }

  double cross_entropy(float* logits, const int32_t* targets, const float* weights, float* logp, int rows, int vocab, bool grad) override {
    if (rows == 0) return 0.0;
    return token_loss(logits, targets, weights, nullptr, 1.0, TokenMasks{}, logp, nullptr, rows, vocab, grad);
  }

  double token_loss(float* logits, const int32_t* targets, const float* weights, const float* entropy_weights, double temperature, TokenMasks masks,
                    float* logp, float* entropy, int rows, int vocab, bool grad) override {
    if (rows == 0) return 0.0;
    Scope scope = op("loss head");
    double* row_loss = static_cast<double*>(loss_scratch_.get(sizeof(double) * (rows + 1)));
    SW_LAUNCH(k_token_loss, rows, kRowThreads, 0, stream_, logits, targets, weights, entropy_weights, 1.0 / temperature, masks.rows, masks.tokens, logp,
              entropy, row_loss, vocab, grad);
    return sum_on_device(row_loss, rows);
  }

  void sample(const float* logits, int rows, int vocab, const SamplingParams& params, const Candidates* allowed, const double* uniforms,
              Sample* samples) override {
    if (rows == 0) return;
    Scope scope = op("sampling");
    const bool greedy = params.temperature <= 0;
    const bool filtered = !greedy && ((params.top_k > 0 && params.top_k < vocab) || params.top_p < 1.0);
    std::vector<std::pair<double, int32_t>>& work = host_sample_work_;
    if (filtered) {
      // top-k / top-p sort candidates: the host sampler does it on the downloaded rows.
      host_logits_.resize(static_cast<size_t>(rows) * vocab);
      download(host_logits_.data(), logits, host_logits_.size() * sizeof(float));
      for (int r = 0; r < rows; r++) samples[r] = sample_token(host_logits_.data() + static_cast<size_t>(r) * vocab, vocab, allowed[r], params, uniforms[r], work);
      return;
    }
    int masked = 0;
    for (int r = 0; r < rows; r++) masked += allowed[r].tokens != nullptr;
    if (masked < rows) {
      // [uniforms | logprobs] as doubles, then tokens.
      char* buf = static_cast<char*>(sample_scratch_.get(static_cast<size_t>(rows) * (2 * sizeof(double) + sizeof(int32_t))));
      double* d_uniforms = reinterpret_cast<double*>(buf);
      double* d_logprobs = d_uniforms + rows;
      int32_t* d_tokens = reinterpret_cast<int32_t*>(d_logprobs + rows);
      host_tokens_.resize(rows);
      host_logprobs_.resize(rows);
      if (!greedy) SW_CUDA_CHECK(cudaMemcpyAsync(d_uniforms, uniforms, sizeof(double) * rows, cudaMemcpyHostToDevice, stream_));
      SW_LAUNCH(k_sample, rows, kSampleThreads, 0, stream_, logits, vocab, params.temperature, greedy, d_uniforms, d_tokens, d_logprobs);
      SW_CUDA_CHECK(cudaMemcpyAsync(host_tokens_.data(), d_tokens, sizeof(int32_t) * rows, cudaMemcpyDeviceToHost, stream_));
      SW_CUDA_CHECK(cudaMemcpyAsync(host_logprobs_.data(), d_logprobs, sizeof(double) * rows, cudaMemcpyDeviceToHost, stream_));
      SW_CUDA_CHECK(cudaStreamSynchronize(stream_));
      for (int r = 0; r < rows; r++) samples[r] = {host_tokens_[r], host_logprobs_[r], host_tokens_[r]};
    }
    if (masked == 0) return;
    // A grammar's row: its mask is a list of allowed tokens (and their next states) that the
    // token automaton produces on the host for this step only, and it may be short or nearly the
    // whole vocabulary. Rather than upload it and keep a second, masked sampling kernel in step
    // with the CPU's, the row's logits come down (vocab floats, small beside the step's forward
    // pass) and the CPU sampler every backend shares draws from them: the same tokens and
    // log-probs as on the CPU, from the same code.
    host_logits_.resize(vocab);
    for (int r = 0; r < rows; r++) {
      if (allowed[r].tokens == nullptr) continue;
      download(host_logits_.data(), logits + static_cast<size_t>(r) * vocab, sizeof(float) * vocab);
      samples[r] = sample_token(host_logits_.data(), vocab, allowed[r], params, uniforms[r], work);
    }
  }

  double sum_squares(const float* x, size_t n) override {
    if (n == 0) return 0.0;
    Scope scope = op("reductions");
    const int64_t blocks = (static_cast<int64_t>(n) + kSumChunk - 1) / kSumChunk;
    double* partial = static_cast<double*>(reduce_scratch_.get(sizeof(double) * (blocks + 1)));
    SW_LAUNCH(k_sum_squares, static_cast<unsigned>(blocks), kThreads, 0, stream_, partial, x, static_cast<int64_t>(n));
    return sum_on_device(partial, blocks);
  }

  void adamw(float* params, const float* grads, float* m, float* v, size_t n, const AdamWArgs& a) override {
    if (n == 0) return;
    Scope scope = op("AdamW");
    // The constants as the CPU backend computes them.
    const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
    const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
    // The parameters' bf16 copy follows in the same pass (unless it is stale: then it is rebuilt whole).
    uint16_t* p16 = params16_ && !params16_stale_ && in_params(params) ? params16_.get() + (params - params_) : nullptr;
    SW_LAUNCH(k_adamw, grid_for(static_cast<int64_t>(n)), kThreads, 0, stream_, params, p16, grads, m, v, static_cast<int64_t>(n),
              static_cast<float>(a.lr / bc1), static_cast<float>(std::sqrt(bc2)), static_cast<float>(1.0 - a.lr * a.weight_decay),
              static_cast<float>(a.beta1), static_cast<float>(a.beta2), static_cast<float>(a.eps), static_cast<float>(a.grad_scale));
  }

  // Seconds per product in `mode` (see cuda_gemm_seconds).
  double time_gemm(const std::string& mode, bool ta, bool tb, int M, int N, int K, int reps) {
    const bool bf16_operands = mode == "bf16-operands";
    const MatmulPrecision p = bf16_operands ? MatmulPrecision::fp32 : parse_precision(mode);
    const size_t na = static_cast<size_t>(M) * K, nb = static_cast<size_t>(K) * N, nc = static_cast<size_t>(M) * N;
    check_fits(sizeof(float) * (na + nb + nc) + (bf16_operands ? 2 * (na + nb) : 0), "the product's operands");
    auto A = alloc(na), B = alloc(nb), C = alloc(nc);
    SW_LAUNCH(k_fill_random, grid_for(static_cast<int64_t>(na)), kThreads, 0, stream_, A.get(), static_cast<int64_t>(na), uint64_t(1), 1.0f);
    SW_LAUNCH(k_fill_random, grid_for(static_cast<int64_t>(nb)), kThreads, 0, stream_, B.get(), static_cast<int64_t>(nb), uint64_t(2), 1.0f);
    std::shared_ptr<void> A16, B16;
    const void* a = A.get();
    const void* b = B.get();
    int type = kR32F;
    if (bf16_operands) {
      A16 = alloc_bytes(2 * na);
      B16 = alloc_bytes(2 * nb);
      SW_LAUNCH(k_operand_to_bf16, grid_for(static_cast<int64_t>(na)), kThreads, 0, stream_, static_cast<uint16_t*>(A16.get()), A.get(), static_cast<int64_t>(na), 1, int64_t(1), false);
      SW_LAUNCH(k_operand_to_bf16, grid_for(static_cast<int64_t>(nb)), kThreads, 0, stream_, static_cast<uint16_t*>(B16.get()), B.get(), static_cast<int64_t>(nb), 1, int64_t(1), false);
      a = A16.get();
      b = B16.get();
      type = kR16BF;
    }
    const int64_t lda = ta ? M : K, ldb = tb ? K : N;
    auto run = [&] { gemm_raw(ta, tb, M, N, K, 1.0f, a, type, lda, b, type, ldb, 0.0f, C.get(), N, compute_type(p)); };
    run();
    synchronize();
    cudaEvent_t e0, e1;
    SW_CUDA_CHECK(cudaEventCreate(&e0));
    SW_CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int i = 0; i < reps; i++) {
      SW_CUDA_CHECK(cudaEventRecord(e0, stream_));
      run();
      SW_CUDA_CHECK(cudaEventRecord(e1, stream_));
      SW_CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      SW_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] / 1000.0;
  }

 private:
  // Training attention on the tensor cores (bf16 operands) in the tf32 and bf16 modes.
  bool tensor_core_attention() const { return precision_ != MatmulPrecision::fp32; }

  static int compute_type(MatmulPrecision p) {
    return p == MatmulPrecision::tf32 ? kCompute32FFastTF32 : p == MatmulPrecision::bf16 ? kCompute32FFast16BF : kCompute32F;
  }

  void blas_check(int status, const char* what) {
    if (status != 0) throw std::runtime_error(std::string(what) + " failed: " + cublas_status_name(status));
  }

  // Row-major C = alpha op(A) op(B) + beta C is column-major C^T = alpha op(B)^T op(A)^T + beta C^T:
  // the same call with the operands swapped, each keeping its own transpose flag.
  void gemm_raw(bool ta, bool tb, int M, int N, int K, float alpha, const void* A, int atype, int64_t lda, const void* B, int btype, int64_t ldb,
                float beta, float* C, int64_t ldc, int compute) {
    const int s = blas_->gemm_ex(handle_, tb ? kOpT : kOpN, ta ? kOpT : kOpN, N, M, K, &alpha, B, btype, static_cast<int>(ldb), A, atype,
                                 static_cast<int>(lda), &beta, C, kR32F, static_cast<int>(ldc), compute, kGemmDefault);
    if (s != 0)
      throw std::runtime_error("cublasGemmEx failed: " + cublas_status_name(s) + " (" + (ta ? "T" : "N") + (tb ? "T" : "N") + " M=" + std::to_string(M) +
                               " N=" + std::to_string(N) + " K=" + std::to_string(K) + " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) +
                               " ldc=" + std::to_string(ldc) + ")");
  }

  // The profiling scope of an operation other than a product; every such operation may write
  // memory, so operands converted to bf16 before it are stale after it.
  Scope op(const char* what) {
    generation_++;
    return Scope(what, stream_);
  }

  bool in_params(const void* p) const {
    return params16_ && static_cast<const float*>(p) >= params_ && static_cast<const float*>(p) < params_ + params_n_;
  }
  // A write into the parameters other than AdamW's leaves their bf16 copy stale.
  void touch_params(const void* p) {
    if (in_params(p)) params16_stale_ = true;
  }

  static bool overlaps(const float* a, size_t na, const float* b, size_t nb) { return a < b + nb && b < a + na; }

  // An operand of `rows` x `cols` floats (rows `ld` apart) as bf16: within the parameters, their
  // bf16 copy (rebuilt first if stale) with the same ld; otherwise converted into slot's buffer
  // (ld = cols), or the conversion still there from an earlier product with nothing written since.
  const uint16_t* bf16_operand(int slot, const float* src, int rows, int cols, int64_t ld, int64_t* ld16) {
    if (in_params(src)) {
      if (params16_stale_) {
        SW_LAUNCH(k_operand_to_bf16, grid_for(static_cast<int64_t>(params_n_)), kThreads, 0, stream_, params16_.get(), params_,
                  static_cast<int64_t>(params_n_), 1, int64_t(1), false);
        params16_stale_ = false;
      }
      *ld16 = ld;
      return params16_.get() + (src - params_);
    }
    Converted& c = converted_[slot];
    *ld16 = cols;
    if (c.src == src && c.rows == rows && c.cols == cols && c.ld == ld && c.generation == generation_) return c.buf;
    c.buf = static_cast<uint16_t*>(c.scratch.get(2 * static_cast<size_t>(rows) * cols));
    const bool vec4 = cols % 4 == 0 && ld % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0;
    SW_LAUNCH(k_operand_to_bf16, grid_for(static_cast<int64_t>(rows) * cols / (vec4 ? 4 : 1)), kThreads, 0, stream_, c.buf, src,
              static_cast<int64_t>(rows), cols, ld, vec4);
    c.src = src;
    c.rows = rows;
    c.cols = cols;
    c.ld = ld;
    c.generation = generation_;
    return c.buf;
  }

  // dst[c] += sum over rows of a[r, c] (times x[r, c] * rstd[r] when x is given), in fixed order.
  void column_sums(float* dst, const float* a, int64_t lda, const float* x, const float* rstd, int rows, int cols) {
    const int chunks = (rows + kColRows - 1) / kColRows;
    float* partial = static_cast<float*>(column_scratch_.get(sizeof(float) * static_cast<size_t>(chunks) * cols));
    SW_LAUNCH(k_colsum_partial, dim3((cols + 31) / 32, chunks), dim3(32, 8), 0, stream_, partial, a, lda, x, rstd, rows, cols);
    SW_LAUNCH(k_colsum_final, (cols + kThreads - 1) / kThreads, kThreads, 0, stream_, dst, partial, chunks, cols);
  }

  // The sum of n doubles in device memory, brought to the host.
  double sum_on_device(double* values, int64_t n) {
    double* out = values + n;  // each caller allocates n + 1
    SW_LAUNCH(k_sum, 1, kThreads, 0, stream_, out, values, n);
    double host = 0;
    SW_CUDA_CHECK(cudaMemcpyAsync(&host, out, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    SW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host;
  }

  static constexpr size_t kStagingBytes = size_t(1) << 20;
  struct Staging {
    void* host = nullptr;
    cudaEvent_t done = nullptr;
  };
  std::vector<Staging> staging_ = std::vector<Staging>(8);
  size_t next_staging_ = 0;

  MatmulPrecision precision_;
  const Cublas* blas_ = nullptr;
  Cublas::Handle handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  Scratch column_scratch_, loss_scratch_, reduce_scratch_, attention_scratch_, sample_scratch_, soft_scratch_, gumbel_scratch_;
  // bf16 mode: the parameters' bf16 copy (set_parameters), and the last bf16 conversion of each
  // product's A and B operands, valid while generation_ (bumped by every other operation) holds.
  const float* params_ = nullptr;
  size_t params_n_ = 0;
  std::shared_ptr<uint16_t> params16_;
  bool params16_stale_ = false;
  uint64_t generation_ = 0;
  struct Converted {
    Scratch scratch;
    uint16_t* buf = nullptr;
    const float* src = nullptr;
    int rows = 0, cols = 0;
    int64_t ld = 0;
    uint64_t generation = 0;
  };
  Converted converted_[2];
  std::vector<float> host_logits_;
  std::vector<int32_t> host_tokens_;
  std::vector<double> host_logprobs_;
  std::vector<std::pair<double, int32_t>> host_sample_work_;
};

}  // namespace cuda

const CudaStatus& cuda_status() {
  static const CudaStatus status = [] {
    CudaStatus s;
    s.built = true;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      cudaGetLastError();
      s.reason = e != cudaSuccess ? std::string("no usable NVIDIA GPU (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")" : "no NVIDIA GPU is visible";
#ifndef SW_CUDA_EMULATOR
      // The runtime says "insufficient driver" both when the driver is old and when there is none.
      if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL))
        dlclose(driver);
      else
        s.reason = "no NVIDIA driver is installed (libcuda.so.1 was not found), so there is no GPU to use";
#endif
      return s;
    }
    cudaDriverGetVersion(&s.driver_version);
    cudaRuntimeGetVersion(&s.runtime_version);
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
      s.reason = "cudaGetDeviceProperties failed for GPU 0";
      return s;
    }
    s.name = p.name;
    s.memory_bytes = p.totalGlobalMem;
    s.compute_major = p.major;
    s.compute_minor = p.minor;
    // A kernel must run: the build's machine code and PTX are for SW_CUDA_ARCHS only.
    int* flag = nullptr;
    cudaError_t k = cudaSetDevice(0);
    if (k == cudaSuccess) k = cudaMalloc(reinterpret_cast<void**>(&flag), sizeof(int));
    if (k == cudaSuccess) {
      k = cuda::run_probe(flag);
      cudaFree(flag);
    }
    if (k != cudaSuccess) {
      cudaGetLastError();
      s.reason = std::string("the GPU (") + p.name + ", compute capability " + std::to_string(p.major) + "." + std::to_string(p.minor) +
                 ") cannot run this build's kernels (" + cudaGetErrorString(k) + "; built for " + SW_CUDA_ARCHS +
                 ": rebuild with SOCIALWORLD_CUDA_ARCH set to its compute capability, e.g. 80)";
      return s;
    }
    std::string why;
    const cuda::Cublas* blas = cuda::load_cublas(&why);
    if (!blas) {
      s.reason = why;
      return s;
    }
    s.cublas = blas->path;
    s.available = true;
    return s;
  }();
  return status;
}

std::unique_ptr<Backend<float>> make_cuda_backend(MatmulPrecision precision) { return std::make_unique<cuda::CudaBackend>(precision); }

double cuda_gemm_seconds(const std::string& mode, bool ta, bool tb, int M, int N, int K, int reps) {
  if (mode != "fp32" && mode != "tf32" && mode != "bf16" && mode != "bf16-operands")
    throw std::invalid_argument("mode must be fp32, tf32, bf16 or bf16-operands (got " + mode + ")");
  cuda::CudaBackend be(MatmulPrecision::fp32);
  return be.time_gemm(mode, ta, tb, M, N, K, std::max(1, reps));
}

void cuda_profile_start() {
  std::lock_guard<std::mutex> lock(cuda::g_profile_lock);
  cuda::g_profile.clear();
  cuda::g_profiling = true;
}

std::vector<CudaProfileEntry> cuda_profile_stop() {
  std::lock_guard<std::mutex> lock(cuda::g_profile_lock);
  cuda::g_profiling = false;
  std::vector<CudaProfileEntry> out;
  for (const auto& [what, e] : cuda::g_profile) out.push_back({what, e.first, e.second});
  cuda::g_profile.clear();
  return out;
}

}  // namespace sw

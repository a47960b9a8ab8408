// The CPU backend: every kernel of backend.h on a thread pool. Work is split so that no two
// threads write the same element, and every reduction sums in a fixed order that does not depend
// on the number of threads (same inputs, same bits).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "../thread_pool.h"
#include "backend.h"
#include "gemm.h"
#include "vec.h"

namespace sw {
namespace {

// Rows per task for row-wise kernels: enough work to amortise a task, few enough to balance.
constexpr int64_t kRowGrain = 16;
// Columns per task for column-wise reductions.
constexpr int64_t kColGrain = 64;

template <typename T>
std::vector<T>& scratch(size_t n) {
  thread_local std::vector<T> s;
  if (s.size() < n) s.resize(n);
  return s;
}

template <typename T>
class CpuBackend final : public Backend<T> {
 public:
  explicit CpuBackend(std::shared_ptr<ThreadPool> pool) : pool_(std::move(pool)) {}

  const char* name() const override { return "cpu"; }
  int threads() const override { return pool_->size(); }

  bool host_memory() const override { return true; }
  void check_fits(size_t, const std::string&) override {}

  std::shared_ptr<T> alloc(size_t n) override { return std::static_pointer_cast<T>(alloc_bytes(n * sizeof(T))); }

  std::shared_ptr<void> alloc_bytes(size_t n) override {
    size_t bytes = std::max<size_t>(64, (n + 63) / 64 * 64);
    void* p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }

  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void synchronize() override {}
  size_t logit_budget() const override { return size_t(1) << 24; }

  void zero(T* x, size_t n) override {
    pool_->parallel_for(static_cast<int64_t>(n), 1 << 16, [&](int64_t b, int64_t e, int) { std::memset(x + b, 0, (e - b) * sizeof(T)); });
  }

  void copy(T* dst, const T* src, size_t n) override {
    pool_->parallel_for(static_cast<int64_t>(n), 1 << 16, [&](int64_t b, int64_t e, int) { std::memcpy(dst + b, src + b, (e - b) * sizeof(T)); });
  }

  void gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C,
            int64_t ldc) override {
    cpu::gemm<T>(*pool_, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }

  void embedding_forward(T* out, const int32_t* tokens, const T* table, int rows, int dim) override {
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) std::memcpy(out + r * dim, table + static_cast<int64_t>(tokens[r]) * dim, dim * sizeof(T));
    });
  }

  void embedding_backward(T* dtable, const int32_t* tokens, const T* dout, int rows, int dim, int) override {
    // Split by columns: every thread visits all rows in order, so repeated tokens sum in row order.
    pool_->parallel_for(dim, kColGrain, [&](int64_t c0, int64_t c1, int) {
      for (int r = 0; r < rows; r++) {
        T* d = dtable + static_cast<int64_t>(tokens[r]) * dim;
        const T* g = dout + static_cast<int64_t>(r) * dim;
        for (int64_t c = c0; c < c1; c++) d[c] += g[c];
      }
    });
  }

  void embedding_mix_forward(T* out, SoftEntries entries, const float* weights, const T* table, int rows, int dim) override {
    const int32_t *offsets = entries.offsets, *ids = entries.ids;
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        if (offsets[r + 1] == offsets[r]) continue;
        T* o = out + r * dim;
        std::fill(o, o + dim, T(0));
        // Entries in order, so that a one-hot row is its token's embedding exactly (0 + 1 * x).
        for (int32_t k = offsets[r]; k < offsets[r + 1]; k++) {
          const T w = static_cast<T>(weights[k]);
          const T* t = table + static_cast<int64_t>(ids[k]) * dim;
          for (int c = 0; c < dim; c++) o[c] += w * t[c];
        }
      }
    });
  }

  void embedding_mix_backward(T* dtable, T* dweights, SoftEntries entries, const float* weights, const T* table, const T* dout, int rows,
                              int dim) override {
    const int32_t *offsets = entries.offsets, *ids = entries.ids;
    // As embedding_backward: split by columns, every thread visits the rows in order.
    if (dtable)
      pool_->parallel_for(dim, kColGrain, [&](int64_t c0, int64_t c1, int) {
        for (int r = 0; r < rows; r++) {
          const T* g = dout + static_cast<int64_t>(r) * dim;
          for (int32_t k = offsets[r]; k < offsets[r + 1]; k++) {
            const T w = static_cast<T>(weights[k]);
            T* d = dtable + static_cast<int64_t>(ids[k]) * dim;
            for (int64_t c = c0; c < c1; c++) d[c] += w * g[c];
          }
        }
      });
    if (dweights)
      pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; r++)
          for (int32_t k = offsets[r]; k < offsets[r + 1]; k++) {
            const T* t = table + static_cast<int64_t>(ids[k]) * dim;
            const T* g = dout + r * dim;
            double acc = 0;
            for (int c = 0; c < dim; c++) acc += static_cast<double>(g[c]) * t[c];
            dweights[k] = static_cast<T>(acc);
          }
      });
  }

  void rmsnorm_forward(T* out, T* rstd, const T* x, const T* w, int rows, int dim, double eps) override {
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        const T* xr = x + r * dim;
        T* yr = out + r * dim;
        const T s = static_cast<T>(1.0 / std::sqrt(vec::sum_squares(xr, dim) / dim + eps));
        if (rstd) rstd[r] = s;
        // Hugging Face's order: normalise, then scale by the weight.
        for (int c = 0; c < dim; c++) yr[c] = w[c] * (xr[c] * s);
      }
    });
  }

  void rmsnorm_backward(T* dx, T* dw, const T* dout, const T* x, const T* w, const T* rstd, int rows, int dim) override {
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        const T* xr = x + r * dim;
        const T* gr = dout + r * dim;
        T* dxr = dx + r * dim;
        const T s = rstd[r];
        double dot = 0;
        for (int c = 0; c < dim; c++) dot += static_cast<double>(gr[c]) * w[c] * xr[c];
        const T k = static_cast<T>(dot * s * s * s / dim);
        for (int c = 0; c < dim; c++) dxr[c] += s * (gr[c] * w[c]) - k * xr[c];
      }
    });
    if (!dw) return;
    pool_->parallel_for(dim, kColGrain, [&](int64_t c0, int64_t c1, int) {
      for (int r = 0; r < rows; r++) {
        const T* xr = x + static_cast<int64_t>(r) * dim;
        const T* gr = dout + static_cast<int64_t>(r) * dim;
        const T s = rstd[r];
        for (int64_t c = c0; c < c1; c++) dw[c] += gr[c] * xr[c] * s;
      }
    });
  }

  void add_bias(T* x, int64_t ld, const T* bias, int rows, int cols) override {
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        T* xr = x + r * ld;
        for (int c = 0; c < cols; c++) xr[c] += bias[c];
      }
    });
  }

  void bias_backward(T* dbias, const T* dout, int64_t ld, int rows, int cols) override {
    pool_->parallel_for(cols, kColGrain, [&](int64_t c0, int64_t c1, int) {
      for (int r = 0; r < rows; r++) {
        const T* g = dout + static_cast<int64_t>(r) * ld;
        for (int64_t c = c0; c < c1; c++) dbias[c] += g[c];
      }
    });
  }

  void rope(T* x, int64_t ld, const int32_t* pos, int rows, int heads, int head_dim, const T* cos, const T* sin, bool inverse) override {
    const int half = head_dim / 2;
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        const T* c = cos + static_cast<int64_t>(pos[r]) * half;
        const T* s = sin + static_cast<int64_t>(pos[r]) * half;
        for (int h = 0; h < heads; h++) {
          T* v = x + r * ld + static_cast<int64_t>(h) * head_dim;
          for (int i = 0; i < half; i++) {
            const T a = v[i], bb = v[i + half];
            if (!inverse) {
              v[i] = a * c[i] - bb * s[i];
              v[i + half] = bb * c[i] + a * s[i];
            } else {
              v[i] = a * c[i] + bb * s[i];
              v[i + half] = bb * c[i] - a * s[i];
            }
          }
        }
      }
    });
  }

  void attention_forward(const AttentionArgs<T>& a) override {
    if (a.dense_seq_len > 0) return attention_forward_dense(a);
    const int hd = a.head_dim, group = a.heads / a.kv_heads;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
    // Rows attend to different numbers of keys: hand them out one at a time.
    pool_->run(a.rows, [&](int64_t r, int) {
      const int n = a.pos[r] + 1;
      std::vector<T>& p = scratch<T>(n);
      const int64_t base = static_cast<int64_t>(a.seq[r]) * a.kv_seq_stride;
      for (int h = 0; h < a.heads; h++) {
        const int g = h / group;
        const T* q = a.q + r * a.q_stride + static_cast<int64_t>(h) * hd;
        const T* k = a.k + base + static_cast<int64_t>(g) * hd;
        const T* v = a.v + base + static_cast<int64_t>(g) * hd;
        T m = -std::numeric_limits<T>::infinity();
        for (int j = 0; j < n; j++) {
          p[j] = vec::dot(q, k + j * a.kv_pos_stride, hd) * scale;
          m = std::max(m, p[j]);
        }
        double sum = 0;
        for (int j = 0; j < n; j++) {
          p[j] = std::exp(p[j] - m);
          sum += p[j];
        }
        T* o = a.out + r * a.out_stride + static_cast<int64_t>(h) * hd;
        std::fill(o, o + hd, T(0));
        const T inv = static_cast<T>(1.0 / sum);
        for (int j = 0; j < n; j++) vec::axpy(o, p[j] * inv, v + j * a.kv_pos_stride, hd);
        if (a.lse) a.lse[r * a.heads + h] = static_cast<T>(m + std::log(sum));
      }
    });
  }

  // Training layout: per (sequence, head), blocks of kBlock queries against the keys they can
  // see, as matrix products (scores = scale Q K^T, out = P V) with the causal mask in between.
  static constexpr int kBlock = 64;

  void attention_forward_dense(const AttentionArgs<T>& a) {
    const int S = a.dense_seq_len, hd = a.head_dim, group = a.heads / a.kv_heads;
    const int batch = a.rows / S;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
    pool_->run(static_cast<int64_t>(batch) * a.heads, [&](int64_t task, int) {
      const int b = static_cast<int>(task / a.heads), h = static_cast<int>(task % a.heads), g = h / group;
      const int64_t row0 = static_cast<int64_t>(b) * S;
      const T* k = a.k + b * a.kv_seq_stride + static_cast<int64_t>(g) * hd;
      const T* v = a.v + b * a.kv_seq_stride + static_cast<int64_t>(g) * hd;
      std::vector<T>& sc = scratch<T>(static_cast<size_t>(kBlock) * S);
      for (int i0 = 0; i0 < S; i0 += kBlock) {
        const int iq = std::min(kBlock, S - i0), nk = i0 + iq;
        const T* q = a.q + (row0 + i0) * a.q_stride + static_cast<int64_t>(h) * hd;
        cpu::gemm<T>(*pool_, false, true, iq, nk, hd, scale, q, a.q_stride, k, a.kv_pos_stride, T(0), sc.data(), nk);
        for (int r = 0; r < iq; r++) {
          T* row = sc.data() + static_cast<int64_t>(r) * nk;
          const int n = i0 + r + 1;  // visible keys
          T m = row[0];
          for (int j = 1; j < n; j++) m = std::max(m, row[j]);
          double sum = 0;
          for (int j = 0; j < n; j++) {
            row[j] = std::exp(row[j] - m);
            sum += row[j];
          }
          const T inv = static_cast<T>(1.0 / sum);
          for (int j = 0; j < n; j++) row[j] *= inv;
          std::fill(row + n, row + nk, T(0));
          if (a.lse) a.lse[(row0 + i0 + r) * a.heads + h] = static_cast<T>(m + std::log(sum));
        }
        T* o = a.out + (row0 + i0) * a.out_stride + static_cast<int64_t>(h) * hd;
        cpu::gemm<T>(*pool_, false, false, iq, hd, nk, T(1), sc.data(), nk, v, a.kv_pos_stride, T(0), o, a.out_stride);
      }
    });
  }

  void attention_backward(const AttentionGradArgs<T>& a) override {
    const int hd = a.head_dim, group = a.heads / a.kv_heads, S = a.seq_len;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
    // One task per (sequence, kv head): it owns that head's dk and dv, so nothing is shared.
    pool_->run(static_cast<int64_t>(a.batch) * a.kv_heads, [&](int64_t task, int) {
      const int bi = static_cast<int>(task / a.kv_heads), g = static_cast<int>(task % a.kv_heads);
      const int64_t row0 = static_cast<int64_t>(bi) * S;
      const T* k = a.k + row0 * a.kv_pos_stride + static_cast<int64_t>(g) * hd;
      const T* v = a.v + row0 * a.kv_pos_stride + static_cast<int64_t>(g) * hd;
      T* dk = a.dk + row0 * a.kv_pos_stride + static_cast<int64_t>(g) * hd;
      T* dv = a.dv + row0 * a.kv_pos_stride + static_cast<int64_t>(g) * hd;
      for (int j = 0; j < S; j++) {
        std::fill(dk + j * a.kv_pos_stride, dk + j * a.kv_pos_stride + hd, T(0));
        std::fill(dv + j * a.kv_pos_stride, dv + j * a.kv_pos_stride + hd, T(0));
      }
      std::vector<T>& buf = scratch<T>(2 * static_cast<size_t>(kBlock) * S + kBlock);
      T* P = buf.data();
      T* dS = P + static_cast<size_t>(kBlock) * S;
      T* D = dS + static_cast<size_t>(kBlock) * S;
      for (int h = g * group; h < (g + 1) * group; h++) {
        for (int i0 = 0; i0 < S; i0 += kBlock) {
          const int iq = std::min(kBlock, S - i0), nk = i0 + iq;
          const int64_t r0 = row0 + i0;
          const T* q = a.q + r0 * a.q_stride + static_cast<int64_t>(h) * hd;
          const T* o = a.out + r0 * a.out_stride + static_cast<int64_t>(h) * hd;
          const T* dout = a.dout + r0 * a.out_stride + static_cast<int64_t>(h) * hd;
          T* dq = a.dq + r0 * a.q_stride + static_cast<int64_t>(h) * hd;
          // P = softmax(scale Q K^T) again, from the kept log-sum-exp.
          cpu::gemm<T>(*pool_, false, true, iq, nk, hd, scale, q, a.q_stride, k, a.kv_pos_stride, T(0), P, nk);
          // dP = dO V^T
          cpu::gemm<T>(*pool_, false, true, iq, nk, hd, T(1), dout, a.out_stride, v, a.kv_pos_stride, T(0), dS, nk);
          for (int r = 0; r < iq; r++) {
            const T lse = a.lse[(r0 + r) * a.heads + h];
            D[r] = vec::dot(dout + r * a.out_stride, o + r * a.out_stride, hd);
            T* pr = P + static_cast<int64_t>(r) * nk;
            T* dr = dS + static_cast<int64_t>(r) * nk;
            const int n = i0 + r + 1;
            for (int j = 0; j < n; j++) {
              pr[j] = std::exp(pr[j] - lse);
              dr[j] = pr[j] * (dr[j] - D[r]) * scale;  // dS, with the score's scale folded in
            }
            std::fill(pr + n, pr + nk, T(0));
            std::fill(dr + n, dr + nk, T(0));
          }
          // dQ = dS K; dK += dS^T Q; dV += P^T dO
          cpu::gemm<T>(*pool_, false, false, iq, hd, nk, T(1), dS, nk, k, a.kv_pos_stride, T(0), dq, a.q_stride);
          cpu::gemm<T>(*pool_, true, false, nk, hd, iq, T(1), dS, nk, q, a.q_stride, T(1), dk, a.kv_pos_stride);
          cpu::gemm<T>(*pool_, true, false, nk, hd, iq, T(1), P, nk, dout, a.out_stride, T(1), dv, a.kv_pos_stride);
        }
      }
    });
  }

  void swiglu_forward(T* out, const T* gu, int rows, int dim) override {
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        const T* g = gu + r * 2 * dim;
        const T* u = g + dim;
        T* o = out + r * dim;
        for (int i = 0; i < dim; i++) o[i] = g[i] / (T(1) + std::exp(-g[i])) * u[i];
      }
    });
  }

  void swiglu_backward(T* dgu, const T* dout, const T* gu, int rows, int dim) override {
    pool_->parallel_for(rows, kRowGrain, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        const T* g = gu + r * 2 * dim;
        const T* u = g + dim;
        const T* d = dout + r * dim;
        T* dg = dgu + r * 2 * dim;
        T* du = dg + dim;
        for (int i = 0; i < dim; i++) {
          const T sig = T(1) / (T(1) + std::exp(-g[i]));
          const T silu = g[i] * sig;
          du[i] = d[i] * silu;
          dg[i] = d[i] * u[i] * sig * (T(1) + g[i] * (T(1) - sig));
        }
      }
    });
  }

  void add(T* y, const T* x, size_t n) override {
    pool_->parallel_for(static_cast<int64_t>(n), 1 << 14, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; i++) y[i] += x[i];
    });
  }

  void dropout(T* out, const T* x, size_t n, double p, uint64_t seed) override {
    const T inv = static_cast<T>(1.0 / (1.0 - p));
    pool_->parallel_for(static_cast<int64_t>(n), 1 << 14, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; i++) out[i] = dropout_uniform(seed, static_cast<uint64_t>(i)) >= p ? x[i] * inv : T(0);
    });
  }

  void cache_store(T* k, T* v, const T* src, int64_t ld, int64_t k_off, int64_t v_off, int width, const int32_t* seq, const int32_t* pos,
                   int rows, int64_t seq_stride) override {
    for (int r = 0; r < rows; r++) {
      const int64_t at = seq[r] * seq_stride + static_cast<int64_t>(pos[r]) * width;
      std::memcpy(k + at, src + r * ld + k_off, width * sizeof(T));
      std::memcpy(v + at, src + r * ld + v_off, width * sizeof(T));
    }
  }

  double cross_entropy(T* logits, const int32_t* targets, const float* weights, T* logp, int rows, int vocab, bool grad) override {
    std::vector<double> row_loss(rows, 0.0);
    pool_->parallel_for(rows, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        T* z = logits + r * vocab;
        const int32_t t = targets[r];
        const double w = weights ? weights[r] : 1.0;
        if (t < 0) {
          logp[r] = 0;
          if (grad) std::fill(z, z + vocab, T(0));
          continue;
        }
        T m = z[0];
        for (int i = 1; i < vocab; i++) m = std::max(m, z[i]);
        double sum = 0;
        for (int i = 0; i < vocab; i++) sum += std::exp(static_cast<double>(z[i] - m));
        const double lse = m + std::log(sum);
        const double lp = z[t] - lse;
        logp[r] = static_cast<T>(lp);
        row_loss[r] = -w * lp;
        if (grad) {
          // d(-w * logp[t]) / dz_i = w * (softmax_i - [i == t])
          for (int i = 0; i < vocab; i++) z[i] = static_cast<T>(w * std::exp(z[i] - lse));
          z[t] -= static_cast<T>(w);
        }
      }
    });
    double loss = 0;
    for (double l : row_loss) loss += l;
    return loss;
  }

  double gumbel_loss(T* logits, SoftEntries entries, const float* noised, const float* weights, double temperature, T* logdens, int rows,
                     int vocab, bool grad) override {
    const int32_t *offsets = entries.offsets, *ids = entries.ids;
    const double inv_t = 1.0 / temperature;
    std::vector<double> row_loss(rows, 0.0);
    pool_->parallel_for(rows, 1, [&](int64_t b, int64_t e, int) {
      std::vector<double> lp, a;
      for (int64_t r = b; r < e; r++) {
        T* z = logits + r * vocab;
        const int32_t k0 = offsets[r], n = offsets[r + 1] - k0;
        const int32_t* S = ids + k0;
        const float* q = noised + k0;
        double m = -INFINITY;
        for (int k = 0; k < n; k++) m = std::max(m, static_cast<double>(z[S[k]]) * inv_t);
        double sum = 0;
        for (int k = 0; k < n; k++) sum += std::exp(z[S[k]] * inv_t - m);
        const double lse = m + std::log(sum);
        lp.resize(n);
        double dens = 0;
        for (int k = 0; k < n; k++) {
          lp[k] = z[S[k]] * inv_t - lse;
          const double g = q[k] - lp[k];
          dens += -g - std::exp(-g);
        }
        dens /= n;
        const double w = weights ? weights[r] : 1.0;
        logdens[r] = static_cast<T>(dens);
        row_loss[r] = -w * dens;
        if (!grad) continue;
        // d dens / d lp_i = (1 - exp(-g_i)) / n =: a_i; d lp_i / d u_j = [i == j] - p_j on S, so
        // d dens / d u_j = a_j - p_j sum_i a_i; du/dz = 1 / temperature.
        a.resize(n);
        double sum_a = 0;
        for (int k = 0; k < n; k++) {
          a[k] = (1.0 - std::exp(lp[k] - q[k])) / n;
          sum_a += a[k];
        }
        std::fill(z, z + vocab, T(0));
        for (int k = 0; k < n; k++) z[S[k]] = static_cast<T>(-w * inv_t * (a[k] - std::exp(lp[k]) * sum_a));
      }
    });
    double loss = 0;
    for (double l : row_loss) loss += l;
    return loss;
  }

  double token_loss(T* logits, const int32_t* targets, const float* weights, const float* entropy_weights, double temperature, TokenMasks masks,
                    T* logp, T* entropy, int rows, int vocab, bool grad) override {
    const double inv_t = 1.0 / temperature;
    std::vector<double> row_loss(rows, 0.0);
    pool_->parallel_for(rows, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; r++) {
        T* z = logits + r * vocab;
        const int32_t t = targets[r];
        if (t < 0) {
          logp[r] = 0;
          if (entropy) entropy[r] = 0;
          if (grad) std::fill(z, z + vocab, T(0));
          continue;
        }
        const double w = weights ? weights[r] : 1.0;
        const double ew = entropy_weights ? entropy_weights[r] : 0.0;
        // The row's candidates: allowed[0, n) (increasing), or the whole vocabulary.
        const bool masked = masks.rows && masks.rows[2 * r + 1] > 0;
        const int32_t* allowed = masked ? masks.tokens + masks.rows[2 * r] : nullptr;
        const int n = masked ? masks.rows[2 * r + 1] : vocab;
        if (masked && n == 1) {
          // A forced token: log-prob 0 and no gradient, exactly (the sampler reports 0 too).
          logp[r] = 0;
          if (entropy) entropy[r] = 0;
          if (grad) std::fill(z, z + vocab, T(0));
          continue;
        }
        auto token_at = [&](int k) { return masked ? allowed[k] : k; };
        double m = z[token_at(0)];
        for (int k = 1; k < n; k++) m = std::max<double>(m, z[token_at(k)]);
        m *= inv_t;
        // One pass for the normalizer and sum(exp(u - m) * u), which gives the entropy:
        // H = lse - sum_i p_i u_i.
        double sum = 0, sum_u = 0;
        for (int k = 0; k < n; k++) {
          const double u = z[token_at(k)] * inv_t;
          const double ex = std::exp(u - m);
          sum += ex;
          sum_u += ex * u;
        }
        const double lse = m + std::log(sum);
        const double lp = z[t] * inv_t - lse;
        const double h = lse - sum_u / sum;
        logp[r] = static_cast<T>(lp);
        if (entropy) entropy[r] = static_cast<T>(h);
        row_loss[r] = -w * lp - ew * h;
        if (grad) {
          // d(-w logp_t)/du_i = w (p_i - [i == t]); d(-ew H)/du_i = ew p_i (log p_i + H); du/dz = 1 / temperature.
          // Outside a mask p_i is 0, and so is the gradient.
          int next = 0;  // the next allowed token's position
          for (int i = 0; i < vocab; i++) {
            if (masked) {
              if (next == n || allowed[next] != i) {
                z[i] = T(0);
                continue;
              }
              next++;
            }
            const double u = z[i] * inv_t;
            const double p = std::exp(u - lse);
            z[i] = static_cast<T>(inv_t * (w * p + ew * p * (u - lse + h)));
          }
          z[t] -= static_cast<T>(inv_t * w);
        }
      }
    });
    double loss = 0;
    for (double l : row_loss) loss += l;
    return loss;
  }

  void sample(const T* logits, int rows, int vocab, const SamplingParams& params, const Candidates* allowed, const double* uniforms,
              Sample* samples) override {
    std::vector<std::pair<double, int32_t>>& work = scratch<std::pair<double, int32_t>>(0);
    for (int r = 0; r < rows; r++) samples[r] = sample_token(logits + static_cast<int64_t>(r) * vocab, vocab, allowed[r], params, uniforms[r], work);
  }

  double sum_squares(const T* x, size_t n) override {
    // Fixed chunks summed in order: the result does not depend on the thread count.
    constexpr int64_t chunk = 1 << 15;
    const int64_t chunks = (static_cast<int64_t>(n) + chunk - 1) / chunk;
    std::vector<double> part(chunks, 0.0);
    pool_->parallel_for(chunks, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t c = b; c < e; c++) {
        const size_t lo = c * chunk, hi = std::min(n, static_cast<size_t>((c + 1) * chunk));
        part[c] = vec::sum_squares(x + lo, hi - lo);
      }
    });
    double s = 0;
    for (double v : part) s += v;
    return s;
  }

  void adamw(T* params, const T* grads, T* m, T* v, size_t n, const AdamWArgs& a) override {
    const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
    const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
    const T step_size = static_cast<T>(a.lr / bc1);
    const T sqrt_bc2 = static_cast<T>(std::sqrt(bc2));
    const T decay = static_cast<T>(1.0 - a.lr * a.weight_decay);
    const T b1 = static_cast<T>(a.beta1), b2 = static_cast<T>(a.beta2), eps = static_cast<T>(a.eps), gs = static_cast<T>(a.grad_scale);
    pool_->parallel_for(static_cast<int64_t>(n), 1 << 14, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; i++) {
        const T g = grads[i] * gs;
        params[i] *= decay;
        m[i] = b1 * m[i] + (T(1) - b1) * g;
        v[i] = b2 * v[i] + (T(1) - b2) * g * g;
        params[i] -= step_size * m[i] / (std::sqrt(v[i]) / sqrt_bc2 + eps);
      }
    });
  }

 private:
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace

template <typename T>
std::unique_ptr<Backend<T>> make_cpu_backend(std::shared_ptr<ThreadPool> pool) {
  return std::make_unique<CpuBackend<T>>(std::move(pool));
}

template std::unique_ptr<Backend<float>> make_cpu_backend<float>(std::shared_ptr<ThreadPool>);
template std::unique_ptr<Backend<double>> make_cpu_backend<double>(std::shared_ptr<ThreadPool>);

}  // namespace sw

// The kernel layer: every numerical operation the model performs, behind one interface.
//
// The model (model.cpp) owns no arithmetic loops of its own: it allocates through a Backend and
// calls its kernels with raw pointers and shapes. CpuBackend (cpu_backend.cpp) implements it with
// a thread pool and SIMD; CudaBackend (cuda/cuda_backend.cu) implements it over GPU memory.
// Every pointer a kernel takes lives in the backend's memory (host_memory() says whether that is
// the host's): the model stages its host inputs with upload() and reads results with download().
// Matrices are row-major; linear layers keep Hugging Face's [out_features, in_features] weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "../sampler.h"

namespace sw {

// Rows of the policy-gradient head restricted to some tokens: where a rollout sampled under a
// grammar, the trainer's log-probs, ratio, entropy and gradient are those of the distribution it
// sampled from, softmax over the tokens the grammar allowed. Row r's candidates are
// tokens[rows[2r] .. rows[2r] + rows[2r + 1]) (increasing ids, its target among them); a row of
// length 0 keeps the whole vocabulary. `rows` is indexed by the row of the call; both arrays are
// in the backend's memory. Null rows: no row is masked.
struct TokenMasks {
  const int32_t* rows = nullptr;
  const int32_t* tokens = nullptr;
};

// The entries of soft-token rows (SofT-GRPO): row r's entries are k in [offsets[r], offsets[r + 1])
// of ids (distinct within a row). offsets and ids are in the backend's memory; host_offsets and
// host_ids are the same arrays in host memory, where the caller built them. A backend that plans
// on the host (the CUDA table gradient groups entries by token there) reads those, so it never
// waits for a copy back of what the host already held.
struct SoftEntries {
  const int32_t* offsets = nullptr;
  const int32_t* ids = nullptr;
  const int32_t* host_offsets = nullptr;
  const int32_t* host_ids = nullptr;
};

// Which keys each query row attends to, and where queries, keys and values live.
// Row r belongs to sequence seq[r] at position pos[r] and attends to that sequence's keys at
// positions 0..pos[r] (causal). Key/value j of sequence s start at
// k + s * kv_seq_stride + j * kv_pos_stride (same for v); head g's slice follows at g * head_dim.
template <typename T>
struct AttentionArgs {
  int rows = 0, heads = 0, kv_heads = 0, head_dim = 0;
  const int32_t* seq = nullptr;
  const int32_t* pos = nullptr;
  const T* q = nullptr;  // [rows, q_stride], heads * head_dim used
  int64_t q_stride = 0;
  const T* k = nullptr;
  const T* v = nullptr;
  int64_t kv_seq_stride = 0, kv_pos_stride = 0;
  T* out = nullptr;  // [rows, out_stride]
  int64_t out_stride = 0;
  T* lse = nullptr;  // [rows, heads] log-sum-exp of the scaled scores (kept for backward), or null
  // Nonzero: the rows are rows / dense_seq_len whole sequences, each at positions 0, 1, ... in
  // order (a training batch), which lets the kernel work in matrix products.
  int dense_seq_len = 0;
};

// Backward of causal self-attention over a rectangular [batch, seq_len] block (training).
// dq, dk, dv use the same strides as q, k, v; dk and dv are overwritten (not accumulated).
template <typename T>
struct AttentionGradArgs {
  int batch = 0, seq_len = 0, heads = 0, kv_heads = 0, head_dim = 0;
  const T *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t q_stride = 0, kv_pos_stride = 0;  // sequences are seq_len rows apart
  const T* out = nullptr;
  const T* dout = nullptr;
  int64_t out_stride = 0;
  const T* lse = nullptr;
  T *dq = nullptr, *dk = nullptr, *dv = nullptr;
};

struct AdamWArgs {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;  // decay 0 for norms and biases
  int64_t step = 1;          // 1-based, for bias correction
  double grad_scale = 1.0;   // multiplies every gradient first (clipping, accumulation)
};

template <typename T>
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int threads() const = 0;

  // Whether the backend's memory is the host's (then host pointers may be passed to every
  // kernel as they are, and upload / download are plain copies).
  virtual bool host_memory() const = 0;
  // Throws std::runtime_error, naming `what` and the bytes, when `bytes` more cannot be allocated;
  // called before large allocations so that they fail with a clear message instead of midway.
  virtual void check_fits(size_t bytes, const std::string& what) = 0;
  // Zero-initialised storage for n elements (bytes), 64-byte aligned.
  virtual std::shared_ptr<T> alloc(size_t n) = 0;
  virtual std::shared_ptr<void> alloc_bytes(size_t bytes) = 0;
  virtual void upload(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, size_t bytes) = 0;
  // Waits until every kernel issued so far has finished (timing; a no-op on the CPU).
  virtual void synchronize() = 0;
  // How many logits (rows * vocab elements) the model may materialise at once for the LM head.
  virtual size_t logit_budget() const = 0;
  virtual void zero(T* x, size_t n) = 0;
  virtual void copy(T* dst, const T* src, size_t n) = 0;
  // The model's parameters, n elements, which change only through upload, copy, zero and adamw:
  // a backend whose products read lower-precision operands may keep its own copy of them in that
  // precision (the CUDA backend's bf16 mode). Nothing to do by default.
  virtual void set_parameters(const T* params, size_t n) {
    (void)params;
    (void)n;
  }

  // C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C; op transposes when ta / tb.
  // With beta == 0, C is not read.
  virtual void gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta, T* C,
                    int64_t ldc) = 0;

  virtual void embedding_forward(T* out, const int32_t* tokens, const T* table, int rows, int dim) = 0;
  // dtable[tokens[r]] += dout[r]
  virtual void embedding_backward(T* dtable, const int32_t* tokens, const T* dout, int rows, int dim, int vocab) = 0;

  // out = x / sqrt(mean(x^2) + eps) * w; rstd (if not null) keeps 1 / sqrt(mean(x^2) + eps) per row.
  virtual void rmsnorm_forward(T* out, T* rstd, const T* x, const T* w, int rows, int dim, double eps) = 0;
  // dx += d(out)/dx * dout; dw += sum over rows of dout * x * rstd (dw null: a frozen weight, skipped).
  virtual void rmsnorm_backward(T* dx, T* dw, const T* dout, const T* x, const T* w, const T* rstd, int rows, int dim) = 0;

  // x[r, 0:cols] += bias; dbias += column sums of dout[:, 0:cols] (rows ld apart).
  virtual void add_bias(T* x, int64_t ld, const T* bias, int rows, int cols) = 0;
  virtual void bias_backward(T* dbias, const T* dout, int64_t ld, int rows, int cols) = 0;

  // Rotary embedding (Hugging Face's rotate_half layout) applied in place to `heads` heads of
  // head_dim at x + r * ld, at position pos[r]; cos/sin tables are [position, head_dim / 2].
  // inverse rotates back (the backward pass).
  virtual void rope(T* x, int64_t ld, const int32_t* pos, int rows, int heads, int head_dim, const T* cos, const T* sin, bool inverse) = 0;

  virtual void attention_forward(const AttentionArgs<T>& a) = 0;
  virtual void attention_backward(const AttentionGradArgs<T>& a) = 0;

  // gu = [gate | up] per row (2 * dim wide); out = silu(gate) * up.
  virtual void swiglu_forward(T* out, const T* gu, int rows, int dim) = 0;
  virtual void swiglu_backward(T* dgu, const T* dout, const T* gu, int rows, int dim) = 0;

  // y += x
  virtual void add(T* y, const T* x, size_t n) = 0;

  // Inverted dropout: out[i] = x[i] / (1 - p) where element i is kept, else 0 (out may be x).
  // Element i is kept when dropout_uniform(seed, i) >= p, so the mask is a function of (seed, i)
  // alone: every backend draws the same one, and the backward pass applies the same call to the
  // gradient instead of keeping a mask.
  virtual void dropout(T* out, const T* x, size_t n, double p, uint64_t seed) = 0;

  // Stores rows' keys and values in a KV cache: row r's `width` values at src + r * ld + k_off
  // (and + v_off) go to k (and v) + seq[r] * seq_stride + pos[r] * width.
  virtual void cache_store(T* k, T* v, const T* src, int64_t ld, int64_t k_off, int64_t v_off, int width, const int32_t* seq,
                           const int32_t* pos, int rows, int64_t seq_stride) = 0;

  // For each row of logits [rows, vocab]: logp[r] = log softmax(logits[r])[targets[r]]
  // (0 where targets[r] < 0). With grad, logits are replaced by d(loss)/d(logits) for
  // loss = -sum_r weights[r] * logp[r]. Returns that loss.
  virtual double cross_entropy(T* logits, const int32_t* targets, const float* weights, T* logp, int rows, int vocab, bool grad) = 0;

  // The policy-gradient head: for each row of logits [rows, vocab], with u = logits / temperature
  // and p = softmax(u) over the row's candidates (the whole vocabulary, or its mask: see
  // TokenMasks): logp[r] = log p[targets[r]] and, where entropy is not null, entropy[r] =
  // -sum_i p_i log p_i (both 0 where targets[r] < 0). With grad, logits are replaced by
  // d(loss)/d(logits) for loss = -sum_r weights[r] * logp[r] - sum_r entropy_weights[r] * entropy[r]
  // (null weights: 1; null entropy_weights: no entropy term), 0 outside a row's mask. Returns that loss.
  virtual double token_loss(T* logits, const int32_t* targets, const float* weights, const float* entropy_weights, double temperature,
                            TokenMasks masks, T* logp, T* entropy, int rows, int vocab, bool grad) = 0;

  // Soft tokens (SofT-GRPO; model.h's SoftInputs and SoftTargets say what the model does with
  // them). Row r's entries (SoftEntries) index weights / noised too.
  //
  // out[r] = sum_k weights[k] * table[ids[k]] (a row with no entries is left as it is).
  virtual void embedding_mix_forward(T* out, SoftEntries entries, const float* weights, const T* table, int rows, int dim) = 0;
  // dtable[ids[k]] += weights[k] * dout[r] (dtable null: a frozen table, skipped) and, where
  // dweights is not null, dweights[k] = <dout[r], table[ids[k]]>: the gradient of the mixture's
  // weights.
  virtual void embedding_mix_backward(T* dtable, T* dweights, SoftEntries entries, const float* weights, const T* table, const T* dout, int rows,
                                      int dim) = 0;
  // The Gumbel head, for rows whose output was a soft token: with u = logits / temperature, S the
  // row's support (its ids, at least one), lp_i = u_i - logsumexp_S(u) (the top-p distribution
  // renormalised on S) and g_i = noised[k] - lp_i (the Gumbel noise that turned lp into the
  // recorded q'), logdens[r] = (1 / |S|) sum_{i in S} (-g_i - exp(-g_i)), the mean Gumbel log-density.
  // With grad, logits are replaced by d(loss)/d(logits) for loss = -sum_r weights[r] * logdens[r]
  // (0 outside S). Returns that loss.
  virtual double gumbel_loss(T* logits, SoftEntries entries, const float* noised, const float* weights, double temperature, T* logdens, int rows,
                             int vocab, bool grad) = 0;

  // Draws one token per row of logits [rows, vocab] as sample_token (sampler.h) does, from
  // allowed[r] (the whole vocabulary, or a grammar's mask) with uniforms[r] as row r's random
  // number (unused when greedy or when one token is allowed). allowed, uniforms and samples are
  // host arrays: this call returns when the results are there.
  virtual void sample(const T* logits, int rows, int vocab, const SamplingParams& params, const Candidates* allowed, const double* uniforms,
                      Sample* samples) = 0;

  // Sum of squares, accumulated in double.
  virtual double sum_squares(const T* x, size_t n) = 0;

  // AdamW (PyTorch's update, decoupled weight decay) on n parameters with their moments.
  virtual void adamw(T* params, const T* grads, T* m, T* v, size_t n, const AdamWArgs& args) = 0;
};

#if defined(__CUDACC__)
#define SW_HOST_DEVICE __host__ __device__
#else
#define SW_HOST_DEVICE
#endif

// The uniform in [0, 1) that dropout draws for element i under `seed`: 24 bits of a splitmix64
// hash (exact in float and double, so a float kernel compares the same value).
SW_HOST_DEVICE inline uint64_t dropout_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
SW_HOST_DEVICE inline double dropout_uniform(uint64_t seed, uint64_t i) {
  return static_cast<double>(dropout_mix64(seed * 0x9e3779b97f4a7c15ULL + i) >> 40) * (1.0 / 16777216.0);
}

class ThreadPool;

// The CPU backend, running its kernels on `pool` (shared by every model of the process).
template <typename T>
std::unique_ptr<Backend<T>> make_cpu_backend(std::shared_ptr<ThreadPool> pool);

}  // namespace sw

// A Qwen2-family decoder: token embedding, pre-norm blocks of grouped-query attention (rotary
// positions, optional q/k/v bias) and a SwiGLU MLP, a final RMSNorm and a tied or untied LM head.
//
// Parameters live in one contiguous buffer in a fixed order (tensors() names each slice with its
// Hugging Face name); gradients and the AdamW moments use the same layout, so one offset finds a
// tensor in all four. q/k/v weights are adjacent (one [q+k+v, hidden] matrix, one GEMM) and so are
// gate/up. All arithmetic goes through a Backend, and every buffer lives in its memory: the
// methods below take host arrays and stage them (in place when the backend's memory is the host's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace sw {

struct ModelConfig {
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int max_position = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  bool tie_word_embeddings = false;
  bool attention_bias = true;

  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

struct TensorInfo {
  std::string name;  // Hugging Face name, e.g. model.layers.0.self_attn.q_proj.weight
  std::vector<int64_t> shape;
  size_t offset = 0;  // in elements, into params / grads / moments
  size_t size = 0;
  bool decay = false;  // weight decay applies (matrices and embeddings; not norms or biases)
};

// The policy head's masks as a caller gives them, in host memory: rows [batch * seq_len * 2], each
// position's (offset, length) in tokens [num_tokens] (TokenMasks in backend.h says what they
// mean). Positions may share a list. Null rows: no mask.
struct PolicyMasks {
  const int32_t* rows = nullptr;
  const int32_t* tokens = nullptr;
  size_t num_tokens = 0;
};

// Where generation keeps past keys and values: [layer][sequence][position][kv_heads * head_dim].
template <typename T>
struct KvCache {
  int batch = 0, max_len = 0;
  std::shared_ptr<T> k, v;
};

template <typename T>
class Qwen2Model {
 public:
  Qwen2Model(const ModelConfig& config, std::unique_ptr<Backend<T>> backend);
  ~Qwen2Model();

  const ModelConfig& config() const { return cfg_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  size_t num_params() const { return num_params_; }
  Backend<T>& backend() { return *be_; }

  // The flat buffers, in the backend's memory. Gradients and moments are allocated on first use
  // (an inference-only model never pays for them).
  T* params() { return params_.get(); }
  std::shared_ptr<T> params_storage() { return params_; }
  std::shared_ptr<T> grads_storage();
  std::shared_ptr<T> m_storage();
  std::shared_ptr<T> v_storage();
  // Copies n elements from `offset` of a flat buffer to host memory, or from host memory into it.
  enum class Buffer { params, grads, m, v };
  void read(Buffer which, size_t offset, size_t n, T* host);
  void write(Buffer which, size_t offset, size_t n, const T* host);

  // Teacher-forced pass over tokens [batch, seq_len]: logp[r] = log p(targets[r] | tokens up to r)
  // (0 where targets[r] < 0). Returns loss = -sum_r weights[r] * logp[r]; with backward, adds
  // d(loss)/d(params) to the gradients (so micro-batches accumulate).
  double forward_backward(const int32_t* tokens, const int32_t* targets, const float* weights, int batch, int seq_len, T* logp,
                          bool backward);
  // The same pass through the policy-gradient head (Backend::token_loss): log-probs under
  // softmax(logits / temperature), over each position's mask where `masks` gives one,
  // per-position entropies (where entropy is not null) and an entropy term
  // -sum entropy_weights[r] * entropy[r] in the loss (where entropy_weights is not null).
  double forward_backward_policy(const int32_t* tokens, const int32_t* targets, const float* weights, const float* entropy_weights,
                                 double temperature, const PolicyMasks& masks, int batch, int seq_len, T* logp, T* entropy, bool backward);
  // Logits at every position: out is [batch, seq_len, vocab].
  void logits(const int32_t* tokens, int batch, int seq_len, T* out);

  void zero_grad();
  double grad_norm();
  // One AdamW step over every tensor (weight decay only where TensorInfo::decay).
  void adamw_step(const AdamWArgs& args);

  KvCache<T> new_cache(int batch, int max_len);
  // Runs `rows` new tokens through the model with a KV cache: row r is token tokens[r] of cache
  // sequence seq[r] at position pos[r] (its keys/values are stored there). Rows of one sequence
  // come in position order, and positions before them must already be cached. Writes the logits of
  // the rows listed in out_rows to out [n_out, vocab], in the backend's memory (the other arrays
  // are host arrays).
  void forward_cached(KvCache<T>& cache, const int32_t* tokens, const int32_t* seq, const int32_t* pos, int rows, const int32_t* out_rows,
                      int n_out, T* out);

 private:
  struct Layer {
    size_t ln1, wqkv, bqkv, wo, ln2, wgu, wd;  // offsets
  };
  struct Activations;
  // Backend memory for a host input or output (reused between calls; grows as needed).
  struct Staged {
    std::shared_ptr<void> buf;
    size_t bytes = 0;
  };

  // A host array as the kernels may read it: itself on a host-memory backend, else a copy in
  // `slot`. Null stays null.
  template <typename X>
  const X* stage(const X* host, size_t n, Staged& slot);
  // Where kernels write n results meant for `host`: itself on a host-memory backend, else `slot`;
  // fetch() then brings them to `host`.
  template <typename X>
  X* output(X* host, size_t n, Staged& slot);
  template <typename X>
  void fetch(X* host, const X* out, size_t n);
  std::shared_ptr<T>& buffer(Buffer which);

  double pass(const int32_t* tokens, const int32_t* targets, const float* weights, const float* entropy_weights, double temperature,
              const PolicyMasks& masks, int batch, int seq_len, T* logp, T* entropy, bool backward, bool policy_head);
  void check_masks(const PolicyMasks& masks, const int32_t* targets, int n) const;
  void check_tokens(const int32_t* tokens, size_t n, const char* what) const;
  void ensure_rope(int max_pos);
  Activations& activations(int rows, bool training);
  void layer_forward(int l, Activations& a, const T* x, T* out, int rows, const int32_t* pos, const AttentionArgs<T>& attn_shape,
                     KvCache<T>* cache, const int32_t* seq);

  ModelConfig cfg_;
  std::unique_ptr<Backend<T>> be_;
  std::vector<TensorInfo> tensors_;
  std::vector<Layer> layers_;
  size_t embed_ = 0, norm_ = 0, lm_head_ = 0;
  size_t num_params_ = 0;
  int qkv_dim_ = 0;  // (heads + 2 * kv_heads) * head_dim
  std::shared_ptr<T> params_, grads_, m_, v_;
  std::shared_ptr<T> rope_cos_, rope_sin_;  // [position, head_dim / 2], backend memory
  int rope_len_ = 0;
  Staged in_tokens_, in_targets_, in_weights_, in_entropy_weights_, in_seq_, in_pos_, in_rows_, in_mask_rows_, in_mask_tokens_, out_logp_,
      out_entropy_, out_logits_;
  std::unique_ptr<Activations> train_acts_, infer_acts_;
};

}  // namespace sw

// A Qwen2-family decoder: token embedding, pre-norm blocks of grouped-query attention (rotary
// positions, optional q/k/v bias) and a SwiGLU MLP, a final RMSNorm and a tied or untied LM head.
//
// Parameters live in one contiguous buffer in a fixed order (tensors() names each slice with its
// Hugging Face name); gradients and the AdamW moments use the same layout, so one offset finds a
// tensor in all four. q/k/v weights are adjacent (one [q+k+v, hidden] matrix, one GEMM) and so are
// gate/up. All arithmetic goes through a Backend, and every buffer lives in its memory: the
// methods below take host arrays and stage them (in place when the backend's memory is the host's).
//
// A LoRA adapter (lora.h) may be attached: every pass then adds its low-rank terms to the linear
// layers it targets, and a training pass computes the gradients of the adapter's tensors only
// (the base model is frozen: it gets no gradients and needs no AdamW moments).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "lora.h"
#include "param_buffers.h"

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

// The policy head's masks as a caller gives them, in host memory: rows [batch * seq_len * 2], each
// position's (offset, length) in tokens [num_tokens] (TokenMasks in backend.h says what they
// mean). Positions may share a list. Null rows: no mask.
struct PolicyMasks {
  const int32_t* rows = nullptr;
  const int32_t* tokens = nullptr;
  size_t num_tokens = 0;
};

// Soft tokens (SofT-GRPO, docs/soft-grpo.md), in host memory. Row r's entries are
// k in [offsets[r], offsets[r + 1]) (offsets has rows + 1 values; a row with none is a plain token).
//
// Inputs: such a row's input is the mixture sum_k weights[k] * embed[ids[k]] instead of its
// token's embedding (the token is then only a placeholder). A backward pass sends the gradient
// into the embedding through the mixture (embed[i] gets weights[k] * d(loss)/d(input)) and,
// where asked, returns d(loss)/d(weights). The trainer treats the weights as constants: they are
// softmax(q' / tau) of the recorded noised logits q', part of the sampled action, as recorded
// tokens are, so no gradient flows back to the logits that made them (the reference
// implementation detaches them too); the policy gradient reaches those logits through the
// Gumbel head below instead.
struct SoftInputs {
  const int32_t* offsets = nullptr;
  const int32_t* ids = nullptr;
  const float* weights = nullptr;
};
// Targets: such a row's output was a soft token, drawn as q' = lp + g over its top-p support ids
// (g independent standard Gumbel); it is scored by the Gumbel head (Backend::gumbel_loss) with
// noised[k] = q'_k, and its discrete target must be -1. logp[r] is then the mean Gumbel
// log-density of the recorded noise, the log-likelihood whose ratio SofT-GRPO clips.
struct SoftTargets {
  const int32_t* offsets = nullptr;
  const int32_t* ids = nullptr;
  const float* noised = nullptr;
};
struct SoftPass {
  SoftInputs inputs;
  SoftTargets targets;
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
  const std::vector<TensorInfo>& tensors() const { return buf_->tensors(); }
  size_t num_params() const { return buf_->size(); }
  Backend<T>& backend() { return *be_; }

  // The flat buffers (ParamBuffers), in the backend's memory. Gradients and moments are
  // allocated on first use (an inference-only model never pays for them).
  using Buffer = typename ParamBuffers<T>::Buffer;
  ParamBuffers<T>& buffers() { return *buf_; }
  T* params() { return buf_->params(); }

  // The adapter every pass runs with from now on (null: the base model alone). It must have been
  // made for this model (new_adapter).
  void set_adapter(std::shared_ptr<LoraAdapter<T>> adapter);
  const std::shared_ptr<LoraAdapter<T>>& adapter() const { return lora_; }
  std::shared_ptr<LoraAdapter<T>> new_adapter(const LoraSpec& spec);

  // Teacher-forced pass over tokens [batch, seq_len]: logp[r] = log p(targets[r] | tokens up to r)
  // (0 where targets[r] < 0). Returns loss = -sum_r weights[r] * logp[r]; with backward, adds
  // d(loss)/d(params) to the gradients (so micro-batches accumulate): the adapter's gradients when
  // one is attached. A dropout seed makes it a training pass of the adapter: its dropout draws
  // from that seed (see Backend::dropout); without one, no dropout.
  double forward_backward(const int32_t* tokens, const int32_t* targets, const float* weights, int batch, int seq_len, T* logp,
                          bool backward, std::optional<uint64_t> dropout_seed = std::nullopt);
  // The same pass through the policy-gradient head (Backend::token_loss): log-probs under
  // softmax(logits / temperature), over each position's mask where `masks` gives one,
  // per-position entropies (where entropy is not null) and an entropy term
  // -sum entropy_weights[r] * entropy[r] in the loss (where entropy_weights is not null).
  // `soft` adds soft-token inputs and targets (SoftInputs, SoftTargets); with backward and
  // mix_grads (one value per entry of soft.inputs.ids), d(loss)/d(the mixtures' weights).
  double forward_backward_policy(const int32_t* tokens, const int32_t* targets, const float* weights, const float* entropy_weights,
                                 double temperature, const PolicyMasks& masks, int batch, int seq_len, T* logp, T* entropy, bool backward,
                                 std::optional<uint64_t> dropout_seed = std::nullopt, const SoftPass& soft = {}, T* mix_grads = nullptr);
  // Logits at every position: out is [batch, seq_len, vocab].
  void logits(const int32_t* tokens, int batch, int seq_len, T* out);

  // Activation checkpointing: a training pass keeps only each layer's input and recomputes the
  // layer's forward pass (into one shared set of buffers) just before its backward: one more
  // forward pass of compute, and a layer keeps 3.6 KB a token instead of 81 KB at the
  // Qwen2.5-0.5B shape, for long sequences. The kernels are deterministic, so results are the
  // same bits either way.
  void set_activation_checkpointing(bool on) { recompute_ = on; }
  bool activation_checkpointing() const { return recompute_; }
  // The bytes the last training pass's activations hold (0 before one): what checkpointing saves.
  size_t training_activation_bytes() const;

  void zero_grad() { buf_->zero_grad(); }
  double grad_norm() { return buf_->grad_norm(); }
  // One AdamW step over every tensor (weight decay only where TensorInfo::decay).
  void adamw_step(const AdamWArgs& args) { buf_->adamw_step(args); }

  KvCache<T> new_cache(int batch, int max_len);
  // Runs `rows` new tokens through the model with a KV cache: row r is token tokens[r] of cache
  // sequence seq[r] at position pos[r] (its keys/values are stored there). Rows of one sequence
  // come in position order, and positions before them must already be cached. Writes the logits of
  // the rows listed in out_rows to out [n_out, vocab], in the backend's memory (the other arrays
  // are host arrays).
  // `soft` (SoftInputs over the rows) makes some rows' inputs mixtures of embeddings.
  void forward_cached(KvCache<T>& cache, const int32_t* tokens, const int32_t* seq, const int32_t* pos, int rows, const int32_t* out_rows,
                      int n_out, T* out, const SoftInputs& soft = {});

 private:
  struct Layer {
    size_t ln1, wqkv, bqkv, wo, ln2, wgu, wd;  // offsets
  };
  struct Activations;
  struct LoraWork;
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
              const PolicyMasks& masks, int batch, int seq_len, T* logp, T* entropy, bool backward, bool policy_head,
              std::optional<uint64_t> dropout_seed, const SoftPass& soft, T* mix_grads);
  // Every row's input as a mixture (a token is its own one-hot row), checked: what the mixture
  // kernels take when some rows are soft. `map[k]` is the caller's entry of merged entry k (-1: a token).
  struct Mixture {
    std::vector<int32_t> offsets, ids, map;
    std::vector<float> weights;
  };
  Mixture mixture(const int32_t* tokens, const SoftInputs& soft, int rows) const;
  void check_soft_targets(const SoftTargets& t, const int32_t* targets, int rows) const;
  // The Gumbel head over the rows with soft targets (after the token head): their log-densities
  // into logp, and with backward their gradients into dhf and the LM head's gradient G.
  double gumbel_head(const SoftTargets& t, const float* weights, double temperature, int rows, const T* hf, T* dhf, T* G, T* logp, bool backward);
  void check_masks(const PolicyMasks& masks, const int32_t* targets, int n) const;
  void check_tokens(const int32_t* tokens, size_t n, const char* what) const;
  void ensure_rope(int max_pos);
  Activations& activations(int rows, bool training);
  void layer_forward(int l, Activations& a, const T* x, T* out, int rows, const int32_t* pos, const AttentionArgs<T>& attn_shape,
                     KvCache<T>* cache, const int32_t* seq);
  // The attached adapter's work space for `rows` rows (training: the products A x of every
  // layer, kept for the backward pass).
  LoraWork& lora_work(int rows, bool training);
  // y[rows, out] (rows ld_y apart) += scale * dropout(x)[rows, in] A^T B^T for `target` of layer l,
  // when the attached adapter has that target.
  void lora_forward(int l, int target, const T* x, int rows, T* y, int64_t ld_y, bool training);
  // Its backward: d(A), d(B) accumulate into the adapter's gradients, and dx[rows, in] +=
  // d(loss)/d(x) through the adapter (dy: d(loss)/d(y), rows ld_dy apart).
  void lora_backward(int l, int target, const T* x, const T* dy, int64_t ld_dy, T* dx, int rows);
  uint64_t lora_dropout_seed(int l, int target) const;

  ModelConfig cfg_;
  std::unique_ptr<Backend<T>> be_;
  std::vector<Layer> layers_;
  size_t embed_ = 0, norm_ = 0, lm_head_ = 0;
  int qkv_dim_ = 0;  // (heads + 2 * kv_heads) * head_dim
  std::unique_ptr<ParamBuffers<T>> buf_;
  std::shared_ptr<LoraAdapter<T>> lora_;
  std::optional<uint64_t> lora_dropout_seed_;  // set during a training pass with dropout
  std::unique_ptr<LoraWork> lora_train_work_, lora_infer_work_;
  std::shared_ptr<T> rope_cos_, rope_sin_;  // [position, head_dim / 2], backend memory
  int rope_len_ = 0;
  Staged in_tokens_, in_targets_, in_weights_, in_entropy_weights_, in_seq_, in_pos_, in_rows_, in_mask_rows_, in_mask_tokens_, in_mix_offsets_, in_mix_ids_, in_mix_weights_, in_soft_rows_,
      in_soft_offsets_, in_soft_ids_, in_soft_noised_, in_soft_weights_, out_logp_, out_soft_, out_mix_grads_,
      out_entropy_, out_logits_;
  std::unique_ptr<Activations> train_acts_, infer_acts_;
  bool recompute_ = false;  // activation checkpointing
  std::shared_ptr<T> soft_rows_, soft_grads_;  // [capacity, hidden]: the Gumbel head's gathered rows and their gradients
  int soft_capacity_ = 0;
};

}  // namespace sw

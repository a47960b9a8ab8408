#include "model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sw {

void ModelConfig::validate() const {
  auto positive = [](int v, const char* name) {
    if (v <= 0) throw std::invalid_argument(std::string(name) + " must be a positive integer (got " + std::to_string(v) + ")");
  };
  positive(vocab_size, "vocab_size");
  positive(hidden_size, "hidden_size");
  positive(num_layers, "num_hidden_layers");
  positive(num_heads, "num_attention_heads");
  positive(num_kv_heads, "num_key_value_heads");
  positive(head_dim, "head_dim");
  positive(intermediate_size, "intermediate_size");
  positive(max_position, "max_position_embeddings");
  if (num_heads % num_kv_heads != 0)
    throw std::invalid_argument("num_attention_heads (" + std::to_string(num_heads) + ") must be a multiple of num_key_value_heads (" +
                                std::to_string(num_kv_heads) + ")");
  if (head_dim % 2 != 0) throw std::invalid_argument("head_dim must be even for rotary embeddings (got " + std::to_string(head_dim) + ")");
  if (!(rms_norm_eps > 0)) throw std::invalid_argument("rms_norm_eps must be positive");
  if (!(rope_theta > 0)) throw std::invalid_argument("rope_theta must be positive");
}

template <typename T>
struct Qwen2Model<T>::Activations {
  int capacity = 0;
  int sets = 0;  // per-layer activation sets: every layer's (training), or one (inference, checkpointing)
  size_t bytes = 0;  // what the buffers below hold
  std::vector<int32_t> pos, seq;
  // Training keeps every layer's activations for the backward pass (with checkpointing only every
  // layer's input x, and one set the backward pass recomputes each layer into); inference keeps
  // one set and two residual buffers it alternates between.
  std::vector<std::shared_ptr<T>> x, h1, rstd1, qkv, att, lse, xmid, h2, rstd2, gu, act;
  std::shared_ptr<T> hf, rstdf, logits;
  std::shared_ptr<T> dx, dh, dqkv, datt, dgu, dact, dhf;
  int logit_rows = 0;
};

// The attached adapter's work space (see lora_work).
template <typename T>
struct Qwen2Model<T>::LoraWork {
  int capacity = 0, rank = 0, max_in = 0;
  uint32_t targets = 0;
  bool dropout = false;
  // u = dropout(x) A^T, [rows, rank]: one per (layer, target) in training, kept for the backward
  // pass ([layer * kLoraTargets + target]); one in inference.
  std::vector<std::shared_ptr<T>> u;
  std::shared_ptr<T> xd;   // [rows, max_in] dropout(x) (training with dropout)
  std::shared_ptr<T> dxd;  // [rows, max_in] d(loss)/d(dropout(x)) (training with dropout)
  std::shared_ptr<T> g;    // [rows, rank] scale * dy B (training)
};

template <typename T>
Qwen2Model<T>::Qwen2Model(const ModelConfig& config, std::unique_ptr<Backend<T>> backend) : cfg_(config), be_(std::move(backend)) {
  cfg_.validate();
  const int64_t C = cfg_.hidden_size, V = cfg_.vocab_size, F = cfg_.intermediate_size, hd = cfg_.head_dim;
  const int64_t H = cfg_.num_heads, KV = cfg_.num_kv_heads;
  qkv_dim_ = static_cast<int>((H + 2 * KV) * hd);
  size_t off = 0;
  std::vector<TensorInfo> tensors;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, bool decay) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    tensors.push_back({name, std::move(shape), off, n, decay});
    off += n;
    return off - n;
  };
  embed_ = add("model.embed_tokens.weight", {V, C}, true);
  for (int l = 0; l < cfg_.num_layers; l++) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    Layer L{};
    L.ln1 = add(p + "input_layernorm.weight", {C}, false);
    // q, k, v weights back to back form one [(H + 2 KV) hd, C] matrix; the biases one vector.
    L.wqkv = add(p + "self_attn.q_proj.weight", {H * hd, C}, true);
    add(p + "self_attn.k_proj.weight", {KV * hd, C}, true);
    add(p + "self_attn.v_proj.weight", {KV * hd, C}, true);
    L.bqkv = 0;
    if (cfg_.attention_bias) {
      L.bqkv = add(p + "self_attn.q_proj.bias", {H * hd}, false);
      add(p + "self_attn.k_proj.bias", {KV * hd}, false);
      add(p + "self_attn.v_proj.bias", {KV * hd}, false);
    }
    L.wo = add(p + "self_attn.o_proj.weight", {C, H * hd}, true);
    L.ln2 = add(p + "post_attention_layernorm.weight", {C}, false);
    // gate and up back to back: one [2F, C] matrix.
    L.wgu = add(p + "mlp.gate_proj.weight", {F, C}, true);
    add(p + "mlp.up_proj.weight", {F, C}, true);
    L.wd = add(p + "mlp.down_proj.weight", {C, F}, true);
    layers_.push_back(L);
  }
  norm_ = add("model.norm.weight", {C}, false);
  lm_head_ = cfg_.tie_word_embeddings ? embed_ : add("lm_head.weight", {V, C}, true);
  buf_ = std::make_unique<ParamBuffers<T>>(*be_, std::move(tensors), "the model");
  be_->set_parameters(buf_->params(), buf_->size());
}

template <typename T>
Qwen2Model<T>::~Qwen2Model() = default;

template <typename T>
template <typename X>
const X* Qwen2Model<T>::stage(const X* host, size_t n, Staged& slot) {
  if (!host || be_->host_memory()) return host;
  const size_t bytes = n * sizeof(X);
  if (slot.bytes < bytes) {
    slot.buf.reset();
    slot.buf = be_->alloc_bytes(bytes);
    slot.bytes = bytes;
  }
  be_->upload(slot.buf.get(), host, bytes);
  return static_cast<const X*>(slot.buf.get());
}

template <typename T>
template <typename X>
X* Qwen2Model<T>::output(X* host, size_t n, Staged& slot) {
  if (!host || be_->host_memory()) return host;
  const size_t bytes = n * sizeof(X);
  if (slot.bytes < bytes) {
    slot.buf.reset();
    be_->check_fits(bytes, "an output buffer");
    slot.buf = be_->alloc_bytes(bytes);
    slot.bytes = bytes;
  }
  return static_cast<X*>(slot.buf.get());
}

template <typename T>
template <typename X>
void Qwen2Model<T>::fetch(X* host, const X* out, size_t n) {
  if (host && host != out) be_->download(host, out, n * sizeof(X));
}

template <typename T>
void Qwen2Model<T>::check_tokens(const int32_t* tokens, size_t n, const char* what) const {
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= cfg_.vocab_size)
      throw std::out_of_range(std::string(what) + " id " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                              " is outside the vocabulary [0, " + std::to_string(cfg_.vocab_size) + ")");
}

// Rotary tables computed as Hugging Face computes them (in the model's precision):
// inv_freq[i] = 1 / theta^(2i / head_dim), angle = position * inv_freq[i].
template <typename T>
void Qwen2Model<T>::ensure_rope(int max_pos) {
  if (max_pos <= rope_len_) return;
  const int half = cfg_.head_dim / 2;
  const int n = std::max(max_pos, std::min(cfg_.max_position, std::max(2 * rope_len_, 256)));
  const size_t size = static_cast<size_t>(n) * half;
  std::vector<T> cos(size), sin(size);
  for (int i = 0; i < half; i++) {
    const T inv = T(1) / std::pow(static_cast<T>(cfg_.rope_theta), static_cast<T>(2 * i) / static_cast<T>(cfg_.head_dim));
    for (int p = 0; p < n; p++) {
      const T angle = static_cast<T>(p) * inv;
      cos[static_cast<size_t>(p) * half + i] = std::cos(angle);
      sin[static_cast<size_t>(p) * half + i] = std::sin(angle);
    }
  }
  rope_cos_ = be_->alloc(size);
  rope_sin_ = be_->alloc(size);
  be_->upload(rope_cos_.get(), cos.data(), size * sizeof(T));
  be_->upload(rope_sin_.get(), sin.data(), size * sizeof(T));
  rope_len_ = n;
}

template <typename T>
typename Qwen2Model<T>::Activations& Qwen2Model<T>::activations(int rows, bool training) {
  std::unique_ptr<Activations>& slot = training ? train_acts_ : infer_acts_;
  const int sets = training && !recompute_ ? cfg_.num_layers : 1;
  if (slot && slot->capacity >= rows && slot->sets == sets) return *slot;
  slot.reset();  // free the old buffers before allocating larger ones
  auto a = std::make_unique<Activations>();
  const size_t N = rows, C = cfg_.hidden_size, F = cfg_.intermediate_size, H = cfg_.num_heads, hd = cfg_.head_dim;
  const size_t QKV = qkv_dim_;
  a->capacity = rows;
  a->sets = sets;
  a->pos.resize(N);
  a->seq.resize(N);
  // Logits are computed a block of rows at a time so that a 150k vocabulary stays affordable.
  a->logit_rows = static_cast<int>(std::max<size_t>(std::min<size_t>(N, 64), std::min<size_t>(N, be_->logit_budget() / cfg_.vocab_size)));
  // The same list twice: first counted (to fail before allocating anything), then allocated.
  for (bool count : {true, false}) {
    size_t total = 0;
    auto take = [&](std::vector<std::shared_ptr<T>>* list, std::shared_ptr<T>* one, size_t n) {
      total += n;
      if (count) return;
      if (list) list->push_back(be_->alloc(n));
      else *one = be_->alloc(n);
    };
    for (int i = 0; i < (training ? cfg_.num_layers + 1 : 2); i++) take(&a->x, nullptr, N * C);
    for (int l = 0; l < sets; l++) {
      take(&a->h1, nullptr, N * C);
      take(&a->rstd1, nullptr, N);
      take(&a->qkv, nullptr, N * QKV);
      take(&a->att, nullptr, N * H * hd);
      take(&a->lse, nullptr, N * H);
      take(&a->xmid, nullptr, N * C);
      take(&a->h2, nullptr, N * C);
      take(&a->rstd2, nullptr, N);
      take(&a->gu, nullptr, N * 2 * F);
      take(&a->act, nullptr, N * F);
    }
    take(nullptr, &a->hf, N * C);
    take(nullptr, &a->rstdf, N);
    if (training) {
      take(nullptr, &a->logits, static_cast<size_t>(a->logit_rows) * cfg_.vocab_size);
      take(nullptr, &a->dx, N * C);
      take(nullptr, &a->dh, N * C);
      take(nullptr, &a->dqkv, N * QKV);
      take(nullptr, &a->datt, N * H * hd);
      take(nullptr, &a->dgu, N * 2 * F);
      take(nullptr, &a->dact, N * F);
      take(nullptr, &a->dhf, N * C);
    }
    if (count)
      be_->check_fits(total * sizeof(T), std::string(training ? "the training activations" : "the inference activations") + " of " +
                                             std::to_string(rows) + " tokens");
    a->bytes = total * sizeof(T);
  }
  slot = std::move(a);
  return *slot;
}

template <typename T>
size_t Qwen2Model<T>::training_activation_bytes() const {
  return train_acts_ ? train_acts_->bytes : 0;
}

template <typename T>
std::shared_ptr<LoraAdapter<T>> Qwen2Model<T>::new_adapter(const LoraSpec& spec) {
  return std::make_shared<LoraAdapter<T>>(cfg_, spec, *be_);
}

template <typename T>
void Qwen2Model<T>::set_adapter(std::shared_ptr<LoraAdapter<T>> adapter) {
  if (adapter && (adapter->backend() != be_.get() || adapter->num_layers() != cfg_.num_layers))
    throw std::invalid_argument("the LoRA adapter was made for another model");
  lora_ = std::move(adapter);
}

template <typename T>
typename Qwen2Model<T>::LoraWork& Qwen2Model<T>::lora_work(int rows, bool training) {
  std::unique_ptr<LoraWork>& slot = training ? lora_train_work_ : lora_infer_work_;
  const LoraSpec& spec = lora_->spec();
  const bool dropout = training && spec.dropout > 0;
  if (slot && slot->capacity >= rows && slot->rank == spec.rank && slot->max_in == lora_->max_in() && slot->targets == spec.targets &&
      slot->dropout == dropout)
    return *slot;
  slot.reset();
  auto w = std::make_unique<LoraWork>();
  w->capacity = rows;
  w->rank = spec.rank;
  w->max_in = lora_->max_in();
  w->targets = spec.targets;
  w->dropout = dropout;
  const size_t N = rows, r = spec.rank, in = w->max_in;
  const size_t slots = training ? static_cast<size_t>(cfg_.num_layers) * kLoraTargets : 1;
  size_t total = (training ? N * r : 0) + (dropout ? 2 * N * in : 0);
  for (size_t i = 0; i < slots; i++)
    if (!training || lora_->has(static_cast<int>(i % kLoraTargets))) total += N * r;
  be_->check_fits(total * sizeof(T), "the LoRA adapter's work space for " + std::to_string(rows) + " tokens");
  w->u.resize(slots);
  for (size_t i = 0; i < slots; i++)
    if (!training || lora_->has(static_cast<int>(i % kLoraTargets))) w->u[i] = be_->alloc(N * r);
  if (training) w->g = be_->alloc(N * r);
  if (dropout) {
    w->xd = be_->alloc(N * in);
    w->dxd = be_->alloc(N * in);
  }
  slot = std::move(w);
  return *slot;
}

// Each (layer, target) draws its own dropout mask, as each of PEFT's LoRA modules has its own
// nn.Dropout.
template <typename T>
uint64_t Qwen2Model<T>::lora_dropout_seed(int l, int target) const {
  return dropout_mix64(*lora_dropout_seed_ + 0x632be59bd9b4e019ULL * static_cast<uint64_t>(l * kLoraTargets + target + 1));
}

template <typename T>
void Qwen2Model<T>::lora_forward(int l, int target, const T* x, int rows, T* y, int64_t ld_y, bool training) {
  if (!lora_ || !lora_->has(target)) return;
  Backend<T>& be = *be_;
  const LoraSpec& spec = lora_->spec();
  const auto& s = lora_->slot(l, target);
  const int r = spec.rank;
  LoraWork& w = lora_work(rows, training);
  const T* A = lora_->buffers().params() + s.a;  // [r, in]
  const T* B = lora_->buffers().params() + s.b;  // [out, r]
  const T* xd = x;                                // [rows, in]
  if (training && spec.dropout > 0 && lora_dropout_seed_) {
    be.dropout(w.xd.get(), x, static_cast<size_t>(rows) * s.in, spec.dropout, lora_dropout_seed(l, target));
    xd = w.xd.get();
  }
  T* u = w.u[training ? static_cast<size_t>(l) * kLoraTargets + target : 0].get();  // [rows, r]
  be.gemm(false, true, rows, r, s.in, T(1), xd, s.in, A, s.in, T(0), u, r);
  be.gemm(false, true, rows, s.out, r, static_cast<T>(spec.scale), u, r, B, r, T(1), y, ld_y);
}

template <typename T>
void Qwen2Model<T>::lora_backward(int l, int target, const T* x, const T* dy, int64_t ld_dy, T* dx, int rows) {
  if (!lora_ || !lora_->has(target)) return;
  Backend<T>& be = *be_;
  const LoraSpec& spec = lora_->spec();
  const auto& s = lora_->slot(l, target);
  const int r = spec.rank;
  const T scale = static_cast<T>(spec.scale);
  LoraWork& w = lora_work(rows, true);
  T* P = lora_->buffers().params();
  T* G = lora_->buffers().storage(Buffer::grads).get();
  const T* u = w.u[static_cast<size_t>(l) * kLoraTargets + target].get();  // [rows, r], the forward's dropout(x) A^T
  T* g = w.g.get();                                                        // [rows, r]
  const bool dropout = spec.dropout > 0 && lora_dropout_seed_;
  // dB[out, r] += scale * dy^T u
  be.gemm(true, false, s.out, r, rows, scale, dy, ld_dy, u, r, T(1), G + s.b, r);
  // g = scale * dy B
  be.gemm(false, false, rows, r, s.out, scale, dy, ld_dy, P + s.b, r, T(0), g, r);
  // dA[r, in] += g^T dropout(x): the same mask as the forward pass (same seed), drawn again.
  const T* xd = x;
  if (dropout) {
    be.dropout(w.xd.get(), x, static_cast<size_t>(rows) * s.in, spec.dropout, lora_dropout_seed(l, target));
    xd = w.xd.get();
  }
  be.gemm(true, false, r, s.in, rows, T(1), g, r, xd, s.in, T(1), G + s.a, s.in);
  // dx[rows, in] += dropout'(g A): dropout is linear in its input, so its backward is itself.
  if (!dropout) {
    be.gemm(false, false, rows, s.in, r, T(1), g, r, P + s.a, s.in, T(1), dx, s.in);
    return;
  }
  T* dxd = w.dxd.get();  // [rows, in]
  be.gemm(false, false, rows, s.in, r, T(1), g, r, P + s.a, s.in, T(0), dxd, s.in);
  be.dropout(dxd, dxd, static_cast<size_t>(rows) * s.in, spec.dropout, lora_dropout_seed(l, target));
  be.add(dx, dxd, static_cast<size_t>(rows) * s.in);
}

template <typename T>
void Qwen2Model<T>::layer_forward(int l, Activations& a, const T* x, T* out, int rows, const int32_t* pos, const AttentionArgs<T>& shape,
                                  KvCache<T>* cache, const int32_t* seq) {
  Backend<T>& be = *be_;
  const Layer& L = layers_[l];
  const int s = cache || recompute_ ? 0 : l;  // which activation set
  const int C = cfg_.hidden_size, F = cfg_.intermediate_size, H = cfg_.num_heads, KV = cfg_.num_kv_heads, hd = cfg_.head_dim;
  const int QKV = qkv_dim_;
  T* P = params();
  T* h1 = a.h1[s].get();
  T* qkv = a.qkv[s].get();
  T* att = a.att[s].get();
  T* xmid = a.xmid[s].get();
  T* h2 = a.h2[s].get();
  T* gu = a.gu[s].get();
  T* act = a.act[s].get();

  const bool training = !cache;

  be.rmsnorm_forward(h1, a.rstd1[s].get(), x, P + L.ln1, rows, C, cfg_.rms_norm_eps);
  be.gemm(false, true, rows, QKV, C, T(1), h1, C, P + L.wqkv, C, T(0), qkv, QKV);
  lora_forward(l, q_proj, h1, rows, qkv, QKV, training);
  lora_forward(l, k_proj, h1, rows, qkv + static_cast<int64_t>(H) * hd, QKV, training);
  lora_forward(l, v_proj, h1, rows, qkv + static_cast<int64_t>(H + KV) * hd, QKV, training);
  if (cfg_.attention_bias) be.add_bias(qkv, QKV, P + L.bqkv, rows, QKV);
  be.rope(qkv, QKV, pos, rows, H, hd, rope_cos_.get(), rope_sin_.get(), false);
  be.rope(qkv + static_cast<int64_t>(H) * hd, QKV, pos, rows, KV, hd, rope_cos_.get(), rope_sin_.get(), false);

  AttentionArgs<T> at = shape;
  at.q = qkv;
  at.out = att;
  at.lse = a.lse[s].get();
  if (cache) {
    const int64_t kvd = static_cast<int64_t>(KV) * hd;
    const int64_t layer = static_cast<int64_t>(l) * cache->batch * cache->max_len * kvd;
    T* ck = cache->k.get() + layer;
    T* cv = cache->v.get() + layer;
    be.cache_store(ck, cv, qkv, QKV, static_cast<int64_t>(H) * hd, static_cast<int64_t>(H + KV) * hd, static_cast<int>(kvd), seq, pos, rows,
                   cache->max_len * kvd);
    at.k = ck;
    at.v = cv;
  } else {
    at.k = qkv + static_cast<int64_t>(H) * hd;
    at.v = qkv + static_cast<int64_t>(H + KV) * hd;
  }
  be.attention_forward(at);

  be.copy(xmid, x, static_cast<size_t>(rows) * C);
  be.gemm(false, true, rows, C, H * hd, T(1), att, H * hd, P + L.wo, H * hd, T(1), xmid, C);
  lora_forward(l, o_proj, att, rows, xmid, C, training);
  be.rmsnorm_forward(h2, a.rstd2[s].get(), xmid, P + L.ln2, rows, C, cfg_.rms_norm_eps);
  be.gemm(false, true, rows, 2 * F, C, T(1), h2, C, P + L.wgu, C, T(0), gu, 2 * F);
  lora_forward(l, gate_proj, h2, rows, gu, 2 * F, training);
  lora_forward(l, up_proj, h2, rows, gu + F, 2 * F, training);
  be.swiglu_forward(act, gu, rows, F);
  be.copy(out, xmid, static_cast<size_t>(rows) * C);
  be.gemm(false, true, rows, C, F, T(1), act, F, P + L.wd, F, T(1), out, C);
  lora_forward(l, down_proj, act, rows, out, C, training);
}

template <typename T>
double Qwen2Model<T>::forward_backward(const int32_t* tokens, const int32_t* targets, const float* weights, int B, int S, T* logp,
                                       bool backward, std::optional<uint64_t> dropout_seed) {
  return pass(tokens, targets, weights, nullptr, 1.0, PolicyMasks{}, B, S, logp, nullptr, backward, false, dropout_seed, SoftPass{}, nullptr);
}

template <typename T>
double Qwen2Model<T>::forward_backward_policy(const int32_t* tokens, const int32_t* targets, const float* weights,
                                              const float* entropy_weights, double temperature, const PolicyMasks& masks, int B, int S,
                                              T* logp, T* entropy, bool backward, std::optional<uint64_t> dropout_seed, const SoftPass& soft,
                                              T* mix_grads) {
  if (!(temperature > 0) || !std::isfinite(temperature)) throw std::invalid_argument("temperature must be a positive number");
  return pass(tokens, targets, weights, entropy_weights, temperature, masks, B, S, logp, entropy, backward, true, dropout_seed, soft, mix_grads);
}

namespace {
// Checks soft rows' offsets ([rows + 1], from 0, never decreasing) and ids (in the vocabulary,
// distinct within a row); `what` names them in errors.
void check_soft_rows(const int32_t* offsets, const int32_t* ids, int rows, int vocab, const char* what) {
  if (offsets[0] != 0) throw std::invalid_argument(std::string(what) + ": offsets must start at 0");
  std::vector<int32_t> seen;
  for (int r = 0; r < rows; r++) {
    if (offsets[r + 1] < offsets[r])
      throw std::invalid_argument(std::string(what) + ": offsets decrease at position " + std::to_string(r));
    seen.assign(ids + offsets[r], ids + offsets[r + 1]);
    for (int32_t id : seen)
      if (id < 0 || id >= vocab)
        throw std::invalid_argument(std::string(what) + " of position " + std::to_string(r) + ": token " + std::to_string(id) + " is outside the vocabulary");
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
      throw std::invalid_argument(std::string(what) + " of position " + std::to_string(r) + " names a token twice");
  }
}
}  // namespace

template <typename T>
typename Qwen2Model<T>::Mixture Qwen2Model<T>::mixture(const int32_t* tokens, const SoftInputs& soft, int rows) const {
  check_soft_rows(soft.offsets, soft.ids, rows, cfg_.vocab_size, "soft input");
  Mixture m;
  m.offsets.reserve(rows + 1);
  m.offsets.push_back(0);
  for (int r = 0; r < rows; r++) {
    const int32_t k0 = soft.offsets[r], k1 = soft.offsets[r + 1];
    if (k0 == k1) {
      m.ids.push_back(tokens[r]);
      m.weights.push_back(1.0f);
      m.map.push_back(-1);
    }
    for (int32_t k = k0; k < k1; k++) {
      if (!std::isfinite(soft.weights[k])) throw std::invalid_argument("soft input of position " + std::to_string(r) + ": a weight is not finite");
      m.ids.push_back(soft.ids[k]);
      m.weights.push_back(soft.weights[k]);
      m.map.push_back(k);
    }
    m.offsets.push_back(static_cast<int32_t>(m.ids.size()));
  }
  return m;
}

template <typename T>
void Qwen2Model<T>::check_soft_targets(const SoftTargets& t, const int32_t* targets, int rows) const {
  check_soft_rows(t.offsets, t.ids, rows, cfg_.vocab_size, "soft target");
  for (int r = 0; r < rows; r++) {
    if (t.offsets[r + 1] == t.offsets[r]) continue;
    if (targets[r] >= 0)
      throw std::invalid_argument("position " + std::to_string(r) + " has both a soft target and a token target (" + std::to_string(targets[r]) + "): make the token -1");
    for (int32_t k = t.offsets[r]; k < t.offsets[r + 1]; k++)
      if (!std::isfinite(t.noised[k])) throw std::invalid_argument("soft target of position " + std::to_string(r) + ": a noised logit is not finite");
  }
}

template <typename T>
double Qwen2Model<T>::gumbel_head(const SoftTargets& t, const float* weights, double temperature, int N, const T* hf, T* dhf, T* G, T* logp,
                                  bool backward) {
  // The soft rows, with their entries rebased: row j's are [offsets[j], offsets[j + 1]).
  std::vector<int32_t> rows, offsets{0}, ids;
  std::vector<float> noised, wts;
  for (int r = 0; r < N; r++) {
    if (t.offsets[r + 1] == t.offsets[r]) continue;
    rows.push_back(r);
    ids.insert(ids.end(), t.ids + t.offsets[r], t.ids + t.offsets[r + 1]);
    noised.insert(noised.end(), t.noised + t.offsets[r], t.noised + t.offsets[r + 1]);
    offsets.push_back(static_cast<int32_t>(ids.size()));
    wts.push_back(weights ? weights[r] : 1.0f);
  }
  const int ns = static_cast<int>(rows.size());
  if (ns == 0) return 0;
  Backend<T>& be = *be_;
  const int C = cfg_.hidden_size, V = cfg_.vocab_size;
  Activations& a = *train_acts_;
  const int chunk = a.logit_rows;
  if (soft_capacity_ < chunk) {
    soft_rows_.reset();
    soft_grads_.reset();
    soft_rows_ = be.alloc(static_cast<size_t>(chunk) * C);
    soft_grads_ = be.alloc(static_cast<size_t>(chunk) * C);
    soft_capacity_ = chunk;
  }
  const int32_t* d_rows = stage(rows.data(), rows.size(), in_soft_rows_);
  const int32_t* d_offsets = stage(offsets.data(), offsets.size(), in_soft_offsets_);
  const int32_t* d_ids = stage(ids.data(), ids.size(), in_soft_ids_);
  const float* d_noised = stage(noised.data(), noised.size(), in_soft_noised_);
  const float* d_wts = stage(wts.data(), wts.size(), in_soft_weights_);
  std::vector<T> dens(ns);
  T* d_dens = output(dens.data(), ns, out_soft_);
  T* P = params();
  double loss = 0;
  for (int j0 = 0; j0 < ns; j0 += chunk) {
    const int rc = std::min(chunk, ns - j0);
    // Gather the rows' final hidden states (the embedding kernel with hf as the table), score them.
    T* h = soft_rows_.get();
    be.embedding_forward(h, d_rows + j0, hf, rc, C);
    T* z = a.logits.get();
    be.gemm(false, true, rc, V, C, T(1), h, C, P + lm_head_, C, T(0), z, V);
    const SoftEntries entries{d_offsets + j0, d_ids, offsets.data() + j0, ids.data()};
    loss += be.gumbel_loss(z, entries, d_noised, d_wts + j0, temperature, d_dens + j0, rc, V, backward);
    if (backward) {
      T* dh = soft_grads_.get();
      be.gemm(false, false, rc, C, V, T(1), z, V, P + lm_head_, C, T(0), dh, C);
      be.embedding_backward(dhf, d_rows + j0, dh, rc, C, N);  // dhf[rows[j]] += dh[j]
      if (G) be.gemm(true, false, V, C, rc, T(1), z, V, h, C, T(1), G + lm_head_, C);
    }
  }
  fetch(dens.data(), d_dens, ns);
  for (int j = 0; j < ns; j++) logp[rows[j]] = dens[j];
  return loss;
}

template <typename T>
void Qwen2Model<T>::check_masks(const PolicyMasks& masks, const int32_t* targets, int n) const {
  if (!masks.rows) return;
  const int V = cfg_.vocab_size;
  for (int r = 0; r < n; r++) {
    const int64_t off = masks.rows[2 * r], len = masks.rows[2 * r + 1];
    const std::string at = "mask of position " + std::to_string(r);
    if (off < 0 || len < 0 || static_cast<size_t>(off + len) > masks.num_tokens)
      throw std::invalid_argument(at + ": tokens [" + std::to_string(off) + ", " + std::to_string(off + len) + ") run past the " +
                                  std::to_string(masks.num_tokens) + " mask tokens");
    if (len == 0) continue;
    const int32_t* list = masks.tokens + off;
    for (int64_t k = 0; k < len; k++) {
      if (list[k] < 0 || list[k] >= V) throw std::invalid_argument(at + ": token " + std::to_string(list[k]) + " is outside the vocabulary");
      if (k > 0 && list[k] <= list[k - 1]) throw std::invalid_argument(at + ": its tokens must increase");
    }
    if (targets[r] >= 0 && !std::binary_search(list, list + len, targets[r]))
      throw std::invalid_argument(at + ": its target " + std::to_string(targets[r]) + " is not among its allowed tokens");
  }
}

template <typename T>
double Qwen2Model<T>::pass(const int32_t* tokens, const int32_t* targets, const float* weights, const float* entropy_weights,
                           double temperature, const PolicyMasks& masks, int B, int S, T* logp, T* entropy, bool backward, bool policy_head,
                           std::optional<uint64_t> dropout_seed, const SoftPass& soft, T* mix_grads) {
  if (B <= 0 || S <= 0) throw std::invalid_argument("batch and sequence length must be positive");
  if (S > cfg_.max_position)
    throw std::invalid_argument("sequence length " + std::to_string(S) + " exceeds max_position_embeddings " + std::to_string(cfg_.max_position));
  const int N = B * S;
  check_tokens(tokens, N, "token");
  for (int i = 0; i < N; i++)
    if (targets[i] >= cfg_.vocab_size)
      throw std::out_of_range("target id " + std::to_string(targets[i]) + " at index " + std::to_string(i) + " is outside the vocabulary [0, " +
                              std::to_string(cfg_.vocab_size) + ")");
  check_masks(masks, targets, N);
  const bool soft_out = soft.targets.offsets && soft.targets.offsets[N] > 0;
  if (soft.targets.offsets) check_soft_targets(soft.targets, targets, N);
  std::optional<Mixture> mix;
  if (soft.inputs.offsets) mix = mixture(tokens, soft.inputs, N);
  ensure_rope(S);
  Backend<T>& be = *be_;
  Activations& a = activations(N, true);
  const int C = cfg_.hidden_size, V = cfg_.vocab_size, F = cfg_.intermediate_size, H = cfg_.num_heads, KV = cfg_.num_kv_heads;
  const int hd = cfg_.head_dim, QKV = qkv_dim_, Lc = cfg_.num_layers;
  for (int r = 0; r < N; r++) {
    a.pos[r] = r % S;
    a.seq[r] = r / S;
  }
  const int32_t* pos = stage(a.pos.data(), N, in_pos_);
  const int32_t* tok = stage(tokens, N, in_tokens_);
  const int32_t* tgt = stage(targets, N, in_targets_);
  const float* wt = stage(weights, N, in_weights_);
  const float* ewt = stage(entropy_weights, N, in_entropy_weights_);
  const int32_t* mask_rows = stage(masks.rows, 2 * static_cast<size_t>(N), in_mask_rows_);
  const int32_t* mask_tokens = stage(masks.tokens, masks.num_tokens, in_mask_tokens_);
  T* lp = output(logp, N, out_logp_);
  T* ent = output(entropy, N, out_entropy_);
  T* P = params();

  AttentionArgs<T> shape;
  shape.rows = N;
  shape.heads = H;
  shape.kv_heads = KV;
  shape.head_dim = hd;
  shape.seq = stage(a.seq.data(), N, in_seq_);
  shape.pos = pos;
  shape.q_stride = QKV;
  shape.kv_seq_stride = static_cast<int64_t>(S) * QKV;
  shape.kv_pos_stride = QKV;
  shape.out_stride = static_cast<int64_t>(H) * hd;
  shape.dense_seq_len = S;

  // The adapter's dropout seed, for this pass only (cleared however it ends).
  struct SeedScope {
    std::optional<uint64_t>& slot;
    ~SeedScope() { slot.reset(); }
  } seed_scope{lora_dropout_seed_};
  lora_dropout_seed_ = lora_ ? dropout_seed : std::nullopt;

  SoftEntries mix_entries;
  const float* mix_weights = nullptr;
  if (mix) {
    mix_entries = {stage(mix->offsets.data(), mix->offsets.size(), in_mix_offsets_), stage(mix->ids.data(), mix->ids.size(), in_mix_ids_),
                   mix->offsets.data(), mix->ids.data()};
    mix_weights = stage(mix->weights.data(), mix->weights.size(), in_mix_weights_);
    be.embedding_mix_forward(a.x[0].get(), mix_entries, mix_weights, P + embed_, N, C);
  } else {
    be.embedding_forward(a.x[0].get(), tok, P + embed_, N, C);
  }
  for (int l = 0; l < Lc; l++) layer_forward(l, a, a.x[l].get(), a.x[l + 1].get(), N, pos, shape, nullptr, nullptr);
  T* hf = a.hf.get();
  be.rmsnorm_forward(hf, a.rstdf.get(), a.x[Lc].get(), P + norm_, N, C, cfg_.rms_norm_eps);

  // With an adapter attached the base model is frozen: G is null and its gradients are skipped.
  T* G = backward && !lora_ ? buf_->storage(Buffer::grads).get() : nullptr;
  if (backward && lora_) lora_->buffers().storage(Buffer::grads);
  double loss = 0;
  for (int r0 = 0; r0 < N; r0 += a.logit_rows) {
    const int rc = std::min(a.logit_rows, N - r0);
    T* z = a.logits.get();
    be.gemm(false, true, rc, V, C, T(1), hf + static_cast<int64_t>(r0) * C, C, P + lm_head_, C, T(0), z, V);
    if (policy_head)
      loss += be.token_loss(z, tgt + r0, wt ? wt + r0 : nullptr, ewt ? ewt + r0 : nullptr, temperature,
                            TokenMasks{mask_rows ? mask_rows + 2 * static_cast<int64_t>(r0) : nullptr, mask_tokens}, lp + r0, ent ? ent + r0 : nullptr, rc,
                            V, backward);
    else
      loss += be.cross_entropy(z, tgt + r0, wt ? wt + r0 : nullptr, lp + r0, rc, V, backward);
    if (backward) {
      be.gemm(false, false, rc, C, V, T(1), z, V, P + lm_head_, C, T(0), a.dhf.get() + static_cast<int64_t>(r0) * C, C);
      if (G) be.gemm(true, false, V, C, rc, T(1), z, V, hf + static_cast<int64_t>(r0) * C, C, T(1), G + lm_head_, C);
    }
  }
  fetch(logp, lp, N);
  fetch(entropy, ent, N);
  if (soft_out) loss += gumbel_head(soft.targets, weights, temperature, N, hf, a.dhf.get(), G, logp, backward);
  if (!backward) return loss;

  T* dx = a.dx.get();
  T* dh = a.dh.get();
  T* dqkv = a.dqkv.get();
  T* datt = a.datt.get();
  T* dgu = a.dgu.get();
  T* dact = a.dact.get();
  be.zero(dx, static_cast<size_t>(N) * C);
  be.rmsnorm_backward(dx, G ? G + norm_ : nullptr, a.dhf.get(), a.x[Lc].get(), P + norm_, a.rstdf.get(), N, C);
  for (int l = Lc - 1; l >= 0; l--) {
    const Layer& L = layers_[l];
    // Checkpointing: the layer's activations again, from its kept input. Its output goes over
    // x[l + 1], which no later step of this backward pass reads.
    const int s = recompute_ ? 0 : l;
    if (recompute_) layer_forward(l, a, a.x[l].get(), a.x[l + 1].get(), N, pos, shape, nullptr, nullptr);
    // dx holds d(loss)/d(layer output). MLP: out = xmid + act Wd^T (+ the adapter's down_proj term).
    be.gemm(false, false, N, F, C, T(1), dx, C, P + L.wd, F, T(0), dact, F);
    if (G) be.gemm(true, false, C, F, N, T(1), dx, C, a.act[s].get(), F, T(1), G + L.wd, F);
    lora_backward(l, down_proj, a.act[s].get(), dx, C, dact, N);
    be.swiglu_backward(dgu, dact, a.gu[s].get(), N, F);
    be.gemm(false, false, N, C, 2 * F, T(1), dgu, 2 * F, P + L.wgu, C, T(0), dh, C);
    if (G) be.gemm(true, false, 2 * F, C, N, T(1), dgu, 2 * F, a.h2[s].get(), C, T(1), G + L.wgu, C);
    lora_backward(l, gate_proj, a.h2[s].get(), dgu, 2 * F, dh, N);
    lora_backward(l, up_proj, a.h2[s].get(), dgu + F, 2 * F, dh, N);
    be.rmsnorm_backward(dx, G ? G + L.ln2 : nullptr, dh, a.xmid[s].get(), P + L.ln2, a.rstd2[s].get(), N, C);
    // dx now holds d(loss)/d(xmid). Attention: xmid = x + att Wo^T (+ the adapter's o_proj term).
    be.gemm(false, false, N, H * hd, C, T(1), dx, C, P + L.wo, H * hd, T(0), datt, H * hd);
    if (G) be.gemm(true, false, C, H * hd, N, T(1), dx, C, a.att[s].get(), H * hd, T(1), G + L.wo, H * hd);
    lora_backward(l, o_proj, a.att[s].get(), dx, C, datt, N);
    AttentionGradArgs<T> g;
    g.batch = B;
    g.seq_len = S;
    g.heads = H;
    g.kv_heads = KV;
    g.head_dim = hd;
    T* qkv = a.qkv[s].get();
    g.q = qkv;
    g.k = qkv + static_cast<int64_t>(H) * hd;
    g.v = qkv + static_cast<int64_t>(H + KV) * hd;
    g.q_stride = QKV;
    g.kv_pos_stride = QKV;
    g.out = a.att[s].get();
    g.dout = datt;
    g.out_stride = static_cast<int64_t>(H) * hd;
    g.lse = a.lse[s].get();
    g.dq = dqkv;
    g.dk = dqkv + static_cast<int64_t>(H) * hd;
    g.dv = dqkv + static_cast<int64_t>(H + KV) * hd;
    be.attention_backward(g);
    be.rope(dqkv, QKV, pos, N, H, hd, rope_cos_.get(), rope_sin_.get(), true);
    be.rope(dqkv + static_cast<int64_t>(H) * hd, QKV, pos, N, KV, hd, rope_cos_.get(), rope_sin_.get(), true);
    // dqkv holds d(loss)/d(q, k, v before rotation): the products' (and the adapter's) output.
    if (G && cfg_.attention_bias) be.bias_backward(G + L.bqkv, dqkv, QKV, N, QKV);
    be.gemm(false, false, N, C, QKV, T(1), dqkv, QKV, P + L.wqkv, C, T(0), dh, C);
    if (G) be.gemm(true, false, QKV, C, N, T(1), dqkv, QKV, a.h1[s].get(), C, T(1), G + L.wqkv, C);
    lora_backward(l, q_proj, a.h1[s].get(), dqkv, QKV, dh, N);
    lora_backward(l, k_proj, a.h1[s].get(), dqkv + static_cast<int64_t>(H) * hd, QKV, dh, N);
    lora_backward(l, v_proj, a.h1[s].get(), dqkv + static_cast<int64_t>(H + KV) * hd, QKV, dh, N);
    be.rmsnorm_backward(dx, G ? G + L.ln1 : nullptr, dh, a.x[l].get(), P + L.ln1, a.rstd1[s].get(), N, C);
  }
  if (mix) {
    // The mixtures' weights get their gradient whether or not the table is frozen (an adapter run).
    std::vector<T> dw(mix_grads ? mix->ids.size() : 0);
    T* d_dw = mix_grads ? output(dw.data(), dw.size(), out_mix_grads_) : nullptr;
    if (G || d_dw) be.embedding_mix_backward(G ? G + embed_ : nullptr, d_dw, mix_entries, mix_weights, P + embed_, dx, N, C);
    if (d_dw) {
      fetch(dw.data(), d_dw, dw.size());
      for (size_t k = 0; k < dw.size(); k++)
        if (mix->map[k] >= 0) mix_grads[mix->map[k]] = dw[k];
    }
  } else if (G) {
    be.embedding_backward(G + embed_, tok, dx, N, C, V);
  }
  return loss;
}

template <typename T>
void Qwen2Model<T>::logits(const int32_t* tokens, int B, int S, T* out) {
  // A cache with one slot per sequence gives every position's logits in one pass.
  KvCache<T> cache = new_cache(B, S);
  const int N = B * S;
  std::vector<int32_t> seq(N), pos(N), rows(N);
  for (int r = 0; r < N; r++) {
    seq[r] = r / S;
    pos[r] = r % S;
    rows[r] = r;
  }
  T* o = output(out, static_cast<size_t>(N) * cfg_.vocab_size, out_logits_);
  forward_cached(cache, tokens, seq.data(), pos.data(), N, rows.data(), N, o);
  fetch(out, o, static_cast<size_t>(N) * cfg_.vocab_size);
}

template <typename T>
KvCache<T> Qwen2Model<T>::new_cache(int batch, int max_len) {
  if (batch <= 0 || max_len <= 0) throw std::invalid_argument("a KV cache needs a positive batch and length");
  if (max_len > cfg_.max_position)
    throw std::invalid_argument("length " + std::to_string(max_len) + " exceeds max_position_embeddings " + std::to_string(cfg_.max_position));
  KvCache<T> c;
  c.batch = batch;
  c.max_len = max_len;
  const size_t n = static_cast<size_t>(cfg_.num_layers) * batch * max_len * cfg_.num_kv_heads * cfg_.head_dim;
  be_->check_fits(2 * n * sizeof(T), "a KV cache of " + std::to_string(batch) + " sequences x " + std::to_string(max_len) + " positions");
  c.k = be_->alloc(n);
  c.v = be_->alloc(n);
  return c;
}

template <typename T>
void Qwen2Model<T>::forward_cached(KvCache<T>& cache, const int32_t* tokens, const int32_t* seq, const int32_t* pos, int rows,
                                   const int32_t* out_rows, int n_out, T* out, const SoftInputs& soft) {
  if (rows <= 0) return;
  check_tokens(tokens, rows, "token");
  int max_pos = 0;
  for (int r = 0; r < rows; r++) {
    if (seq[r] < 0 || seq[r] >= cache.batch) throw std::out_of_range("sequence index out of range of the KV cache");
    if (pos[r] < 0 || pos[r] >= cache.max_len) throw std::out_of_range("position " + std::to_string(pos[r]) + " is past the KV cache's length");
    max_pos = std::max(max_pos, pos[r]);
  }
  for (int i = 0; i < n_out; i++)
    if (out_rows[i] < 0 || out_rows[i] >= rows) throw std::out_of_range("logit row out of range");
  std::optional<Mixture> mix;
  if (soft.offsets) mix = mixture(tokens, soft, rows);
  ensure_rope(max_pos + 1);
  Backend<T>& be = *be_;
  Activations& a = activations(rows, false);
  const int C = cfg_.hidden_size;
  T* P = params();
  tokens = stage(tokens, rows, in_tokens_);
  seq = stage(seq, rows, in_seq_);
  pos = stage(pos, rows, in_pos_);
  out_rows = stage(out_rows, n_out, in_rows_);
  AttentionArgs<T> shape;
  shape.rows = rows;
  shape.heads = cfg_.num_heads;
  shape.kv_heads = cfg_.num_kv_heads;
  shape.head_dim = cfg_.head_dim;
  shape.seq = seq;
  shape.pos = pos;
  shape.q_stride = qkv_dim_;
  shape.kv_seq_stride = static_cast<int64_t>(cache.max_len) * cfg_.num_kv_heads * cfg_.head_dim;
  shape.kv_pos_stride = static_cast<int64_t>(cfg_.num_kv_heads) * cfg_.head_dim;
  shape.out_stride = static_cast<int64_t>(cfg_.num_heads) * cfg_.head_dim;

  if (mix)
    be.embedding_mix_forward(a.x[0].get(),
                             {stage(mix->offsets.data(), mix->offsets.size(), in_mix_offsets_), stage(mix->ids.data(), mix->ids.size(), in_mix_ids_),
                              mix->offsets.data(), mix->ids.data()},
                             stage(mix->weights.data(), mix->weights.size(), in_mix_weights_), P + embed_, rows, C);
  else
    be.embedding_forward(a.x[0].get(), tokens, P + embed_, rows, C);
  int cur = 0;
  for (int l = 0; l < cfg_.num_layers; l++) {
    layer_forward(l, a, a.x[cur].get(), a.x[1 - cur].get(), rows, pos, shape, &cache, seq);
    cur = 1 - cur;
  }
  // Only the requested rows go through the final norm and the LM head.
  T* picked = a.h1[0].get();
  be.embedding_forward(picked, out_rows, a.x[cur].get(), n_out, C);
  be.rmsnorm_forward(a.hf.get(), nullptr, picked, P + norm_, n_out, C, cfg_.rms_norm_eps);
  be.gemm(false, true, n_out, cfg_.vocab_size, C, T(1), a.hf.get(), C, P + lm_head_, C, T(0), out, cfg_.vocab_size);
}

template class Qwen2Model<float>;
template class Qwen2Model<double>;

}  // namespace sw

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
  std::vector<int32_t> pos, seq;
  // Training keeps every layer's activations for the backward pass; inference keeps one set and
  // two residual buffers it alternates between.
  std::vector<std::shared_ptr<T>> x, h1, rstd1, qkv, att, lse, xmid, h2, rstd2, gu, act;
  std::shared_ptr<T> hf, rstdf, logits;
  std::shared_ptr<T> dx, dh, dqkv, datt, dgu, dact, dhf;
  int logit_rows = 0;
};

template <typename T>
Qwen2Model<T>::Qwen2Model(const ModelConfig& config, std::unique_ptr<Backend<T>> backend) : cfg_(config), be_(std::move(backend)) {
  cfg_.validate();
  const int64_t C = cfg_.hidden_size, V = cfg_.vocab_size, F = cfg_.intermediate_size, hd = cfg_.head_dim;
  const int64_t H = cfg_.num_heads, KV = cfg_.num_kv_heads;
  qkv_dim_ = static_cast<int>((H + 2 * KV) * hd);
  size_t off = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, bool decay) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    tensors_.push_back({name, std::move(shape), off, n, decay});
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
  num_params_ = off;
  be_->check_fits(num_params_ * sizeof(T), "the parameters");
  params_ = be_->alloc(num_params_);
  be_->set_parameters(params_.get(), num_params_);
}

template <typename T>
Qwen2Model<T>::~Qwen2Model() = default;

template <typename T>
std::shared_ptr<T> Qwen2Model<T>::grads_storage() {
  if (!grads_) {
    be_->check_fits(num_params_ * sizeof(T), "the gradients");
    grads_ = be_->alloc(num_params_);
  }
  return grads_;
}
template <typename T>
std::shared_ptr<T> Qwen2Model<T>::m_storage() {
  if (!m_) {
    be_->check_fits(2 * num_params_ * sizeof(T), "the AdamW moments");
    m_ = be_->alloc(num_params_);
  }
  return m_;
}
template <typename T>
std::shared_ptr<T> Qwen2Model<T>::v_storage() {
  if (!v_) {
    be_->check_fits(num_params_ * sizeof(T), "the AdamW second moments");
    v_ = be_->alloc(num_params_);
  }
  return v_;
}

template <typename T>
std::shared_ptr<T>& Qwen2Model<T>::buffer(Buffer which) {
  switch (which) {
    case Buffer::grads:
      grads_storage();
      return grads_;
    case Buffer::m:
      m_storage();
      return m_;
    case Buffer::v:
      v_storage();
      return v_;
    default:
      return params_;
  }
}

template <typename T>
void Qwen2Model<T>::read(Buffer which, size_t offset, size_t n, T* host) {
  if (offset > num_params_ || n > num_params_ - offset) throw std::out_of_range("read past the end of the parameter buffer");
  be_->download(host, buffer(which).get() + offset, n * sizeof(T));
}

template <typename T>
void Qwen2Model<T>::write(Buffer which, size_t offset, size_t n, const T* host) {
  if (offset > num_params_ || n > num_params_ - offset) throw std::out_of_range("write past the end of the parameter buffer");
  be_->upload(buffer(which).get() + offset, host, n * sizeof(T));
}

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
  if (slot && slot->capacity >= rows) return *slot;
  slot.reset();  // free the old buffers before allocating larger ones
  auto a = std::make_unique<Activations>();
  const size_t N = rows, C = cfg_.hidden_size, F = cfg_.intermediate_size, H = cfg_.num_heads, hd = cfg_.head_dim;
  const size_t QKV = qkv_dim_;
  const int sets = training ? cfg_.num_layers : 1;
  a->capacity = rows;
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
  }
  slot = std::move(a);
  return *slot;
}

template <typename T>
void Qwen2Model<T>::layer_forward(int l, Activations& a, const T* x, T* out, int rows, const int32_t* pos, const AttentionArgs<T>& shape,
                                  KvCache<T>* cache, const int32_t* seq) {
  Backend<T>& be = *be_;
  const Layer& L = layers_[l];
  const int s = cache ? 0 : l;  // which activation set
  const int C = cfg_.hidden_size, F = cfg_.intermediate_size, H = cfg_.num_heads, KV = cfg_.num_kv_heads, hd = cfg_.head_dim;
  const int QKV = qkv_dim_;
  T* P = params_.get();
  T* h1 = a.h1[s].get();
  T* qkv = a.qkv[s].get();
  T* att = a.att[s].get();
  T* xmid = a.xmid[s].get();
  T* h2 = a.h2[s].get();
  T* gu = a.gu[s].get();
  T* act = a.act[s].get();

  be.rmsnorm_forward(h1, a.rstd1[s].get(), x, P + L.ln1, rows, C, cfg_.rms_norm_eps);
  be.gemm(false, true, rows, QKV, C, T(1), h1, C, P + L.wqkv, C, T(0), qkv, QKV);
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
  be.rmsnorm_forward(h2, a.rstd2[s].get(), xmid, P + L.ln2, rows, C, cfg_.rms_norm_eps);
  be.gemm(false, true, rows, 2 * F, C, T(1), h2, C, P + L.wgu, C, T(0), gu, 2 * F);
  be.swiglu_forward(act, gu, rows, F);
  be.copy(out, xmid, static_cast<size_t>(rows) * C);
  be.gemm(false, true, rows, C, F, T(1), act, F, P + L.wd, F, T(1), out, C);
}

template <typename T>
double Qwen2Model<T>::forward_backward(const int32_t* tokens, const int32_t* targets, const float* weights, int B, int S, T* logp,
                                       bool backward) {
  return pass(tokens, targets, weights, nullptr, 1.0, PolicyMasks{}, B, S, logp, nullptr, backward, false);
}

template <typename T>
double Qwen2Model<T>::forward_backward_policy(const int32_t* tokens, const int32_t* targets, const float* weights,
                                              const float* entropy_weights, double temperature, const PolicyMasks& masks, int B, int S,
                                              T* logp, T* entropy, bool backward) {
  if (!(temperature > 0) || !std::isfinite(temperature)) throw std::invalid_argument("temperature must be a positive number");
  return pass(tokens, targets, weights, entropy_weights, temperature, masks, B, S, logp, entropy, backward, true);
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
                           double temperature, const PolicyMasks& masks, int B, int S, T* logp, T* entropy, bool backward, bool policy_head) {
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
  T* P = params_.get();

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

  be.embedding_forward(a.x[0].get(), tok, P + embed_, N, C);
  for (int l = 0; l < Lc; l++) layer_forward(l, a, a.x[l].get(), a.x[l + 1].get(), N, pos, shape, nullptr, nullptr);
  T* hf = a.hf.get();
  be.rmsnorm_forward(hf, a.rstdf.get(), a.x[Lc].get(), P + norm_, N, C, cfg_.rms_norm_eps);

  T* G = backward ? grads_storage().get() : nullptr;
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
      be.gemm(true, false, V, C, rc, T(1), z, V, hf + static_cast<int64_t>(r0) * C, C, T(1), G + lm_head_, C);
    }
  }
  fetch(logp, lp, N);
  fetch(entropy, ent, N);
  if (!backward) return loss;

  T* dx = a.dx.get();
  T* dh = a.dh.get();
  T* dqkv = a.dqkv.get();
  T* datt = a.datt.get();
  T* dgu = a.dgu.get();
  T* dact = a.dact.get();
  be.zero(dx, static_cast<size_t>(N) * C);
  be.rmsnorm_backward(dx, G + norm_, a.dhf.get(), a.x[Lc].get(), P + norm_, a.rstdf.get(), N, C);
  for (int l = Lc - 1; l >= 0; l--) {
    const Layer& L = layers_[l];
    // dx holds d(loss)/d(layer output). MLP: out = xmid + act Wd^T.
    be.gemm(false, false, N, F, C, T(1), dx, C, P + L.wd, F, T(0), dact, F);
    be.gemm(true, false, C, F, N, T(1), dx, C, a.act[l].get(), F, T(1), G + L.wd, F);
    be.swiglu_backward(dgu, dact, a.gu[l].get(), N, F);
    be.gemm(false, false, N, C, 2 * F, T(1), dgu, 2 * F, P + L.wgu, C, T(0), dh, C);
    be.gemm(true, false, 2 * F, C, N, T(1), dgu, 2 * F, a.h2[l].get(), C, T(1), G + L.wgu, C);
    be.rmsnorm_backward(dx, G + L.ln2, dh, a.xmid[l].get(), P + L.ln2, a.rstd2[l].get(), N, C);
    // dx now holds d(loss)/d(xmid). Attention: xmid = x + att Wo^T.
    be.gemm(false, false, N, H * hd, C, T(1), dx, C, P + L.wo, H * hd, T(0), datt, H * hd);
    be.gemm(true, false, C, H * hd, N, T(1), dx, C, a.att[l].get(), H * hd, T(1), G + L.wo, H * hd);
    AttentionGradArgs<T> g;
    g.batch = B;
    g.seq_len = S;
    g.heads = H;
    g.kv_heads = KV;
    g.head_dim = hd;
    T* qkv = a.qkv[l].get();
    g.q = qkv;
    g.k = qkv + static_cast<int64_t>(H) * hd;
    g.v = qkv + static_cast<int64_t>(H + KV) * hd;
    g.q_stride = QKV;
    g.kv_pos_stride = QKV;
    g.out = a.att[l].get();
    g.dout = datt;
    g.out_stride = static_cast<int64_t>(H) * hd;
    g.lse = a.lse[l].get();
    g.dq = dqkv;
    g.dk = dqkv + static_cast<int64_t>(H) * hd;
    g.dv = dqkv + static_cast<int64_t>(H + KV) * hd;
    be.attention_backward(g);
    be.rope(dqkv, QKV, pos, N, H, hd, rope_cos_.get(), rope_sin_.get(), true);
    be.rope(dqkv + static_cast<int64_t>(H) * hd, QKV, pos, N, KV, hd, rope_cos_.get(), rope_sin_.get(), true);
    if (cfg_.attention_bias) be.bias_backward(G + L.bqkv, dqkv, QKV, N, QKV);
    be.gemm(false, false, N, C, QKV, T(1), dqkv, QKV, P + L.wqkv, C, T(0), dh, C);
    be.gemm(true, false, QKV, C, N, T(1), dqkv, QKV, a.h1[l].get(), C, T(1), G + L.wqkv, C);
    be.rmsnorm_backward(dx, G + L.ln1, dh, a.x[l].get(), P + L.ln1, a.rstd1[l].get(), N, C);
  }
  be.embedding_backward(G + embed_, tok, dx, N, C, V);
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
void Qwen2Model<T>::zero_grad() {
  be_->zero(grads_storage().get(), num_params_);
}

template <typename T>
double Qwen2Model<T>::grad_norm() {
  return std::sqrt(be_->sum_squares(grads_storage().get(), num_params_));
}

template <typename T>
void Qwen2Model<T>::adamw_step(const AdamWArgs& args) {
  T* P = params_.get();
  T* G = grads_storage().get();
  T* M = m_storage().get();
  T* Vv = v_storage().get();
  for (const TensorInfo& t : tensors_) {
    AdamWArgs a = args;
    if (!t.decay) a.weight_decay = 0;
    be_->adamw(P + t.offset, G + t.offset, M + t.offset, Vv + t.offset, t.size, a);
  }
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
                                   const int32_t* out_rows, int n_out, T* out) {
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
  ensure_rope(max_pos + 1);
  Backend<T>& be = *be_;
  Activations& a = activations(rows, false);
  const int C = cfg_.hidden_size;
  T* P = params_.get();
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

#include "lora.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model.h"

namespace sw {

namespace {
const char* const kNames[kLoraTargets] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
}

const char* lora_target_name(int target) { return target >= 0 && target < kLoraTargets ? kNames[target] : "?"; }
const char* lora_target_parent(int target) { return target <= o_proj ? "self_attn" : "mlp"; }

void LoraSpec::validate() const {
  if (rank <= 0) throw std::invalid_argument("LoRA rank r must be a positive integer (got " + std::to_string(rank) + ")");
  if (!std::isfinite(scale)) throw std::invalid_argument("LoRA scale (alpha / r) must be a finite number");
  if (!(dropout >= 0 && dropout < 1)) throw std::invalid_argument("LoRA dropout must be in [0, 1) (got " + std::to_string(dropout) + ")");
  if (targets == 0 || targets >= (1u << kLoraTargets)) throw std::invalid_argument("LoRA targets must name at least one of the linear layers");
}

template <typename T>
LoraAdapter<T>::LoraAdapter(const ModelConfig& cfg, const LoraSpec& spec, Backend<T>& be) : spec_(spec), be_(&be) {
  spec_.validate();
  const int C = cfg.hidden_size, F = cfg.intermediate_size, Q = cfg.num_heads * cfg.head_dim, KV = cfg.num_kv_heads * cfg.head_dim;
  // [in, out] of each target, as Hugging Face's nn.Linear(in, out) has them.
  const int shapes[kLoraTargets][2] = {{C, Q}, {C, KV}, {C, KV}, {Q, C}, {C, F}, {C, F}, {F, C}};
  const int64_t r = spec_.rank;
  num_layers_ = cfg.num_layers;
  slots_.resize(static_cast<size_t>(num_layers_) * kLoraTargets);
  std::vector<TensorInfo> tensors;
  size_t off = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    const size_t n = static_cast<size_t>(shape[0] * shape[1]);
    tensors.push_back({name, std::move(shape), off, n, true});
    off += n;
    return off - n;
  };
  for (int l = 0; l < num_layers_; l++)
    for (int t = 0; t < kLoraTargets; t++) {
      if (!has(t)) continue;
      Slot& s = slots_[static_cast<size_t>(l) * kLoraTargets + t];
      s.in = shapes[t][0];
      s.out = shapes[t][1];
      max_in_ = std::max(max_in_, s.in);
      const std::string p = "base_model.model.model.layers." + std::to_string(l) + "." + lora_target_parent(t) + "." + lora_target_name(t) + ".";
      s.a = add(p + "lora_A.weight", {r, s.in});
      s.b = add(p + "lora_B.weight", {s.out, r});
    }
  buf_ = std::make_unique<ParamBuffers<T>>(be, std::move(tensors), "the LoRA adapter");
}

template class LoraAdapter<float>;
template class LoraAdapter<double>;

}  // namespace sw

// LoRA adapters (Hu et al., 2021) on a Qwen2 model's linear layers, as PEFT defines them:
//
//   y[N, out] = x[N, in] W^T + scale * dropout(x)[N, in] A^T B^T,   A: [r, in], B: [out, r]
//
// with scale = alpha / r (alpha / sqrt(r) for rsLoRA; the caller decides). Each adapter is a set
// of tensors of its own (ParamBuffers: parameters, gradients, AdamW moments) in the model's
// backend memory, named as PEFT saves them without the adapter name
// (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight), in the order layer by layer,
// target by target (q, k, v, o, gate, up, down), A before B. Qwen2Model (model.h) runs an attached
// adapter in every pass; the arithmetic of the adapter's forward and backward lives there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "param_buffers.h"

namespace sw {

struct ModelConfig;

// The linear layers an adapter can target, with Hugging Face's module names.
enum LoraTarget : int { q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, kLoraTargets };
const char* lora_target_name(int target);
// "self_attn" or "mlp": the module the target sits in.
const char* lora_target_parent(int target);

struct LoraSpec {
  int rank = 8;
  double scale = 2.0;     // multiplies B A x: alpha / rank (PEFT), or alpha / sqrt(rank) (rsLoRA)
  double dropout = 0.0;   // probability of zeroing an input element in training passes
  uint32_t targets = 0;   // bit t set: target t (LoraTarget) of every layer carries an adapter

  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

template <typename T>
class LoraAdapter {
 public:
  // Where target t of a layer keeps its matrices in the buffers, and its shape.
  struct Slot {
    size_t a = 0, b = 0;  // offsets of A [rank, in] and B [out, rank]
    int in = 0, out = 0;
  };

  // Zero tensors (the caller initialises A as PEFT does; B stays zero, so a new adapter leaves
  // the model's outputs unchanged), allocated through `be`, the backend of the model it serves.
  LoraAdapter(const ModelConfig& cfg, const LoraSpec& spec, Backend<T>& be);

  const LoraSpec& spec() const { return spec_; }
  bool has(int target) const { return (spec_.targets >> target) & 1u; }
  const Slot& slot(int layer, int target) const { return slots_[static_cast<size_t>(layer) * kLoraTargets + target]; }
  int num_layers() const { return num_layers_; }
  // The widest input among the targets (scratch sizes).
  int max_in() const { return max_in_; }
  const Backend<T>* backend() const { return be_; }

  ParamBuffers<T>& buffers() { return *buf_; }
  const std::vector<TensorInfo>& tensors() const { return buf_->tensors(); }
  size_t num_params() const { return buf_->size(); }

 private:
  LoraSpec spec_;
  Backend<T>* be_;
  int num_layers_ = 0, max_in_ = 0;
  std::vector<Slot> slots_;  // [layer][target]
  std::unique_ptr<ParamBuffers<T>> buf_;
};

}  // namespace sw

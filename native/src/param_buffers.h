// A set of trainable tensors in one flat buffer of a backend's memory, with their gradients and
// AdamW moments in the same layout (allocated on first use: an inference-only model never pays
// for them), so one offset finds a tensor in all four. The model's parameters are one such set;
// each LoRA adapter (lora.h) is another.
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace sw {

struct TensorInfo {
  std::string name;  // Hugging Face (or PEFT) name, e.g. model.layers.0.self_attn.q_proj.weight
  std::vector<int64_t> shape;
  size_t offset = 0;  // in elements, into params / grads / moments
  size_t size = 0;
  bool decay = false;  // weight decay applies (matrices and embeddings; not norms or biases)
};

template <typename T>
class ParamBuffers {
 public:
  enum class Buffer { params, grads, m, v };

  // `what` names the owner in errors ("the model", "the LoRA adapter").
  ParamBuffers(Backend<T>& be, std::vector<TensorInfo> tensors, std::string what) : be_(&be), tensors_(std::move(tensors)), what_(std::move(what)) {
    for (const TensorInfo& t : tensors_) size_ = std::max(size_, t.offset + t.size);
    be_->check_fits(size_ * sizeof(T), what_ + "'s parameters");
    params_ = be_->alloc(size_);
  }

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  size_t size() const { return size_; }
  T* params() { return params_.get(); }

  std::shared_ptr<T>& storage(Buffer which) {
    switch (which) {
      case Buffer::grads:
        return lazy(grads_, size_, "'s gradients");
      case Buffer::m:
        // Both moments are counted at the first, so that a step fails before allocating either.
        return lazy(m_, 2 * size_, "'s AdamW moments");
      case Buffer::v:
        return lazy(v_, size_, "'s AdamW second moments");
      default:
        return params_;
    }
  }

  // Copies n elements from `offset` of a buffer to host memory, or from host memory into it.
  void read(Buffer which, size_t offset, size_t n, T* host) {
    check_range(offset, n, "read past the end of");
    be_->download(host, storage(which).get() + offset, n * sizeof(T));
  }
  void write(Buffer which, size_t offset, size_t n, const T* host) {
    check_range(offset, n, "write past the end of");
    be_->upload(storage(which).get() + offset, host, n * sizeof(T));
  }

  void zero_grad() { be_->zero(storage(Buffer::grads).get(), size_); }
  double grad_norm() { return std::sqrt(be_->sum_squares(storage(Buffer::grads).get(), size_)); }

  // One AdamW step over every tensor (weight decay only where TensorInfo::decay).
  void adamw_step(const AdamWArgs& args) {
    T* P = params_.get();
    T* G = storage(Buffer::grads).get();
    T* M = storage(Buffer::m).get();
    T* V = storage(Buffer::v).get();
    for (const TensorInfo& t : tensors_) {
      AdamWArgs a = args;
      if (!t.decay) a.weight_decay = 0;
      be_->adamw(P + t.offset, G + t.offset, M + t.offset, V + t.offset, t.size, a);
    }
  }

 private:
  std::shared_ptr<T>& lazy(std::shared_ptr<T>& slot, size_t fit, const char* which) {
    if (!slot) {
      be_->check_fits(fit * sizeof(T), what_ + which);
      slot = be_->alloc(size_);
    }
    return slot;
  }
  void check_range(size_t offset, size_t n, const char* verb) const {
    if (offset > size_ || n > size_ - offset) throw std::out_of_range(std::string(verb) + " " + what_ + "'s buffers");
  }

  Backend<T>* be_;
  std::vector<TensorInfo> tensors_;
  std::string what_;
  size_t size_ = 0;
  std::shared_ptr<T> params_, grads_, m_, v_;
};

}  // namespace sw

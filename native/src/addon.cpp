// The Node binding: Model (parameters, training passes, AdamW), Generation (batched sampling
// with a KV cache) and a few module functions (gemm for tests and benchmarks, instruction-set
// and thread controls, a peak-throughput probe, the CUDA probe). On the CPU, parameter, gradient
// and moment buffers are exposed to JavaScript as typed arrays over native memory, so checkpoints
// are read and written without copies; readParams / writeParams (and the grads and moments
// twins) copy, and work on both devices. Heavy calls have Promise-returning twins that run off
// the main thread.
#include <napi.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "generation.h"
#include "kernels/cuda/cuda.h"
#include "kernels/gemm.h"
#include "kernels/peak.h"
#include "model.h"
#include "thread_pool.h"

using namespace sw;

namespace {

// One pool for the process: the addon may be loaded by several JavaScript threads (the server
// serves each model from a worker thread), and they share the machine's cores.
std::mutex g_pool_mutex;
std::shared_ptr<ThreadPool> g_pool;
int g_threads = 0;

std::shared_ptr<ThreadPool> shared_pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_shared<ThreadPool>(g_threads);
  return g_pool;
}

// What belongs to one JavaScript environment (the main thread's, a worker thread's): a reference
// made in one environment cannot be used from another, so it is kept per environment, not static.
struct AddonData {
  Napi::FunctionReference model, adapter;
  Napi::FunctionReference constraint;
};

// ---- argument helpers ----

Napi::Error type_error(Napi::Env env, const std::string& msg) { return Napi::TypeError::New(env, msg); }

template <typename A>
A typed_arg(const Napi::Value& v, napi_typedarray_type type, const char* type_name, const std::string& what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    throw type_error(v.Env(), what + " must be a " + type_name);
  return v.As<A>();
}

Napi::Int32Array int32_arg(const Napi::Value& v, const std::string& what) {
  return typed_arg<Napi::Int32Array>(v, napi_int32_array, "Int32Array", what);
}

int64_t int_arg(const Napi::Value& v, const std::string& what, int64_t min, int64_t max = INT32_MAX) {
  if (!v.IsNumber()) throw type_error(v.Env(), what + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (d != static_cast<double>(static_cast<int64_t>(d)) || d < static_cast<double>(min) || d > static_cast<double>(max))
    throw Napi::RangeError::New(v.Env(), what + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "] (got " +
                                             v.ToString().Utf8Value() + ")");
  return static_cast<int64_t>(d);
}

double num_field(const Napi::Object& o, const char* key, double fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return fallback;
  if (!v.IsNumber()) throw type_error(o.Env(), std::string(key) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

int int_field(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) throw type_error(o.Env(), std::string("config.") + key + " is required");
  return static_cast<int>(int_arg(v, std::string("config.") + key, 0));
}

bool bool_field(const Napi::Object& o, const char* key, bool fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return fallback;
  if (!v.IsBoolean()) throw type_error(o.Env(), std::string(key) + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

// A typed array over native storage; the view keeps the storage alive.
template <typename T>
Napi::Value view_of(Napi::Env env, std::shared_ptr<T> storage, size_t n) {
  auto* hold = new std::shared_ptr<T>(std::move(storage));
  Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(
      env, hold->get(), n * sizeof(T), [](Napi::Env, void*, std::shared_ptr<T>* h) { delete h; }, hold);
  return Napi::TypedArrayOf<T>::New(env, n, ab, 0);
}

template <typename T>
Napi::Value copy_of(Napi::Env env, const T* data, size_t n) {
  auto arr = Napi::TypedArrayOf<T>::New(env, n);
  if (n) std::memcpy(arr.Data(), data, n * sizeof(T));
  return arr;
}

// Marks a model busy for the duration of a call (or of an asynchronous task).
class BusyGuard {
 public:
  BusyGuard(Napi::Env env, std::atomic<bool>& flag) : flag_(&flag) {
    if (flag.exchange(true)) throw Napi::Error::New(env, "the model is busy with an asynchronous call; await it before using the model again");
  }
  ~BusyGuard() {
    if (flag_) flag_->store(false);
  }
  // Hands the flag to an asynchronous task, which clears it when done.
  std::atomic<bool>* release() {
    auto* f = flag_;
    flag_ = nullptr;
    return f;
  }

 private:
  std::atomic<bool>* flag_;
};

// Runs `work` on the libuv pool and settles a Promise with `done`'s value.
class Task : public Napi::AsyncWorker {
 public:
  Task(Napi::Env env, Napi::Object keep, std::atomic<bool>* busy, std::function<void()> work, std::function<Napi::Value(Napi::Env)> done)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), busy_(busy), work_(std::move(work)), done_(std::move(done)) {
    keep_ = Napi::Persistent(keep);
  }
  Napi::Promise promise() const { return deferred_.Promise(); }

  void Execute() override {
    try {
      work_();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    if (busy_) busy_->store(false);
    Napi::HandleScope scope(Env());
    try {
      deferred_.Resolve(done_(Env()));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }
  void OnError(const Napi::Error& e) override {
    if (busy_) busy_->store(false);
    deferred_.Reject(e.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference keep_;
  std::atomic<bool>* busy_;
  std::function<void()> work_;
  std::function<Napi::Value(Napi::Env)> done_;
};

// ---- parameter buffers (a model's, or a LoRA adapter's) ----

Napi::Value tensors_value(Napi::Env env, const std::vector<TensorInfo>& ts) {
  Napi::Array out = Napi::Array::New(env, ts.size());
  for (size_t i = 0; i < ts.size(); i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", ts[i].name);
    Napi::Array shape = Napi::Array::New(env, ts[i].shape.size());
    for (size_t d = 0; d < ts[i].shape.size(); d++) shape.Set(d, Napi::Number::New(env, static_cast<double>(ts[i].shape[d])));
    o.Set("shape", shape);
    o.Set("offset", Napi::Number::New(env, static_cast<double>(ts[i].offset)));
    o.Set("size", Napi::Number::New(env, static_cast<double>(ts[i].size)));
    o.Set("decay", Napi::Boolean::New(env, ts[i].decay));
    out.Set(i, o);
  }
  return out;
}

// The JavaScript methods over a ParamBuffers, which Model and LoraAdapter share:
//   params() / grads() / moments(): zero-copy views (host memory only)
//   readParams(offset?, length?) / readGrads(offset?, length?) / readMoments() -> copies
//   writeParams(values, offset?) / writeMoments(m, v), zeroGrad(), gradNorm(), adamwStep(options)
enum class BufferCall { view_params, view_grads, view_moments, read_params, write_params, read_grads, read_moments, write_moments, zero_grad, grad_norm, adamw_step };

// [offset, offset + length) of a buffer of `total` elements; length defaults to the rest.
std::pair<size_t, size_t> range_args(const Napi::CallbackInfo& info, size_t total_size, size_t first) {
  const int64_t total = static_cast<int64_t>(total_size);
  const int64_t offset = info.Length() > first && !info[first].IsUndefined() ? int_arg(info[first], "offset", 0, total) : 0;
  const int64_t length =
      info.Length() > first + 1 && !info[first + 1].IsUndefined() ? int_arg(info[first + 1], "length", 0, total - offset) : total - offset;
  return {static_cast<size_t>(offset), static_cast<size_t>(length)};
}

template <typename T>
Napi::Value read_copy(Napi::Env env, ParamBuffers<T>& b, typename ParamBuffers<T>::Buffer which, size_t offset, size_t n) {
  auto out = Napi::TypedArrayOf<T>::New(env, n);
  if (n) b.read(which, offset, n, out.Data());
  return out;
}

// The typed array `v` of the buffers' element type, written at `offset`.
template <typename T>
void write_from(Napi::Env env, ParamBuffers<T>& b, typename ParamBuffers<T>::Buffer which, const Napi::Value& v, size_t offset, const char* what) {
  const bool f32 = std::is_same_v<T, float>;
  auto arr = typed_arg<Napi::TypedArrayOf<T>>(v, f32 ? napi_float32_array : napi_float64_array, f32 ? "Float32Array" : "Float64Array",
                                              std::string(what) + " (the model's dtype)");
  if (offset > b.size() || arr.ElementLength() > b.size() - offset)
    throw Napi::RangeError::New(env, std::string(what) + ": " + std::to_string(arr.ElementLength()) + " values at offset " + std::to_string(offset) +
                                         " run past the " + std::to_string(b.size()) + " parameters");
  if (arr.ElementLength()) b.write(which, offset, arr.ElementLength(), arr.Data());
}

AdamWArgs adamw_args(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw type_error(env, "adamwStep(options): options must be an object");
  Napi::Object o = info[0].As<Napi::Object>();
  AdamWArgs a;
  a.lr = num_field(o, "lr", a.lr);
  a.beta1 = num_field(o, "beta1", a.beta1);
  a.beta2 = num_field(o, "beta2", a.beta2);
  a.eps = num_field(o, "eps", a.eps);
  a.weight_decay = num_field(o, "weightDecay", a.weight_decay);
  a.grad_scale = num_field(o, "gradScale", a.grad_scale);
  a.step = int_arg(o.Get("step"), "step", 1, INT64_C(1) << 50);
  return a;
}

// `wrap.with_buffers(f)` calls f(buffers, host_memory) with the wrapped object's ParamBuffers.
template <typename W>
Napi::Value buffer_method(const Napi::CallbackInfo& info, std::atomic<bool>& busy, const std::string& device, BufferCall call, W& wrap) {
  Napi::Env env = info.Env();
  const bool view = call == BufferCall::view_params || call == BufferCall::view_grads || call == BufferCall::view_moments;
  std::optional<BusyGuard> guard;
  if (!view) guard.emplace(env, busy);
  return wrap.with_buffers([&](auto& b, bool host_memory) -> Napi::Value {
    using T = std::remove_reference_t<decltype(*b.params())>;
    using B = typename ParamBuffers<T>::Buffer;
    if (view && !host_memory)
      throw Napi::Error::New(env, "params(), grads() and moments() are views over host memory, and this model lives on the " + device +
                                      " device: use readParams()/writeParams(), readGrads() and readMoments()/writeMoments() instead");
    switch (call) {
      case BufferCall::view_params:
        return view_of(env, b.storage(B::params), b.size());
      case BufferCall::view_grads:
        return view_of(env, b.storage(B::grads), b.size());
      case BufferCall::view_moments: {
        Napi::Object o = Napi::Object::New(env);
        o.Set("m", view_of(env, b.storage(B::m), b.size()));
        o.Set("v", view_of(env, b.storage(B::v), b.size()));
        return o;
      }
      case BufferCall::read_params:
      case BufferCall::read_grads: {
        auto [offset, n] = range_args(info, b.size(), 0);
        return read_copy(env, b, call == BufferCall::read_params ? B::params : B::grads, offset, n);
      }
      case BufferCall::write_params: {
        const size_t offset = info.Length() > 1 && !info[1].IsUndefined() ? static_cast<size_t>(int_arg(info[1], "offset", 0, INT64_C(1) << 50)) : 0;
        write_from(env, b, B::params, info[0], offset, "writeParams");
        return env.Undefined();
      }
      case BufferCall::read_moments: {
        Napi::Object o = Napi::Object::New(env);
        o.Set("m", read_copy(env, b, B::m, 0, b.size()));
        o.Set("v", read_copy(env, b, B::v, 0, b.size()));
        return o;
      }
      case BufferCall::write_moments:
        for (int i = 0; i < 2; i++)
          if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().ElementLength() != b.size())
            throw Napi::RangeError::New(env, std::string("writeMoments: ") + (i ? "v" : "m") + " must hold all " + std::to_string(b.size()) + " values");
        write_from(env, b, B::m, info[0], 0, "writeMoments");
        write_from(env, b, B::v, info[1], 0, "writeMoments");
        return env.Undefined();
      case BufferCall::zero_grad:
        b.zero_grad();
        return env.Undefined();
      case BufferCall::grad_norm:
        return Napi::Number::New(env, b.grad_norm());
      case BufferCall::adamw_step:
        b.adamw_step(adamw_args(info));
        return env.Undefined();
    }
    return env.Undefined();
  });
}

// ---- Model ----

class ModelWrap : public Napi::ObjectWrap<ModelWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Model",
                       {
                           InstanceAccessor<&ModelWrap::Dtype>("dtype"),
                           InstanceAccessor<&ModelWrap::Device>("device"),
                           InstanceAccessor<&ModelWrap::Precision>("precision"),
                           InstanceAccessor<&ModelWrap::NumParams>("numParams"),
                           InstanceAccessor<&ModelWrap::ActivationCheckpointing, &ModelWrap::SetActivationCheckpointing>("activationCheckpointing"),
                           InstanceAccessor<&ModelWrap::TrainingActivationBytes>("trainingActivationBytes"),
                           InstanceMethod<&ModelWrap::Tensors>("tensors"),
                           InstanceMethod<&ModelWrap::Params>("params"),
                           InstanceMethod<&ModelWrap::Grads>("grads"),
                           InstanceMethod<&ModelWrap::Moments>("moments"),
                           InstanceMethod<&ModelWrap::ReadParams>("readParams"),
                           InstanceMethod<&ModelWrap::WriteParams>("writeParams"),
                           InstanceMethod<&ModelWrap::ReadGrads>("readGrads"),
                           InstanceMethod<&ModelWrap::ReadMoments>("readMoments"),
                           InstanceMethod<&ModelWrap::WriteMoments>("writeMoments"),
                           InstanceMethod<&ModelWrap::Synchronize>("synchronize"),
                           InstanceMethod<&ModelWrap::ForwardBackward>("forwardBackward"),
                           InstanceMethod<&ModelWrap::ForwardBackwardAsync>("forwardBackwardAsync"),
                           InstanceMethod<&ModelWrap::Logits>("logits"),
                           InstanceMethod<&ModelWrap::ZeroGrad>("zeroGrad"),
                           InstanceMethod<&ModelWrap::GradNorm>("gradNorm"),
                           InstanceMethod<&ModelWrap::AdamwStep>("adamwStep"),
                           InstanceMethod<&ModelWrap::SetAdapter>("setAdapter"),
                       });
  }

  explicit ModelWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ModelWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw type_error(env, "new Model(config, options): config must be an object");
    Napi::Object c = info[0].As<Napi::Object>();
    ModelConfig cfg;
    cfg.vocab_size = int_field(c, "vocabSize");
    cfg.hidden_size = int_field(c, "hiddenSize");
    cfg.num_layers = int_field(c, "numLayers");
    cfg.num_heads = int_field(c, "numHeads");
    cfg.num_kv_heads = int_field(c, "numKvHeads");
    cfg.head_dim = int_field(c, "headDim");
    cfg.intermediate_size = int_field(c, "intermediateSize");
    cfg.max_position = int_field(c, "maxPositionEmbeddings");
    cfg.rms_norm_eps = num_field(c, "rmsNormEps", 1e-6);
    cfg.rope_theta = num_field(c, "ropeTheta", 10000.0);
    cfg.tie_word_embeddings = bool_field(c, "tieWordEmbeddings", false);
    cfg.attention_bias = bool_field(c, "attentionBias", true);
    std::string dtype = "float32", device = "cpu", precision = "fp32";
    if (info[1].IsObject()) {
      Napi::Object o = info[1].As<Napi::Object>();
      auto opt = [&](const char* key, std::string& out) {
        Napi::Value v = o.Get(key);
        if (!v.IsUndefined() && !v.IsNull()) out = v.ToString().Utf8Value();
      };
      opt("dtype", dtype);
      opt("device", device);
      opt("precision", precision);
    }
    if (dtype != "float32" && dtype != "float64") throw type_error(env, "dtype must be float32 or float64 (got " + dtype + ")");
    if (device != "cpu" && device != "cuda") throw type_error(env, "device must be cpu or cuda (got " + device + ")");
    MatmulPrecision mp;
    try {
      mp = parse_precision(precision);
    } catch (const std::invalid_argument& e) {
      throw type_error(env, e.what());
    }
    if (device == "cpu" && mp != MatmulPrecision::fp32)
      throw type_error(env, "precision " + precision + " is for the cuda device; the CPU computes in fp32");
    if (device == "cuda" && dtype != "float32") throw type_error(env, "the cuda device runs float32 models (float64 is for gradient checks on the CPU)");
    try {
      if (device == "cuda")
        f32_ = std::make_unique<Qwen2Model<float>>(cfg, make_cuda_backend(mp));
      else if (dtype == "float32")
        f32_ = std::make_unique<Qwen2Model<float>>(cfg, make_cpu_backend<float>(shared_pool()));
      else
        f64_ = std::make_unique<Qwen2Model<double>>(cfg, make_cpu_backend<double>(shared_pool()));
    } catch (const std::invalid_argument& e) {
      throw Napi::RangeError::New(env, std::string("invalid model config: ") + e.what());
    } catch (const std::runtime_error& e) {
      throw Napi::Error::New(env, e.what());
    }
    device_ = device;
    precision_ = precision_name(mp);
  }

  template <typename F>
  Napi::Value visit(F&& f) {
    if (f32_) return f(*f32_);
    return f(*f64_);
  }
  bool is_f32() const { return static_cast<bool>(f32_); }
  Qwen2Model<float>* f32() { return f32_.get(); }
  Qwen2Model<double>* f64() { return f64_.get(); }
  std::atomic<bool>& busy() { return busy_; }
  const std::string& device() const { return device_; }

 private:
  Napi::Value Dtype(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), f32_ ? "float32" : "float64"); }
  Napi::Value Device(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), device_); }
  Napi::Value Precision(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), precision_); }

  Napi::Value ActivationCheckpointing(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) -> Napi::Value { return Napi::Boolean::New(info.Env(), m.activation_checkpointing()); });
  }
  Napi::Value TrainingActivationBytes(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) -> Napi::Value { return Napi::Number::New(info.Env(), static_cast<double>(m.training_activation_bytes())); });
  }
  // Not while a pass is in flight (it would change which buffers the pass reads).
  void SetActivationCheckpointing(const Napi::CallbackInfo& info, const Napi::Value& value) {
    Napi::Env env = info.Env();
    if (!value.IsBoolean()) throw type_error(env, "activationCheckpointing must be a boolean");
    BusyGuard guard(env, busy_);
    const bool on = value.As<Napi::Boolean>().Value();
    visit([&](auto& m) -> Napi::Value {
      m.set_activation_checkpointing(on);
      return env.Undefined();
    });
  }

  Napi::Value NumParams(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) -> Napi::Value { return Napi::Number::New(info.Env(), static_cast<double>(m.num_params())); });
  }

  Napi::Value Tensors(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) { return tensors_value(info.Env(), m.tensors()); });
  }

  // The parameter methods, shared with LoraAdapter (see the ParamBuffers helpers above).
 public:
  template <typename F>
  Napi::Value with_buffers(F&& f) {
    return visit([&](auto& m) { return f(m.buffers(), m.backend().host_memory()); });
  }

 private:
  Napi::Value Params(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::view_params, *this); }
  Napi::Value Grads(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::view_grads, *this); }
  Napi::Value Moments(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::view_moments, *this); }
  Napi::Value ReadParams(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::read_params, *this); }
  Napi::Value WriteParams(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::write_params, *this); }
  Napi::Value ReadGrads(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::read_grads, *this); }
  Napi::Value ReadMoments(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::read_moments, *this); }
  Napi::Value WriteMoments(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::write_moments, *this); }
  Napi::Value ZeroGrad(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::zero_grad, *this); }
  Napi::Value GradNorm(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::grad_norm, *this); }
  Napi::Value AdamwStep(const Napi::CallbackInfo& info) { return buffer_method(info, busy_, device_, BufferCall::adamw_step, *this); }

  // Waits for the device (timing); a no-op on the CPU.
  Napi::Value Synchronize(const Napi::CallbackInfo& info) {
    BusyGuard guard(info.Env(), busy_);
    visit([&](auto& m) -> Napi::Value {
      m.backend().synchronize();
      return info.Env().Undefined();
    });
    return info.Env().Undefined();
  }

  struct PassArgs {
    std::vector<int32_t> tokens, targets;
    std::vector<float> weights, entropy_weights;
    bool has_weights = false;
    int batch = 0, seq_len = 0;
    bool backward = false;
    // The policy-gradient head (options name a temperature, entropy, entropyWeights or masks):
    // temperature, entropies, entropy term.
    bool policy = false, want_entropy = false, has_entropy_weights = false;
    double temperature = 1.0;
    // A training pass of the attached adapter: its dropout draws from this seed.
    std::optional<uint64_t> dropout_seed;
    // The policy head's masks: each position's (offset, length) into mask_tokens.
    std::vector<int32_t> mask_rows, mask_tokens;
    bool has_masks = false;
    // Soft tokens (model.h's SoftInputs, SoftTargets): offsets [n + 1] into ids and weights / noised.
    std::vector<int32_t> in_offsets, in_ids, out_offsets, out_ids;
    std::vector<float> in_weights, out_noised;
    bool has_soft_in = false, has_soft_out = false, want_mix_grads = false;
  };

  // {offsets: Int32Array [n + 1], ids: Int32Array, <values>: Float32Array} as soft rows, checked for length.
  static void soft_rows_arg(const Napi::Value& v, const char* what, const char* values_key, size_t n, std::vector<int32_t>& offsets,
                            std::vector<int32_t>& ids, std::vector<float>& values) {
    Napi::Env env = v.Env();
    if (!v.IsObject()) throw type_error(env, std::string(what) + " must be an object {offsets, ids, " + values_key + "}");
    Napi::Object o = v.As<Napi::Object>();
    Napi::Int32Array off = int32_arg(o.Get("offsets"), std::string(what) + ".offsets");
    Napi::Int32Array id = int32_arg(o.Get("ids"), std::string(what) + ".ids");
    Napi::Float32Array val = typed_arg<Napi::Float32Array>(o.Get(values_key), napi_float32_array, "Float32Array", std::string(what) + "." + values_key);
    if (off.ElementLength() != n + 1) throw Napi::RangeError::New(env, std::string(what) + ".offsets must hold batch * seqLen + 1 = " + std::to_string(n + 1) + " values");
    if (id.ElementLength() != val.ElementLength()) throw Napi::RangeError::New(env, std::string(what) + ".ids and ." + values_key + " must have the same length");
    offsets.assign(off.Data(), off.Data() + n + 1);
    if (offsets[n] < 0 || static_cast<size_t>(offsets[n]) != id.ElementLength())
      throw Napi::RangeError::New(env, std::string(what) + ".offsets must end at the number of ids (" + std::to_string(id.ElementLength()) + ")");
    ids.assign(id.Data(), id.Data() + id.ElementLength());
    values.assign(val.Data(), val.Data() + val.ElementLength());
  }

  PassArgs pass_args(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    PassArgs a;
    Napi::Int32Array tokens = int32_arg(info[0], "tokens");
    Napi::Int32Array targets = int32_arg(info[1], "targets");
    a.batch = static_cast<int>(int_arg(info[3], "batch", 1));
    a.seq_len = static_cast<int>(int_arg(info[4], "seqLen", 1));
    const size_t n = static_cast<size_t>(a.batch) * a.seq_len;
    if (tokens.ElementLength() != n || targets.ElementLength() != n)
      throw Napi::RangeError::New(env, "tokens and targets must hold batch * seqLen = " + std::to_string(n) + " ids");
    a.tokens.assign(tokens.Data(), tokens.Data() + n);
    a.targets.assign(targets.Data(), targets.Data() + n);
    if (!info[2].IsUndefined() && !info[2].IsNull()) {
      Napi::Float32Array w = typed_arg<Napi::Float32Array>(info[2], napi_float32_array, "Float32Array", "weights");
      if (w.ElementLength() != n) throw Napi::RangeError::New(env, "weights must hold batch * seqLen = " + std::to_string(n) + " values");
      a.weights.assign(w.Data(), w.Data() + n);
      a.has_weights = true;
    }
    a.backward = info[5].ToBoolean().Value();
    // options: {temperature?, entropy?: boolean, entropyWeights?: Float32Array, masks?: {rows: Int32Array, tokens: Int32Array},
    //           dropoutSeed?}
    if (info.Length() > 6 && !info[6].IsUndefined() && !info[6].IsNull()) {
      if (!info[6].IsObject()) throw type_error(env, "options must be an object");
      Napi::Object o = info[6].As<Napi::Object>();
      auto given = [&](const char* key) { return !o.Get(key).IsUndefined(); };
      a.policy = given("temperature") || given("entropy") || given("entropyWeights") || given("masks") || given("soft");
      // soft?: {inputs?: {offsets, ids, weights}, targets?: {offsets, ids, noised}, inputGrads?: boolean}
      Napi::Value sv = o.Get("soft");
      if (!sv.IsUndefined() && !sv.IsNull()) {
        if (!sv.IsObject()) throw type_error(env, "soft must be an object {inputs?, targets?, inputGrads?}");
        Napi::Object so = sv.As<Napi::Object>();
        if (!so.Get("inputs").IsUndefined()) {
          soft_rows_arg(so.Get("inputs"), "soft.inputs", "weights", n, a.in_offsets, a.in_ids, a.in_weights);
          a.has_soft_in = true;
        }
        if (!so.Get("targets").IsUndefined()) {
          soft_rows_arg(so.Get("targets"), "soft.targets", "noised", n, a.out_offsets, a.out_ids, a.out_noised);
          a.has_soft_out = true;
        }
        a.want_mix_grads = a.has_soft_in && bool_field(so, "inputGrads", false);
      }
      if (given("dropoutSeed")) a.dropout_seed = static_cast<uint64_t>(int_arg(o.Get("dropoutSeed"), "dropoutSeed", 0, INT64_C(1) << 53));
      a.temperature = num_field(o, "temperature", 1.0);
      if (!(a.temperature > 0)) throw Napi::RangeError::New(env, "temperature must be positive");
      a.want_entropy = bool_field(o, "entropy", false);
      Napi::Value ew = o.Get("entropyWeights");
      if (!ew.IsUndefined() && !ew.IsNull()) {
        Napi::Float32Array w = typed_arg<Napi::Float32Array>(ew, napi_float32_array, "Float32Array", "entropyWeights");
        if (w.ElementLength() != n) throw Napi::RangeError::New(env, "entropyWeights must hold batch * seqLen = " + std::to_string(n) + " values");
        a.entropy_weights.assign(w.Data(), w.Data() + n);
        a.has_entropy_weights = true;
      }
      Napi::Value mv = o.Get("masks");
      if (!mv.IsUndefined() && !mv.IsNull()) {
        if (!mv.IsObject()) throw type_error(env, "masks must be an object {rows, tokens}");
        Napi::Int32Array rows = int32_arg(mv.As<Napi::Object>().Get("rows"), "masks.rows");
        Napi::Int32Array toks = int32_arg(mv.As<Napi::Object>().Get("tokens"), "masks.tokens");
        if (rows.ElementLength() != 2 * n) throw Napi::RangeError::New(env, "masks.rows must hold an (offset, length) pair per position: " + std::to_string(2 * n) + " values");
        a.mask_rows.assign(rows.Data(), rows.Data() + 2 * n);
        a.mask_tokens.assign(toks.Data(), toks.Data() + toks.ElementLength());
        a.has_masks = true;
      }
    }
    return a;
  }

  template <typename T>
  struct PassOut {
    double loss = 0;
    std::vector<T> logp, entropy, mix_grads;
  };

  template <typename T>
  static void run_pass(Qwen2Model<T>& m, const PassArgs& a, PassOut<T>& out) {
    const size_t n = static_cast<size_t>(a.batch) * a.seq_len;
    out.logp.assign(n, T(0));
    const float* w = a.has_weights ? a.weights.data() : nullptr;
    if (!a.policy) {
      out.loss = m.forward_backward(a.tokens.data(), a.targets.data(), w, a.batch, a.seq_len, out.logp.data(), a.backward, a.dropout_seed);
      return;
    }
    if (a.want_entropy) out.entropy.assign(n, T(0));
    const PolicyMasks masks = a.has_masks ? PolicyMasks{a.mask_rows.data(), a.mask_tokens.data(), a.mask_tokens.size()} : PolicyMasks{};
    SoftPass soft;
    if (a.has_soft_in) soft.inputs = {a.in_offsets.data(), a.in_ids.data(), a.in_weights.data()};
    if (a.has_soft_out) soft.targets = {a.out_offsets.data(), a.out_ids.data(), a.out_noised.data()};
    if (a.want_mix_grads) out.mix_grads.assign(a.in_ids.size(), T(0));
    out.loss = m.forward_backward_policy(a.tokens.data(), a.targets.data(), w, a.has_entropy_weights ? a.entropy_weights.data() : nullptr,
                                         a.temperature, masks, a.batch, a.seq_len, out.logp.data(), a.want_entropy ? out.entropy.data() : nullptr,
                                         a.backward, a.dropout_seed, soft, a.want_mix_grads && a.backward ? out.mix_grads.data() : nullptr);
  }

  template <typename T>
  static Napi::Value pass_result(Napi::Env env, const PassArgs& a, const PassOut<T>& out) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("loss", out.loss);
    o.Set("logprobs", copy_of(env, out.logp.data(), out.logp.size()));
    if (a.want_entropy) o.Set("entropy", copy_of(env, out.entropy.data(), out.entropy.size()));
    if (a.want_mix_grads && a.backward) o.Set("inputGrads", copy_of(env, out.mix_grads.data(), out.mix_grads.size()));
    return o;
  }

  // forwardBackward(tokens, targets, weights | null, batch, seqLen, backward, options?) -> {loss, logprobs, entropy?}
  Napi::Value ForwardBackward(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, busy_);
    PassArgs a = pass_args(info);
    return visit([&](auto& m) -> Napi::Value {
      using T = std::remove_reference_t<decltype(*m.params())>;
      PassOut<T> out;
      try {
        run_pass(m, a, out);
      } catch (const std::invalid_argument& e) {
        throw Napi::RangeError::New(env, e.what());
      }
      return pass_result(env, a, out);
    });
  }

  Napi::Value ForwardBackwardAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, busy_);
    auto a = std::make_shared<PassArgs>(pass_args(info));
    Task* task;
    if (f32_) {
      auto out = std::make_shared<PassOut<float>>();
      task = new Task(
          env, info.This().As<Napi::Object>(), guard.release(), [m = f32_.get(), a, out] { run_pass(*m, *a, *out); },
          [a, out](Napi::Env e) -> Napi::Value { return pass_result(e, *a, *out); });
    } else {
      auto out = std::make_shared<PassOut<double>>();
      task = new Task(
          env, info.This().As<Napi::Object>(), guard.release(), [m = f64_.get(), a, out] { run_pass(*m, *a, *out); },
          [a, out](Napi::Env e) -> Napi::Value { return pass_result(e, *a, *out); });
    }
    Napi::Promise p = task->promise();
    task->Queue();
    return p;
  }

  // logits(tokens, batch, seqLen) -> [batch * seqLen * vocab]
  Napi::Value Logits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, busy_);
    Napi::Int32Array tokens = int32_arg(info[0], "tokens");
    const int batch = static_cast<int>(int_arg(info[1], "batch", 1));
    const int seq_len = static_cast<int>(int_arg(info[2], "seqLen", 1));
    const size_t n = static_cast<size_t>(batch) * seq_len;
    if (tokens.ElementLength() != n) throw Napi::RangeError::New(env, "tokens must hold batch * seqLen = " + std::to_string(n) + " ids");
    std::vector<int32_t> ids(tokens.Data(), tokens.Data() + n);
    return visit([&](auto& m) -> Napi::Value {
      using T = std::remove_reference_t<decltype(*m.params())>;
      auto out = Napi::TypedArrayOf<T>::New(env, n * m.config().vocab_size);
      m.logits(ids.data(), batch, seq_len, out.Data());
      return out;
    });
  }

  // setAdapter(adapter | null): the LoRA adapter every pass and generation runs with from now on.
  Napi::Value SetAdapter(const Napi::CallbackInfo& info);

  std::unique_ptr<Qwen2Model<float>> f32_;
  std::unique_ptr<Qwen2Model<double>> f64_;
  std::string device_, precision_;
  std::atomic<bool> busy_{false};
  Napi::ObjectReference adapter_ref_;  // keeps the attached adapter's JavaScript object alive
};


// ---- LoraAdapter ----

uint32_t lora_targets_arg(const Napi::Value& v) {
  Napi::Env env = v.Env();
  if (!v.IsArray() || v.As<Napi::Array>().Length() == 0) throw type_error(env, "targets must be a non-empty array of module names");
  Napi::Array arr = v.As<Napi::Array>();
  uint32_t mask = 0;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    const std::string name = arr.Get(i).ToString().Utf8Value();
    int t = 0;
    while (t < kLoraTargets && name != lora_target_name(t)) t++;
    if (t == kLoraTargets)
      throw Napi::RangeError::New(env, "targets: unknown module " + name + " (the linear layers are q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)");
    mask |= 1u << t;
  }
  return mask;
}

// A LoRA adapter of a model: new LoraAdapter(model, {rank, scale, dropout, targets}). Its tensors
// live beside the model's, on its device; model.setAdapter(adapter) makes the passes use it.
class AdapterWrap : public Napi::ObjectWrap<AdapterWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "LoraAdapter",
                       {
                           InstanceAccessor<&AdapterWrap::Rank>("rank"),
                           InstanceAccessor<&AdapterWrap::Scale>("scale"),
                           InstanceAccessor<&AdapterWrap::Dropout>("dropout"),
                           InstanceAccessor<&AdapterWrap::Targets>("targets"),
                           InstanceAccessor<&AdapterWrap::NumParams>("numParams"),
                           InstanceMethod<&AdapterWrap::Tensors>("tensors"),
                           InstanceMethod<&AdapterWrap::Params>("params"),
                           InstanceMethod<&AdapterWrap::Grads>("grads"),
                           InstanceMethod<&AdapterWrap::Moments>("moments"),
                           InstanceMethod<&AdapterWrap::ReadParams>("readParams"),
                           InstanceMethod<&AdapterWrap::WriteParams>("writeParams"),
                           InstanceMethod<&AdapterWrap::ReadGrads>("readGrads"),
                           InstanceMethod<&AdapterWrap::ReadMoments>("readMoments"),
                           InstanceMethod<&AdapterWrap::WriteMoments>("writeMoments"),
                           InstanceMethod<&AdapterWrap::ZeroGrad>("zeroGrad"),
                           InstanceMethod<&AdapterWrap::GradNorm>("gradNorm"),
                           InstanceMethod<&AdapterWrap::AdamwStep>("adamwStep"),
                       });
  }

  explicit AdapterWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<AdapterWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(env.GetInstanceData<AddonData>()->model.Value()))
      throw type_error(env, "new LoraAdapter(model, spec): model must be a Model");
    if (!info[1].IsObject()) throw type_error(env, "new LoraAdapter(model, spec): spec must be an object");
    model_ = Napi::ObjectWrap<ModelWrap>::Unwrap(info[0].As<Napi::Object>());
    model_ref_ = Napi::Persistent(info[0].As<Napi::Object>());
    Napi::Object o = info[1].As<Napi::Object>();
    LoraSpec spec;
    spec.rank = static_cast<int>(int_arg(o.Get("rank"), "rank", 1, 1 << 16));
    spec.scale = num_field(o, "scale", 1.0);
    spec.dropout = num_field(o, "dropout", 0.0);
    spec.targets = lora_targets_arg(o.Get("targets"));
    BusyGuard guard(env, model_->busy());
    try {
      if (model_->is_f32())
        a32_ = model_->f32()->new_adapter(spec);
      else
        a64_ = model_->f64()->new_adapter(spec);
    } catch (const std::invalid_argument& e) {
      throw Napi::RangeError::New(env, e.what());
    } catch (const std::runtime_error& e) {
      throw Napi::Error::New(env, e.what());
    }
  }

  std::shared_ptr<LoraAdapter<float>> f32() const { return a32_; }
  std::shared_ptr<LoraAdapter<double>> f64() const { return a64_; }
  ModelWrap* model() const { return model_; }

  template <typename F>
  Napi::Value with_buffers(F&& f) {
    if (a32_) return f(a32_->buffers(), a32_->backend()->host_memory());
    return f(a64_->buffers(), a64_->backend()->host_memory());
  }

 private:
  const LoraSpec& spec() const { return a32_ ? a32_->spec() : a64_->spec(); }
  Napi::Value Rank(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), spec().rank); }
  Napi::Value Scale(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), spec().scale); }
  Napi::Value Dropout(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), spec().dropout); }
  Napi::Value Targets(const Napi::CallbackInfo& info) {
    Napi::Array out = Napi::Array::New(info.Env());
    for (int t = 0; t < kLoraTargets; t++)
      if ((spec().targets >> t) & 1u) out.Set(out.Length(), Napi::String::New(info.Env(), lora_target_name(t)));
    return out;
  }
  Napi::Value NumParams(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(a32_ ? a32_->num_params() : a64_->num_params()));
  }
  Napi::Value Tensors(const Napi::CallbackInfo& info) { return tensors_value(info.Env(), a32_ ? a32_->tensors() : a64_->tensors()); }
  Napi::Value call(const Napi::CallbackInfo& info, BufferCall c) { return buffer_method(info, model_->busy(), model_->device(), c, *this); }
  Napi::Value Params(const Napi::CallbackInfo& info) { return call(info, BufferCall::view_params); }
  Napi::Value Grads(const Napi::CallbackInfo& info) { return call(info, BufferCall::view_grads); }
  Napi::Value Moments(const Napi::CallbackInfo& info) { return call(info, BufferCall::view_moments); }
  Napi::Value ReadParams(const Napi::CallbackInfo& info) { return call(info, BufferCall::read_params); }
  Napi::Value WriteParams(const Napi::CallbackInfo& info) { return call(info, BufferCall::write_params); }
  Napi::Value ReadGrads(const Napi::CallbackInfo& info) { return call(info, BufferCall::read_grads); }
  Napi::Value ReadMoments(const Napi::CallbackInfo& info) { return call(info, BufferCall::read_moments); }
  Napi::Value WriteMoments(const Napi::CallbackInfo& info) { return call(info, BufferCall::write_moments); }
  Napi::Value ZeroGrad(const Napi::CallbackInfo& info) { return call(info, BufferCall::zero_grad); }
  Napi::Value GradNorm(const Napi::CallbackInfo& info) { return call(info, BufferCall::grad_norm); }
  Napi::Value AdamwStep(const Napi::CallbackInfo& info) { return call(info, BufferCall::adamw_step); }

  ModelWrap* model_ = nullptr;
  Napi::ObjectReference model_ref_;
  std::shared_ptr<LoraAdapter<float>> a32_;
  std::shared_ptr<LoraAdapter<double>> a64_;
};

// The adapter argument of setAdapter and Generation: an AdapterWrap of `model`, or null.
AdapterWrap* adapter_arg(const Napi::Value& v, ModelWrap* model, const char* what) {
  if (v.IsUndefined() || v.IsNull()) return nullptr;
  if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(v.Env().GetInstanceData<AddonData>()->adapter.Value()))
    throw type_error(v.Env(), std::string(what) + " must be a LoraAdapter or null");
  AdapterWrap* a = Napi::ObjectWrap<AdapterWrap>::Unwrap(v.As<Napi::Object>());
  if (a->model() != model) throw Napi::Error::New(v.Env(), std::string(what) + ": the LoRA adapter was made for another model");
  return a;
}

Napi::Value ModelWrap::SetAdapter(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  BusyGuard guard(env, busy_);
  AdapterWrap* a = adapter_arg(info[0], this, "setAdapter");
  if (f32_) f32_->set_adapter(a ? a->f32() : nullptr);
  else f64_->set_adapter(a ? a->f64() : nullptr);
  adapter_ref_.Reset();
  if (a) adapter_ref_ = Napi::Persistent(info[0].As<Napi::Object>());
  return env.Undefined();
}

// ---- Constraint ----

// new Constraint({vocabSize, start, states: Int32Array, rowStart: Int32Array, entries: Int32Array}):
// a grammar's token automaton (models/grammar/token-automaton.ts), checked and copied once, then
// shared by every generation that samples under it.
class ConstraintWrap : public Napi::ObjectWrap<ConstraintWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Constraint", {InstanceAccessor<&ConstraintWrap::NumStates>("numStates")});
  }

  explicit ConstraintWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ConstraintWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) throw type_error(env, "new Constraint(automaton): automaton must be an object");
    Napi::Object o = info[0].As<Napi::Object>();
    auto ints = [&](const char* key) {
      Napi::Int32Array a = int32_arg(o.Get(key), std::string("automaton.") + key);
      return std::vector<int32_t>(a.Data(), a.Data() + a.ElementLength());
    };
    try {
      automaton_ = std::make_shared<const TokenConstraint>(static_cast<int32_t>(int_arg(o.Get("vocabSize"), "automaton.vocabSize", 1)),
                                                           static_cast<int32_t>(int_arg(o.Get("start"), "automaton.start", 0)), ints("states"),
                                                           ints("rowStart"), ints("entries"));
    } catch (const std::invalid_argument& e) {
      throw Napi::RangeError::New(env, e.what());
    }
  }

  std::shared_ptr<const TokenConstraint> automaton() const { return automaton_; }

 private:
  Napi::Value NumStates(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), automaton_->num_states()); }

  std::shared_ptr<const TokenConstraint> automaton_;
};
// ---- Generation ----

const char* finish_name(Finish f) {
  switch (f) {
    case Finish::stop_token:
      return "stop_token";
    case Finish::length:
      return "length";
    case Finish::stopped:
      return "stopped";
    default:
      return nullptr;
  }
}

class GenerationWrap : public Napi::ObjectWrap<GenerationWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Generation",
                       {
                           InstanceAccessor<&GenerationWrap::Size>("size"),
                           InstanceAccessor<&GenerationWrap::Running>("running"),
                           InstanceMethod<&GenerationWrap::Step>("step"),
                           InstanceMethod<&GenerationWrap::StepAsync>("stepAsync"),
                           InstanceMethod<&GenerationWrap::Stop>("stop"),
                           InstanceMethod<&GenerationWrap::Result>("result"),
                       });
  }

  // new Generation(model, prompts: Int32Array[], {maxNewTokens, temperature, topK, topP, seed, seeds, stopTokenIds,
  //                constraints, budgets})
  // seeds (one per prompt) gives each sequence its own stream; else sequence i uses seed + i.
  // constraints (one per prompt, a Constraint or null) masks each step to the grammar's tokens;
  // budgets (one per prompt, default maxNewTokens) is what each constrained sequence must finish within.
  explicit GenerationWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<GenerationWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(env.GetInstanceData<AddonData>()->model.Value()))
      throw type_error(env, "new Generation(model, prompts, options): model must be a Model");
    model_ = Napi::ObjectWrap<ModelWrap>::Unwrap(info[0].As<Napi::Object>());
    model_ref_ = Napi::Persistent(info[0].As<Napi::Object>());
    if (!info[1].IsArray()) throw type_error(env, "prompts must be an array of Int32Array");
    Napi::Array arr = info[1].As<Napi::Array>();
    std::vector<std::vector<int32_t>> prompts;
    for (uint32_t i = 0; i < arr.Length(); i++) {
      Napi::Int32Array p = int32_arg(arr.Get(i), "prompts[" + std::to_string(i) + "]");
      prompts.emplace_back(p.Data(), p.Data() + p.ElementLength());
    }
    Napi::Object o = info[2].IsObject() ? info[2].As<Napi::Object>() : Napi::Object::New(env);
    SamplingParams sp;
    sp.temperature = num_field(o, "temperature", 1.0);
    sp.top_k = static_cast<int>(num_field(o, "topK", 0));
    sp.top_p = num_field(o, "topP", 1.0);
    const int max_new = static_cast<int>(int_arg(o.Get("maxNewTokens"), "maxNewTokens", 1));
    const double seed = num_field(o, "seed", 0);
    std::vector<uint64_t> seeds;
    Napi::Value seeds_v = o.Get("seeds");
    if (!seeds_v.IsUndefined() && !seeds_v.IsNull()) {
      if (!seeds_v.IsArray() || seeds_v.As<Napi::Array>().Length() != prompts.size())
        throw type_error(env, "seeds must be an array with one seed per prompt");
      Napi::Array sa = seeds_v.As<Napi::Array>();
      for (uint32_t i = 0; i < sa.Length(); i++) seeds.push_back(static_cast<uint64_t>(int_arg(sa.Get(i), "seeds[i]", 0, INT64_C(1) << 53)));
    } else {
      for (size_t i = 0; i < prompts.size(); i++) seeds.push_back(static_cast<uint64_t>(static_cast<int64_t>(seed)) + i);
    }
    std::vector<int32_t> stops;
    Napi::Value sv = o.Get("stopTokenIds");
    if (!sv.IsUndefined() && !sv.IsNull()) {
      if (!sv.IsArray()) throw type_error(env, "stopTokenIds must be an array of numbers");
      Napi::Array sa = sv.As<Napi::Array>();
      for (uint32_t i = 0; i < sa.Length(); i++) stops.push_back(static_cast<int32_t>(int_arg(sa.Get(i), "stopTokenIds[i]", 0)));
    }
    // The adapter it decodes with: options.adapter (null: the base model alone), else the one the
    // model has now; each step runs with it, whatever the model has attached meanwhile.
    Napi::Value av = o.Get("adapter");
    if (!av.IsUndefined()) {
      AdapterWrap* a = adapter_arg(av, model_, "adapter");
      if (a) adapter_ref_ = Napi::Persistent(av.As<Napi::Object>());
      lora32_ = a ? a->f32() : nullptr;
      lora64_ = a ? a->f64() : nullptr;
    } else {
      lora32_ = model_->is_f32() ? model_->f32()->adapter() : nullptr;
      lora64_ = model_->is_f32() ? nullptr : model_->f64()->adapter();
    }
    std::vector<SequenceConstraint> constraints = constraint_args(o, prompts.size(), max_new);
    // softThinking?: {steps, tau?, topP?}
    SoftThinking soft;
    Napi::Value stv = o.Get("softThinking");
    if (!stv.IsUndefined() && !stv.IsNull()) {
      if (!stv.IsObject()) throw type_error(env, "softThinking must be an object {steps, tau?, topP?}");
      Napi::Object so = stv.As<Napi::Object>();
      soft.steps = static_cast<int>(int_arg(so.Get("steps"), "softThinking.steps", 0));
      soft.tau = num_field(so, "tau", 1.0);
      soft.top_p = num_field(so, "topP", 0.9);
    }
    BusyGuard guard(env, model_->busy());
    AdapterScope scope(*this);
    try {
      if (model_->is_f32())
        g32_ = std::make_unique<Generation<float>>(*model_->f32(), std::move(prompts), sp, seeds, max_new, std::move(stops), std::move(constraints), soft);
      else
        g64_ = std::make_unique<Generation<double>>(*model_->f64(), std::move(prompts), sp, seeds, max_new, std::move(stops), std::move(constraints), soft);
    } catch (const std::invalid_argument& e) {
      throw Napi::RangeError::New(env, e.what());
    } catch (const std::out_of_range& e) {
      throw Napi::RangeError::New(env, e.what());
    }
  }

 private:
  // Attaches the generation's adapter to the model for the scope, then the one that was there.
  class AdapterScope {
   public:
    explicit AdapterScope(GenerationWrap& g) : g_(g) {
      if (g_.model_->is_f32()) {
        prev32_ = g_.model_->f32()->adapter();
        g_.model_->f32()->set_adapter(g_.lora32_);
      } else {
        prev64_ = g_.model_->f64()->adapter();
        g_.model_->f64()->set_adapter(g_.lora64_);
      }
    }
    ~AdapterScope() {
      if (g_.model_->is_f32()) g_.model_->f32()->set_adapter(prev32_);
      else g_.model_->f64()->set_adapter(prev64_);
    }

   private:
    GenerationWrap& g_;
    std::shared_ptr<LoraAdapter<float>> prev32_;
    std::shared_ptr<LoraAdapter<double>> prev64_;
  };

  int do_step(int n) {
    AdapterScope scope(*this);
    return g32_ ? g32_->step(n) : g64_->step(n);
  }
  static std::vector<SequenceConstraint> constraint_args(const Napi::Object& o, size_t n, int max_new) {
    Napi::Env env = o.Env();
    std::vector<SequenceConstraint> out;
    Napi::Value cv = o.Get("constraints");
    if (cv.IsUndefined() || cv.IsNull()) return out;
    if (!cv.IsArray() || cv.As<Napi::Array>().Length() != n) throw type_error(env, "constraints must be an array with one Constraint (or null) per prompt");
    Napi::Value bv = o.Get("budgets");
    const bool budgets = !bv.IsUndefined() && !bv.IsNull();
    if (budgets && (!bv.IsArray() || bv.As<Napi::Array>().Length() != n)) throw type_error(env, "budgets must be an array with one number per prompt");
    Napi::Array ca = cv.As<Napi::Array>();
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value c = ca.Get(i);
      SequenceConstraint sc;
      if (!c.IsUndefined() && !c.IsNull()) {
        if (!c.IsObject() || !c.As<Napi::Object>().InstanceOf(env.GetInstanceData<AddonData>()->constraint.Value()))
          throw type_error(env, "constraints[" + std::to_string(i) + "] must be a Constraint or null");
        sc.automaton = Napi::ObjectWrap<ConstraintWrap>::Unwrap(c.As<Napi::Object>())->automaton();
        sc.budget = budgets ? static_cast<int>(int_arg(bv.As<Napi::Array>().Get(i), "budgets[" + std::to_string(i) + "]", 1)) : max_new;
      }
      out.push_back(std::move(sc));
    }
    return out;
  }

  int size() const { return g32_ ? g32_->size() : g64_->size(); }

  Napi::Value Size(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), size()); }
  Napi::Value Running(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), g32_ ? g32_->running() : g64_->running()); }

  Napi::Value Step(const Napi::CallbackInfo& info) {
    BusyGuard guard(info.Env(), model_->busy());
    const int n = static_cast<int>(int_arg(info[0], "steps", 1));
    return Napi::Number::New(info.Env(), do_step(n));
  }

  Napi::Value StepAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, model_->busy());
    const int n = static_cast<int>(int_arg(info[0], "steps", 1));
    auto running = std::make_shared<int>(0);
    Task* task = new Task(
        env, info.This().As<Napi::Object>(), guard.release(), [this, n, running] { *running = do_step(n); },
        [running](Napi::Env e) -> Napi::Value { return Napi::Number::New(e, *running); });
    Napi::Promise p = task->promise();
    task->Queue();
    return p;
  }

  Napi::Value Stop(const Napi::CallbackInfo& info) {
    BusyGuard guard(info.Env(), model_->busy());
    const int i = static_cast<int>(int_arg(info[0], "index", 0, size() - 1));
    g32_ ? g32_->stop(i) : g64_->stop(i);
    return info.Env().Undefined();
  }

  // result(i) -> {tokens: Int32Array, logprobs: Float32Array, finishReason}
  Napi::Value Result(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, model_->busy());
    const int i = static_cast<int>(int_arg(info[0], "index", 0, size() - 1));
    const std::vector<int32_t>& t = g32_ ? g32_->tokens(i) : g64_->tokens(i);
    const std::vector<float>& lp = g32_ ? g32_->logprobs(i) : g64_->logprobs(i);
    const char* reason = finish_name(g32_ ? g32_->finish(i) : g64_->finish(i));
    Napi::Object o = Napi::Object::New(env);
    o.Set("tokens", copy_of(env, t.data(), t.size()));
    o.Set("logprobs", copy_of(env, lp.data(), lp.size()));
    o.Set("finishReason", reason ? Napi::Value(Napi::String::New(env, reason)) : env.Null());
    const SoftTrace& st = g32_ ? g32_->soft(i) : g64_->soft(i);
    if (st.size() > 0) {
      Napi::Object so = Napi::Object::New(env);
      so.Set("offsets", copy_of(env, st.offsets.data(), st.offsets.size()));
      so.Set("ids", copy_of(env, st.ids.data(), st.ids.size()));
      so.Set("noised", copy_of(env, st.noised.data(), st.noised.size()));
      so.Set("weights", copy_of(env, st.weights.data(), st.weights.size()));
      so.Set("argmax", copy_of(env, st.argmax.data(), st.argmax.size()));
      o.Set("soft", so);
    }
    return o;
  }

  ModelWrap* model_ = nullptr;
  Napi::ObjectReference model_ref_, adapter_ref_;
  std::shared_ptr<LoraAdapter<float>> lora32_;
  std::shared_ptr<LoraAdapter<double>> lora64_;
  std::unique_ptr<Generation<float>> g32_;
  std::unique_ptr<Generation<double>> g64_;
};

// ---- module functions ----

// gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc): C = alpha op(A) op(B) + beta C
template <typename T>
void gemm_typed(const Napi::CallbackInfo& info, bool ta, bool tb, int M, int N, int K, int64_t lda, int64_t ldb, int64_t ldc) {
  Napi::Env env = info.Env();
  auto A = info[6].As<Napi::TypedArrayOf<T>>();
  auto B = info[8].As<Napi::TypedArrayOf<T>>();
  auto C = info[11].As<Napi::TypedArrayOf<T>>();
  auto need = [](int rows, int cols, int64_t ld) { return rows == 0 ? 0 : static_cast<size_t>((rows - 1) * ld + cols); };
  if (A.ElementLength() < need(ta ? K : M, ta ? M : K, lda) || B.ElementLength() < need(tb ? N : K, tb ? K : N, ldb) ||
      C.ElementLength() < need(M, N, ldc))
    throw Napi::RangeError::New(env, "gemm: an array is too small for its shape and leading dimension");
  cpu::gemm<T>(*shared_pool(), ta, tb, M, N, K, static_cast<T>(info[5].As<Napi::Number>().DoubleValue()), A.Data(), lda, B.Data(), ldb,
               static_cast<T>(info[10].As<Napi::Number>().DoubleValue()), C.Data(), ldc);
}

Napi::Value Gemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const bool ta = info[0].ToBoolean().Value(), tb = info[1].ToBoolean().Value();
  const int M = static_cast<int>(int_arg(info[2], "M", 0)), N = static_cast<int>(int_arg(info[3], "N", 0)),
            K = static_cast<int>(int_arg(info[4], "K", 0));
  const int64_t lda = int_arg(info[7], "lda", 1), ldb = int_arg(info[9], "ldb", 1), ldc = int_arg(info[12], "ldc", 1);
  if (!info[5].IsNumber() || !info[10].IsNumber()) throw type_error(env, "gemm: alpha and beta must be numbers");
  if (!info[6].IsTypedArray() || !info[8].IsTypedArray() || !info[11].IsTypedArray())
    throw type_error(env, "gemm: A, B and C must be typed arrays");
  const napi_typedarray_type t = info[6].As<Napi::TypedArray>().TypedArrayType();
  if (info[8].As<Napi::TypedArray>().TypedArrayType() != t || info[11].As<Napi::TypedArray>().TypedArrayType() != t)
    throw type_error(env, "gemm: A, B and C must have the same type");
  if (t == napi_float32_array)
    gemm_typed<float>(info, ta, tb, M, N, K, lda, ldb, ldc);
  else if (t == napi_float64_array)
    gemm_typed<double>(info, ta, tb, M, N, K, lda, ldb, ldc);
  else
    throw type_error(env, "gemm: arrays must be Float32Array or Float64Array");
  return env.Undefined();
}

Napi::Value GetIsa(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("current", cpu::isa_name(cpu::current_isa()));
  o.Set("best", cpu::isa_name(cpu::detect_isa()));
  return o;
}

Napi::Value SetIsa(const Napi::CallbackInfo& info) {
  const std::string name = info[0].ToString().Utf8Value();
  cpu::Isa isa;
  if (name == "avx512")
    isa = cpu::Isa::avx512;
  else if (name == "avx2")
    isa = cpu::Isa::avx2;
  else if (name == "generic")
    isa = cpu::Isa::generic;
  else
    throw type_error(info.Env(), "setIsa: expected avx512, avx2 or generic (got " + name + ")");
  try {
    cpu::set_isa(isa);
  } catch (const std::exception& e) {
    throw Napi::RangeError::New(info.Env(), e.what());
  }
  return info.Env().Undefined();
}

Napi::Value Threads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), shared_pool()->size()); }

// setThreads(n): the pool for models created from now on (0: one per hardware thread).
Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  const int threads = static_cast<int>(int_arg(info[0], "threads", 0, 1024));
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_threads = threads;
  g_pool.reset();
  return info.Env().Undefined();
}

Napi::Value PeakGflops(const Napi::CallbackInfo& info) {
  const double seconds = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 0.5;
  return Napi::Number::New(info.Env(), cpu::measure_peak_gflops(*shared_pool(), seconds));
}

// cuda() -> {built, available, reason?, name?, memoryBytes?, computeCapability?, driverVersion?, runtimeVersion?, cublas?}
Napi::Value Cuda(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const CudaStatus& s = cuda_status();
  Napi::Object o = Napi::Object::New(env);
  o.Set("built", s.built);
  o.Set("available", s.available);
  if (!s.available) o.Set("reason", s.reason);
  if (!s.name.empty()) {
    o.Set("name", s.name);
    o.Set("memoryBytes", static_cast<double>(s.memory_bytes));
    o.Set("computeCapability", std::to_string(s.compute_major) + "." + std::to_string(s.compute_minor));
  }
  if (s.driver_version) o.Set("driverVersion", s.driver_version);
  if (s.runtime_version) o.Set("runtimeVersion", s.runtime_version);
  if (!s.cublas.empty()) o.Set("cublas", s.cublas);
  return o;
}

// cudaGemmSeconds(mode, ta, tb, M, N, K, reps) -> seconds per product (benchmarks)
Napi::Value CudaGemmSeconds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string mode = info[0].ToString().Utf8Value();
  const int M = static_cast<int>(int_arg(info[3], "M", 1)), N = static_cast<int>(int_arg(info[4], "N", 1)), K = static_cast<int>(int_arg(info[5], "K", 1));
  const int reps = static_cast<int>(int_arg(info[6], "reps", 1, 100000));
  try {
    return Napi::Number::New(env, cuda_gemm_seconds(mode, info[1].ToBoolean().Value(), info[2].ToBoolean().Value(), M, N, K, reps));
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

// cudaProfile("start") starts timing each kind of GPU kernel (every CUDA model; each timed kernel is
// waited for); cudaProfile("stop") stops and returns [{what, calls, seconds}].
Napi::Value CudaProfile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string action = info[0].ToString().Utf8Value();
  try {
    if (action == "start") {
      cuda_profile_start();
      return env.Undefined();
    }
    if (action != "stop") throw type_error(env, "cudaProfile: expected start or stop (got " + action + ")");
    const std::vector<CudaProfileEntry> entries = cuda_profile_stop();
    Napi::Array out = Napi::Array::New(env, entries.size());
    for (size_t i = 0; i < entries.size(); i++) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("what", entries[i].what);
      o.Set("calls", static_cast<double>(entries[i].calls));
      o.Set("seconds", entries[i].seconds);
      out.Set(i, o);
    }
    return out;
  } catch (const std::runtime_error& e) {
    throw Napi::Error::New(env, e.what());
  }
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Napi::Function model = ModelWrap::Define(env);
  Napi::Function constraint = ConstraintWrap::Define(env);
  auto* data = new AddonData();
  data->model = Napi::Persistent(model);
  data->constraint = Napi::Persistent(constraint);
  env.SetInstanceData<AddonData>(data);
  exports.Set("Model", model);
  Napi::Function adapter = AdapterWrap::Define(env);
  data->adapter = Napi::Persistent(adapter);
  exports.Set("LoraAdapter", adapter);
  exports.Set("Generation", GenerationWrap::Define(env));
  exports.Set("Constraint", constraint);
  exports.Set("gemm", Napi::Function::New(env, Gemm, "gemm"));
  exports.Set("isa", Napi::Function::New(env, GetIsa, "isa"));
  exports.Set("setIsa", Napi::Function::New(env, SetIsa, "setIsa"));
  exports.Set("threads", Napi::Function::New(env, Threads, "threads"));
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("peakGflops", Napi::Function::New(env, PeakGflops, "peakGflops"));
  exports.Set("cuda", Napi::Function::New(env, Cuda, "cuda"));
  exports.Set("cudaGemmSeconds", Napi::Function::New(env, CudaGemmSeconds, "cudaGemmSeconds"));
  exports.Set("cudaProfile", Napi::Function::New(env, CudaProfile, "cudaProfile"));
  return exports;
}

}  // namespace

NODE_API_MODULE(socialworld_native, Init)

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
  Napi::FunctionReference model;
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

 private:
  Napi::Value Dtype(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), f32_ ? "float32" : "float64"); }
  Napi::Value Device(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), device_); }
  Napi::Value Precision(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), precision_); }

  // Zero-copy views exist only where the model's memory is the host's.
  template <typename M>
  void require_host(M& m, const char* what, const char* instead) {
    if (!m.backend().host_memory())
      throw Napi::Error::New(Env(), std::string(what) + "() is a view over host memory, and this model lives on the " + device_ + " device: use " +
                                        instead + " instead");
  }

  Napi::Value NumParams(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) -> Napi::Value { return Napi::Number::New(info.Env(), static_cast<double>(m.num_params())); });
  }

  Napi::Value Tensors(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return visit([&](auto& m) -> Napi::Value {
      const auto& ts = m.tensors();
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
    });
  }

  Napi::Value Params(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) {
      require_host(m, "params", "readParams()/writeParams()");
      return view_of(info.Env(), m.params_storage(), m.num_params());
    });
  }

  Napi::Value Grads(const Napi::CallbackInfo& info) {
    return visit([&](auto& m) {
      require_host(m, "grads", "readGrads()");
      return view_of(info.Env(), m.grads_storage(), m.num_params());
    });
  }

  Napi::Value Moments(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return visit([&](auto& m) -> Napi::Value {
      require_host(m, "moments", "readMoments()/writeMoments()");
      Napi::Object o = Napi::Object::New(env);
      o.Set("m", view_of(env, m.m_storage(), m.num_params()));
      o.Set("v", view_of(env, m.v_storage(), m.num_params()));
      return o;
    });
  }

  // [offset, offset + length) of the flat buffers; length defaults to the rest.
  template <typename M>
  std::pair<size_t, size_t> range_args(M& m, const Napi::CallbackInfo& info, size_t first) {
    const int64_t total = static_cast<int64_t>(m.num_params());
    const int64_t offset = info.Length() > first && !info[first].IsUndefined() ? int_arg(info[first], "offset", 0, total) : 0;
    const int64_t length =
        info.Length() > first + 1 && !info[first + 1].IsUndefined() ? int_arg(info[first + 1], "length", 0, total - offset) : total - offset;
    return {static_cast<size_t>(offset), static_cast<size_t>(length)};
  }

  template <typename M>
  static Napi::Value read_copy(Napi::Env env, M& m, typename std::remove_reference_t<M>::Buffer which, size_t offset, size_t n) {
    using T = std::remove_reference_t<decltype(*m.params())>;
    auto out = Napi::TypedArrayOf<T>::New(env, n);
    if (n) m.read(which, offset, n, out.Data());
    return out;
  }

  // The typed array `v` of the model's element type, written at `offset`.
  template <typename M>
  static void write_from(Napi::Env env, M& m, typename std::remove_reference_t<M>::Buffer which, const Napi::Value& v, size_t offset,
                         const char* what) {
    using T = std::remove_reference_t<decltype(*m.params())>;
    const bool f32 = std::is_same_v<T, float>;
    auto arr = typed_arg<Napi::TypedArrayOf<T>>(v, f32 ? napi_float32_array : napi_float64_array, f32 ? "Float32Array" : "Float64Array",
                                                std::string(what) + " (the model's dtype)");
    if (offset > m.num_params() || arr.ElementLength() > m.num_params() - offset)
      throw Napi::RangeError::New(env, std::string(what) + ": " + std::to_string(arr.ElementLength()) + " values at offset " + std::to_string(offset) +
                                           " run past the " + std::to_string(m.num_params()) + " parameters");
    if (arr.ElementLength()) m.write(which, offset, arr.ElementLength(), arr.Data());
  }

  // (offset?, length?) of the parameters, or of the gradients -> a copy
  Napi::Value read_range(const Napi::CallbackInfo& info, bool grads) {
    BusyGuard guard(info.Env(), busy_);
    return visit([&](auto& m) -> Napi::Value {
      using B = typename std::remove_reference_t<decltype(m)>::Buffer;
      auto [offset, n] = range_args(m, info, 0);
      return read_copy(info.Env(), m, grads ? B::grads : B::params, offset, n);
    });
  }

  // readParams(offset?, length?) -> a copy
  Napi::Value ReadParams(const Napi::CallbackInfo& info) { return read_range(info, false); }

  // writeParams(values, offset?)
  Napi::Value WriteParams(const Napi::CallbackInfo& info) {
    BusyGuard guard(info.Env(), busy_);
    visit([&](auto& m) -> Napi::Value {
      const size_t offset = info.Length() > 1 && !info[1].IsUndefined() ? static_cast<size_t>(int_arg(info[1], "offset", 0, INT64_C(1) << 50)) : 0;
      write_from(info.Env(), m, std::remove_reference_t<decltype(m)>::Buffer::params, info[0], offset, "writeParams");
      return info.Env().Undefined();
    });
    return info.Env().Undefined();
  }

  // readGrads(offset?, length?) -> a copy
  Napi::Value ReadGrads(const Napi::CallbackInfo& info) { return read_range(info, true); }

  // readMoments() -> {m, v}, copies
  Napi::Value ReadMoments(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, busy_);
    return visit([&](auto& m) -> Napi::Value {
      using B = typename std::remove_reference_t<decltype(m)>::Buffer;
      Napi::Object o = Napi::Object::New(env);
      o.Set("m", read_copy(env, m, B::m, 0, m.num_params()));
      o.Set("v", read_copy(env, m, B::v, 0, m.num_params()));
      return o;
    });
  }

  // writeMoments(m, v): both whole buffers
  Napi::Value WriteMoments(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, busy_);
    visit([&](auto& m) -> Napi::Value {
      using B = typename std::remove_reference_t<decltype(m)>::Buffer;
      for (int i = 0; i < 2; i++)
        if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().ElementLength() != m.num_params())
          throw Napi::RangeError::New(env, std::string("writeMoments: ") + (i ? "v" : "m") + " must hold all " + std::to_string(m.num_params()) + " values");
      write_from(env, m, B::m, info[0], 0, "writeMoments");
      write_from(env, m, B::v, info[1], 0, "writeMoments");
      return env.Undefined();
    });
    return env.Undefined();
  }

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
    // The policy-gradient head (an options object was given): temperature, entropies, entropy term.
    bool policy = false, want_entropy = false, has_entropy_weights = false;
    double temperature = 1.0;
    // The policy head's masks: each position's (offset, length) into mask_tokens.
    std::vector<int32_t> mask_rows, mask_tokens;
    bool has_masks = false;
  };

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
    // options: {temperature?, entropy?: boolean, entropyWeights?: Float32Array, masks?: {rows: Int32Array, tokens: Int32Array}}
    if (info.Length() > 6 && !info[6].IsUndefined() && !info[6].IsNull()) {
      if (!info[6].IsObject()) throw type_error(env, "options must be an object");
      Napi::Object o = info[6].As<Napi::Object>();
      a.policy = true;
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
    std::vector<T> logp, entropy;
  };

  template <typename T>
  static void run_pass(Qwen2Model<T>& m, const PassArgs& a, PassOut<T>& out) {
    const size_t n = static_cast<size_t>(a.batch) * a.seq_len;
    out.logp.assign(n, T(0));
    const float* w = a.has_weights ? a.weights.data() : nullptr;
    if (!a.policy) {
      out.loss = m.forward_backward(a.tokens.data(), a.targets.data(), w, a.batch, a.seq_len, out.logp.data(), a.backward);
      return;
    }
    if (a.want_entropy) out.entropy.assign(n, T(0));
    const PolicyMasks masks = a.has_masks ? PolicyMasks{a.mask_rows.data(), a.mask_tokens.data(), a.mask_tokens.size()} : PolicyMasks{};
    out.loss = m.forward_backward_policy(a.tokens.data(), a.targets.data(), w, a.has_entropy_weights ? a.entropy_weights.data() : nullptr,
                                         a.temperature, masks, a.batch, a.seq_len, out.logp.data(), a.want_entropy ? out.entropy.data() : nullptr,
                                         a.backward);
  }

  template <typename T>
  static Napi::Value pass_result(Napi::Env env, const PassArgs& a, const PassOut<T>& out) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("loss", out.loss);
    o.Set("logprobs", copy_of(env, out.logp.data(), out.logp.size()));
    if (a.want_entropy) o.Set("entropy", copy_of(env, out.entropy.data(), out.entropy.size()));
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

  Napi::Value ZeroGrad(const Napi::CallbackInfo& info) {
    BusyGuard guard(info.Env(), busy_);
    visit([&](auto& m) -> Napi::Value {
      m.zero_grad();
      return info.Env().Undefined();
    });
    return info.Env().Undefined();
  }

  Napi::Value GradNorm(const Napi::CallbackInfo& info) {
    BusyGuard guard(info.Env(), busy_);
    return visit([&](auto& m) -> Napi::Value { return Napi::Number::New(info.Env(), m.grad_norm()); });
  }

  // adamwStep({lr, beta1, beta2, eps, weightDecay, step, gradScale})
  Napi::Value AdamwStep(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    BusyGuard guard(env, busy_);
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
    visit([&](auto& m) -> Napi::Value {
      m.adamw_step(a);
      return env.Undefined();
    });
    return env.Undefined();
  }

  std::unique_ptr<Qwen2Model<float>> f32_;
  std::unique_ptr<Qwen2Model<double>> f64_;
  std::string device_, precision_;
  std::atomic<bool> busy_{false};
};

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
    std::vector<SequenceConstraint> constraints = constraint_args(o, prompts.size(), max_new);
    BusyGuard guard(env, model_->busy());
    try {
      if (model_->is_f32())
        g32_ = std::make_unique<Generation<float>>(*model_->f32(), std::move(prompts), sp, seeds, max_new, std::move(stops), std::move(constraints));
      else
        g64_ = std::make_unique<Generation<double>>(*model_->f64(), std::move(prompts), sp, seeds, max_new, std::move(stops), std::move(constraints));
    } catch (const std::invalid_argument& e) {
      throw Napi::RangeError::New(env, e.what());
    } catch (const std::out_of_range& e) {
      throw Napi::RangeError::New(env, e.what());
    }
  }

 private:
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

  int do_step(int n) { return g32_ ? g32_->step(n) : g64_->step(n); }
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
    return o;
  }

  ModelWrap* model_ = nullptr;
  Napi::ObjectReference model_ref_;
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

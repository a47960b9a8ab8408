// Batched autoregressive generation with a KV cache. Prompts of different lengths share one
// cache (a slot per sequence, each at its own position), so no padding is ever computed.
// Decoding advances in steps that the caller drives, so it can stop a sequence whose text
// reached a stop string (only the caller can decode text).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model.h"
#include "sampler.h"

namespace sw {

enum class Finish { running = 0, stop_token, length, stopped };

// A grammar a sequence must follow: its token automaton, and the tokens it must finish within
// (at most maxNewTokens; the sampler keeps to what can still be finished in the tokens left).
struct SequenceConstraint {
  std::shared_ptr<const TokenConstraint> automaton;
  int budget = 0;
};

template <typename T>
class Generation {
 public:
  // Sequence i samples from its own stream seeds[i] (so its tokens do not depend on the rest of
  // the batch); seeds holds one seed per prompt.
  // `constraints` is empty or holds one per prompt (a null automaton: that sequence is free).
  Generation(Qwen2Model<T>& model, std::vector<std::vector<int32_t>> prompts, const SamplingParams& params, const std::vector<uint64_t>& seeds,
             int max_new_tokens, std::vector<int32_t> stop_tokens, std::vector<SequenceConstraint> constraints = {});

  // Runs up to `steps` decoding steps (the first call also reads the prompts and samples each
  // sequence's first token). Returns how many sequences are still running.
  int step(int steps);
  // Ends sequence i now (the caller found a stop string).
  void stop(int i);

  int size() const { return static_cast<int>(seqs_.size()); }
  int running() const;
  const std::vector<int32_t>& tokens(int i) const { return seqs_.at(i).tokens; }
  const std::vector<float>& logprobs(int i) const { return seqs_.at(i).logprobs; }
  Finish finish(int i) const { return seqs_.at(i).finish; }

 private:
  struct Seq {
    std::vector<int32_t> prompt;
    std::vector<int32_t> tokens;  // generated
    std::vector<float> logprobs;
    int cached = 0;  // tokens in the KV cache
    Finish finish = Finish::running;
    Rng64 rng;
    SequenceConstraint constraint{};
    int32_t state = 0;  // in the constraint's automaton
  };
  void prefill();
  void accept(int i, const T* logits);

  Qwen2Model<T>& model_;
  SamplingParams params_;
  int max_new_;
  std::vector<int32_t> stop_tokens_;
  std::vector<Seq> seqs_;
  KvCache<T> cache_;
  bool started_ = false;
  std::vector<T> logits_;
  std::vector<std::pair<double, int32_t>> scratch_;
  std::vector<uint8_t> is_stop_;
  std::vector<int32_t> allowed_, allowed_next_;
};

}  // namespace sw

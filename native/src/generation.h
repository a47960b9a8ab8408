// Batched autoregressive generation with a KV cache. Prompts of different lengths share one
// cache (a slot per sequence, each at its own position), so no padding is ever computed.
// Decoding advances in steps that the caller drives, so it can stop a sequence whose text
// reached a stop string (only the caller can decode text).
#pragma once

#include <algorithm>
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

// Soft thinking (SofT-GRPO): each sequence's first `steps` outputs are soft tokens instead of
// sampled ones. From the logits z of its last position: p = softmax(z / temperature), S = its
// top-p support (the most likely tokens whose mass first reaches top_p), lp_i = log(p_i / p(S)),
// q'_i = lp_i + g_i with g_i standard Gumbel noise drawn from the sequence's stream, and
// y = softmax(q' / tau) over S; the next input is the mixture sum_i y_i embed[i]. Then the
// sequence samples its reply (under its grammar, if any) as usual, maxNewTokens tokens at most.
struct SoftThinking {
  int steps = 0;
  double tau = 1.0;
  double top_p = 0.9;
};

// One sequence's soft tokens: token j's support is ids[offsets[j] .. offsets[j + 1]) (most likely
// first), with its noised logits q' (noised) and mixture weights y (weights), and argmax, the
// token of its largest weight (what the thinking reads as, for people).
struct SoftTrace {
  std::vector<int32_t> offsets{0}, ids, argmax;
  std::vector<float> noised, weights;
  int size() const { return static_cast<int>(argmax.size()); }
};

template <typename T>
class Generation {
 public:
  // Sequence i samples from its own stream seeds[i] (so its tokens do not depend on the rest of
  // the batch); seeds holds one seed per prompt.
  // `constraints` is empty or holds one per prompt (a null automaton: that sequence is free).
  Generation(Qwen2Model<T>& model, std::vector<std::vector<int32_t>> prompts, const SamplingParams& params, const std::vector<uint64_t>& seeds,
             int max_new_tokens, std::vector<int32_t> stop_tokens, std::vector<SequenceConstraint> constraints = {},
             const SoftThinking& soft = {});

  // Runs up to `steps` decoding steps (the first call also reads the prompts and samples each
  // sequence's first token). Returns how many sequences are still running.
  int step(int steps);
  // Ends sequence i now (the caller found a stop string).
  void stop(int i);

  int size() const { return static_cast<int>(seqs_.size()); }
  int running() const;
  const std::vector<int32_t>& tokens(int i) const { return seqs_.at(i).tokens; }
  const std::vector<float>& logprobs(int i) const { return seqs_.at(i).logprobs; }
  const SoftTrace& soft(int i) const { return seqs_.at(i).soft; }
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
    SoftTrace soft{};
    bool soft_pending = false;  // its last soft token is the next input
  };
  // Makes sequence s's next soft token from its logits row z (host memory).
  void soft_token(Seq& s, const T* z);
  void prefill();
  // The tokens sequence s may generate: maxNewTokens, or its grammar's budget when smaller.
  int limit(const Seq& s) const { return s.constraint.automaton ? std::min(max_new_, s.constraint.budget) : max_new_; }
  // Runs the rows through the model and samples a token for each sequence in out_seqs from the
  // logits of its row in out_rows.
  void advance(const std::vector<int32_t>& tokens, const std::vector<int32_t>& seq, const std::vector<int32_t>& pos,
               const std::vector<int32_t>& out_rows, const std::vector<int32_t>& out_seqs, const SoftInputs& soft_in = {});

  Qwen2Model<T>& model_;
  SamplingParams params_;
  SoftThinking soft_;
  int max_new_;
  std::vector<int32_t> stop_tokens_;
  std::vector<Seq> seqs_;
  KvCache<T> cache_;
  bool started_ = false;
  std::shared_ptr<T> logits_;  // backend memory, [logit_rows_, vocab]
  int logit_rows_ = 0;
  std::vector<uint8_t> is_stop_;
  // Per row of a step: a grammar's allowed tokens and their next states, what each row may draw
  // from (null tokens: the whole vocabulary), its random number, and what it drew.
  struct Mask {
    std::vector<int32_t> tokens, next;
  };
  std::vector<Mask> masks_;
  std::vector<Candidates> allowed_;
  std::vector<double> uniforms_;
  std::vector<Sample> samples_;
  std::vector<T> host_logits_;  // a row, where the backend's memory is not the host's
  std::vector<std::pair<double, int32_t>> order_;
};

}  // namespace sw

// Token sampling: temperature, top-k and top-p (nucleus) over one row of logits, or over the
// tokens a grammar allows there (TokenConstraint), with a seeded generator per sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sw {

struct SamplingParams {
  double temperature = 1.0;  // 0: greedy (argmax)
  int top_k = 0;             // 0: no limit
  double top_p = 1.0;        // 1: no limit
};

// xoshiro256** seeded through splitmix64: a stream per (seed, sequence) so that a sequence's
// samples do not depend on what else is in the batch.
class Rng64 {
 public:
  Rng64(uint64_t seed, uint64_t stream);
  uint64_t next();
  double uniform();  // [0, 1), 53 random bits

 private:
  uint64_t s_[4];
};

struct Sample {
  int32_t token;
  // log softmax(logits / temperature)[token] over the candidates (before top-k / top-p): the
  // whole vocabulary, or a grammar's allowed tokens (the masked distribution the token was drawn
  // from; 0 when only one was allowed), the quantity a policy-gradient ratio needs; for greedy
  // decoding, at temperature 1.
  double logprob;
  // The token's position among the candidates (its id when they are the whole vocabulary).
  int32_t index;
};

// The tokens a row may draw from: `tokens` (n ids, increasing but for a grammar's stop tokens at
// the end), or the whole vocabulary when `tokens` is null.
struct Candidates {
  const int32_t* tokens = nullptr;
  int n = 0;
};

// The one sampler every backend uses. Draws one token from softmax(logits / temperature) over the
// candidates, applying, in Hugging Face's order: temperature, top-k, then top-p on the
// distribution that top-k left (renormalised), and picks the candidate where `uniform` (in
// [0, 1), the sequence's next Rng64::uniform(); unused when greedy or when one token is allowed)
// falls in their cumulative mass, best first. `scratch` is reused between calls.
template <typename T>
Sample sample_token(const T* logits, int vocab, Candidates allowed, const SamplingParams& params, double uniform,
                    std::vector<std::pair<double, int32_t>>& scratch);

// A grammar's token automaton, as models/grammar/token-automaton.ts lays it out (CSR):
// per state {row, count, room, stride, distance, accepts}; row r's entries are
// [row_start[r], row_start[r + 1]), each {token, target, units, lo, hi}. An entry applies when
// lo <= count <= hi; its next state is target (units < 0) or state + min(units, room) * stride +
// target (a token that stays inside a counted string, whose states share rows).
class TokenConstraint {
 public:
  static constexpr int kStateFields = 6;
  static constexpr int kEntryFields = 5;

  // Checks the layout (every row and absolute target in range, tokens below vocab_size).
  TokenConstraint(int32_t vocab_size, int32_t start, std::vector<int32_t> states, std::vector<int32_t> row_start, std::vector<int32_t> entries);

  int32_t vocab_size() const { return vocab_size_; }
  int32_t start() const { return start_; }
  int32_t num_states() const { return static_cast<int32_t>(states_.size() / kStateFields); }
  // Tokens to the end from `state` (an upper bound).
  int32_t distance(int32_t state) const { return states_[static_cast<size_t>(state) * kStateFields + 4]; }

  // The tokens allowed in `state` with `remaining` tokens left, this one included: the entries
  // that apply and whose next state can still finish in remaining - 1 tokens (stop tokens never
  // inside the text), then the stop tokens when the state accepts (next state -1). `tokens`
  // comes out increasing except for the stop tokens at its end.
  void allowed(int32_t state, int remaining, const std::vector<int32_t>& stops, const std::vector<uint8_t>& is_stop, std::vector<int32_t>& tokens,
               std::vector<int32_t>& next) const;

 private:
  int32_t vocab_size_, start_;
  std::vector<int32_t> states_, row_start_, entries_;
};

}  // namespace sw

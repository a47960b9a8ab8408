// Token sampling: temperature, top-k and top-p (nucleus) over one row of logits, with a seeded
// generator per sequence.
#pragma once

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
  // log softmax(logits / temperature)[token] over the whole vocabulary (before top-k / top-p),
  // the quantity a policy-gradient ratio needs; for greedy decoding, at temperature 1.
  double logprob;
};

// Draws one token. Applies, in Hugging Face's order: temperature, top-k, then top-p on the
// distribution that top-k left (renormalised), and picks the candidate where `uniform` (in [0, 1),
// the sequence's next Rng64::uniform(); unused when greedy) falls in their cumulative mass, best
// first. `scratch` is reused between calls.
template <typename T>
Sample sample_token(const T* logits, int vocab, const SamplingParams& params, double uniform, std::vector<std::pair<double, int32_t>>& scratch);

}  // namespace sw

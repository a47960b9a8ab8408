#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace sw {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng64::Rng64(uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ splitmix64(stream);
  for (uint64_t& s : s_) s = splitmix64(x);
}

uint64_t Rng64::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

template <typename T>
Sample sample_token(const T* logits, int vocab, const SamplingParams& params, double uniform, std::vector<std::pair<double, int32_t>>& scratch) {
  if (vocab <= 0) throw std::invalid_argument("empty vocabulary");
  const bool greedy = params.temperature <= 0;
  const double temp = greedy ? 1.0 : params.temperature;
  // log-sum-exp of logits / temperature over the whole vocabulary
  double m = -INFINITY;
  int32_t best = 0;
  for (int i = 0; i < vocab; i++) {
    const double z = logits[i] / temp;
    if (z > m) {
      m = z;
      best = i;
    }
  }
  double sum = 0;
  for (int i = 0; i < vocab; i++) sum += std::exp(logits[i] / temp - m);
  const double lse = m + std::log(sum);
  if (greedy) return {best, logits[best] - lse};

  // Candidates, best first. Without top-k, a nucleus almost always lies in the best few
  // hundred tokens: try those before sorting the whole vocabulary.
  auto by_logit = [](const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  scratch.resize(vocab);
  for (int i = 0; i < vocab; i++) scratch[i] = {logits[i] / temp, i};
  const bool limit_k = params.top_k > 0 && params.top_k < vocab;
  const bool limit_p = params.top_p < 1.0;
  int n = vocab;
  if (limit_k) {
    n = params.top_k;
    std::partial_sort(scratch.begin(), scratch.begin() + n, scratch.end(), by_logit);
  } else if (limit_p) {
    int head = std::min(vocab, 1024);
    std::partial_sort(scratch.begin(), scratch.begin() + head, scratch.end(), by_logit);
    double mass = 0;
    for (int i = 0; i < head; i++) mass += std::exp(scratch[i].first - lse);
    if (mass < params.top_p && head < vocab) std::sort(scratch.begin() + head, scratch.end(), by_logit);
  }
  // Probabilities over the first n candidates, renormalised (top-k), then the nucleus.
  const double top = limit_k || limit_p ? scratch[0].first : m;
  double total = 0;
  for (int i = 0; i < n; i++) total += std::exp(scratch[i].first - top);
  if (limit_p) {
    double cum = 0;
    int keep = 0;
    while (keep < n) {
      cum += std::exp(scratch[keep].first - top) / total;
      keep++;
      if (cum >= params.top_p) break;
    }
    n = keep;
    total = 0;
    for (int i = 0; i < n; i++) total += std::exp(scratch[i].first - top);
  }
  const double u = uniform * total;
  double acc = 0;
  int32_t token = scratch[n - 1].second;
  for (int i = 0; i < n; i++) {
    acc += std::exp(scratch[i].first - top);
    if (u < acc) {
      token = scratch[i].second;
      break;
    }
  }
  return {token, logits[token] / temp - lse};
}

template Sample sample_token<float>(const float*, int, const SamplingParams&, double, std::vector<std::pair<double, int32_t>>&);
template Sample sample_token<double>(const double*, int, const SamplingParams&, double, std::vector<std::pair<double, int32_t>>&);

}  // namespace sw

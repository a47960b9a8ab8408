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

namespace {

// Draws a position from scratch[0, n) = (logit / temperature, position), given the log-sum-exp
// of all n: top-k, then top-p, then where `uniform` falls. Reorders scratch.
int32_t draw(std::vector<std::pair<double, int32_t>>& scratch, int n, double m, double lse, const SamplingParams& params, double uniform) {
  // Candidates, best first. Without top-k, a nucleus almost always lies in the best few
  // hundred tokens: try those before sorting the whole vocabulary.
  auto by_logit = [](const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  const int vocab = n;
  const bool limit_k = params.top_k > 0 && params.top_k < vocab;
  const bool limit_p = params.top_p < 1.0;
  if (limit_k) {
    n = params.top_k;
    std::partial_sort(scratch.begin(), scratch.begin() + n, scratch.begin() + vocab, by_logit);
  } else if (limit_p) {
    int head = std::min(vocab, 1024);
    std::partial_sort(scratch.begin(), scratch.begin() + head, scratch.begin() + vocab, by_logit);
    double mass = 0;
    for (int i = 0; i < head; i++) mass += std::exp(scratch[i].first - lse);
    if (mass < params.top_p && head < vocab) std::sort(scratch.begin() + head, scratch.begin() + vocab, by_logit);
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
  int32_t pick = scratch[n - 1].second;
  for (int i = 0; i < n; i++) {
    acc += std::exp(scratch[i].first - top);
    if (u < acc) {
      pick = scratch[i].second;
      break;
    }
  }
  return pick;
}

}  // namespace

template <typename T>
Sample sample_token(const T* logits, int vocab, Candidates allowed, const SamplingParams& params, double uniform,
                    std::vector<std::pair<double, int32_t>>& scratch) {
  const bool all = allowed.tokens == nullptr;
  const int n = all ? vocab : allowed.n;
  if (n <= 0) throw std::logic_error(all ? "empty vocabulary" : "no token is allowed here");
  auto token_at = [&](int i) { return all ? i : allowed.tokens[i]; };
  const bool greedy = params.temperature <= 0;
  const double temp = greedy ? 1.0 : params.temperature;
  // log-sum-exp of logits / temperature over the candidates
  double m = -INFINITY;
  int32_t best = 0;
  scratch.resize(n);
  for (int i = 0; i < n; i++) {
    const double z = logits[token_at(i)] / temp;
    scratch[i] = {z, i};
    if (z > m) {
      m = z;
      best = i;
    }
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += std::exp(scratch[i].first - m);
  const double lse = m + std::log(sum);
  const int32_t pick = greedy || n == 1 ? best : draw(scratch, n, m, lse, params, uniform);
  const int32_t token = token_at(pick);
  return {token, n == 1 ? 0.0 : logits[token] / temp - lse, pick};
}

TokenConstraint::TokenConstraint(int32_t vocab_size, int32_t start, std::vector<int32_t> states, std::vector<int32_t> row_start,
                                 std::vector<int32_t> entries)
    : vocab_size_(vocab_size), start_(start), states_(std::move(states)), row_start_(std::move(row_start)), entries_(std::move(entries)) {
  if (states_.empty() || states_.size() % kStateFields != 0) throw std::invalid_argument("constraint: states must hold 6 numbers per state");
  if (entries_.size() % kEntryFields != 0) throw std::invalid_argument("constraint: entries must hold 5 numbers per entry");
  if (row_start_.empty() || row_start_.front() != 0 || static_cast<size_t>(row_start_.back()) * kEntryFields != entries_.size())
    throw std::invalid_argument("constraint: rowStart does not match the entries");
  for (size_t r = 1; r < row_start_.size(); r++)
    if (row_start_[r] < row_start_[r - 1]) throw std::invalid_argument("constraint: rowStart must not decrease");
  const int32_t S = num_states();
  const int32_t rows = static_cast<int32_t>(row_start_.size()) - 1;
  if (start_ < 0 || start_ >= S) throw std::invalid_argument("constraint: the start state is out of range");
  for (int32_t s = 0; s < S; s++) {
    const int32_t row = states_[static_cast<size_t>(s) * kStateFields];
    if (row < -1 || row >= rows) throw std::invalid_argument("constraint: a state's row is out of range");
  }
  for (size_t e = 0; e < entries_.size(); e += kEntryFields) {
    if (entries_[e] < 0 || entries_[e] >= vocab_size_) throw std::invalid_argument("constraint: an entry's token is outside the vocabulary");
    if (entries_[e + 2] < 0 && (entries_[e + 1] < 0 || entries_[e + 1] >= S)) throw std::invalid_argument("constraint: an entry's target is out of range");
  }
}

void TokenConstraint::allowed(int32_t state, int remaining, const std::vector<int32_t>& stops, const std::vector<uint8_t>& is_stop,
                              std::vector<int32_t>& tokens, std::vector<int32_t>& next) const {
  tokens.clear();
  next.clear();
  const int32_t* st = states_.data() + static_cast<size_t>(state) * kStateFields;
  const int32_t row = st[0], count = st[1], room = st[2], stride = st[3];
  const int32_t S = num_states();
  if (row >= 0) {
    for (int32_t e = row_start_[row]; e < row_start_[row + 1]; e++) {
      const int32_t* en = entries_.data() + static_cast<size_t>(e) * kEntryFields;
      if (count < en[3] || count > en[4]) continue;
      const int32_t to = en[2] < 0 ? en[1] : state + std::min(en[2], room) * stride + en[1];
      if (to < 0 || to >= S || states_[static_cast<size_t>(to) * kStateFields + 4] > remaining - 1) continue;
      if (static_cast<size_t>(en[0]) < is_stop.size() && is_stop[en[0]]) continue;
      tokens.push_back(en[0]);
      next.push_back(to);
    }
  }
  if (st[5] == 1) {
    for (int32_t t : stops) {
      tokens.push_back(t);
      next.push_back(-1);
    }
  }
}

template Sample sample_token<float>(const float*, int, Candidates, const SamplingParams&, double, std::vector<std::pair<double, int32_t>>&);
template Sample sample_token<double>(const double*, int, Candidates, const SamplingParams&, double, std::vector<std::pair<double, int32_t>>&);

}  // namespace sw

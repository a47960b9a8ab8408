#include "generation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sw {

namespace {
// Prompt tokens per prefill pass: long enough for efficient matrix products, short enough to
// bound the activations.
constexpr int kPrefillRows = 512;
}  // namespace

template <typename T>
Generation<T>::Generation(Qwen2Model<T>& model, std::vector<std::vector<int32_t>> prompts, const SamplingParams& params,
                          const std::vector<uint64_t>& seeds, int max_new_tokens, std::vector<int32_t> stop_tokens,
                          std::vector<SequenceConstraint> constraints, const SoftThinking& soft)
    : model_(model), params_(params), soft_(soft), max_new_(max_new_tokens), stop_tokens_(std::move(stop_tokens)) {
  if (soft.steps < 0) throw std::invalid_argument("soft thinking steps must be >= 0");
  if (soft.steps > 0) {
    if (!(soft.tau > 0) || !std::isfinite(soft.tau)) throw std::invalid_argument("soft thinking's tau must be a positive number");
    if (!(soft.top_p > 0 && soft.top_p <= 1)) throw std::invalid_argument("soft thinking's topP must be in (0, 1]");
    if (!(params.temperature > 0)) throw std::invalid_argument("soft thinking needs a positive temperature");
  }
  if (prompts.empty()) throw std::invalid_argument("no prompts to generate from");
  if (seeds.size() != prompts.size()) throw std::invalid_argument("one seed per prompt is needed");
  if (max_new_tokens <= 0) throw std::invalid_argument("maxNewTokens must be positive");
  if (params.top_k < 0) throw std::invalid_argument("topK must be >= 0");
  if (!(params.top_p > 0 && params.top_p <= 1)) throw std::invalid_argument("topP must be in (0, 1]");
  if (!(params.temperature >= 0)) throw std::invalid_argument("temperature must be >= 0");
  const int V = model.config().vocab_size;
  is_stop_.assign(V, 0);
  for (int32_t t : stop_tokens_) {
    if (t < 0 || t >= V) throw std::out_of_range("stop token " + std::to_string(t) + " is outside the vocabulary");
    is_stop_[t] = 1;
  }
  if (!constraints.empty() && constraints.size() != prompts.size()) throw std::invalid_argument("one constraint (or none) per prompt is needed");
  for (size_t i = 0; i < constraints.size(); i++) {
    const SequenceConstraint& c = constraints[i];
    if (!c.automaton) continue;
    const std::string which = "constraint " + std::to_string(i);
    if (c.automaton->vocab_size() > V)
      throw std::invalid_argument(which + " was compiled for " + std::to_string(c.automaton->vocab_size()) + " tokens, more than the model's " + std::to_string(V));
    if (stop_tokens_.empty()) throw std::invalid_argument(which + ": constrained decoding needs a stop token");
    const int budget = std::min(c.budget, max_new_tokens);
    if (budget < 1) throw std::invalid_argument(which + ": the budget must be at least 1 token");
    if (c.automaton->distance(c.automaton->start()) > budget)
      throw std::invalid_argument(which + " needs up to " + std::to_string(c.automaton->distance(c.automaton->start())) + " tokens to finish, more than its budget of " +
                                  std::to_string(budget));
  }
  size_t longest = 0;
  for (size_t i = 0; i < prompts.size(); i++) {
    if (prompts[i].empty()) throw std::invalid_argument("prompt " + std::to_string(i) + " is empty");
    for (int32_t t : prompts[i])
      if (t < 0 || t >= V)
        throw std::out_of_range("prompt " + std::to_string(i) + " has token id " + std::to_string(t) + " outside the vocabulary [0, " +
                                std::to_string(V) + ")");
    longest = std::max(longest, prompts[i].size());
    seqs_.push_back(Seq{std::move(prompts[i]), {}, {}, 0, Finish::running, Rng64(seeds[i], 0)});
    if (!constraints.empty() && constraints[i].automaton) {
      seqs_.back().constraint = constraints[i];
      seqs_.back().state = constraints[i].automaton->start();
    }
  }
  // The last sampled token never enters the cache.
  cache_ = model.new_cache(static_cast<int>(seqs_.size()), static_cast<int>(longest) + soft.steps + max_new_tokens - 1);
}

template <typename T>
int Generation<T>::running() const {
  int n = 0;
  for (const Seq& s : seqs_) n += s.finish == Finish::running;
  return n;
}

template <typename T>
void Generation<T>::advance(const std::vector<int32_t>& tokens, const std::vector<int32_t>& seq, const std::vector<int32_t>& pos,
                            const std::vector<int32_t>& out_rows, const std::vector<int32_t>& out_seqs, const SoftInputs& soft_in) {
  const int V = model_.config().vocab_size;
  const int n = static_cast<int>(out_rows.size());
  if (n > logit_rows_) {
    logits_.reset();
    model_.backend().check_fits(static_cast<size_t>(n) * V * sizeof(T), "the logits of " + std::to_string(n) + " sequences");
    logits_ = model_.backend().alloc(static_cast<size_t>(n) * V);
    logit_rows_ = n;
  }
  model_.forward_cached(cache_, tokens.data(), seq.data(), pos.data(), static_cast<int>(tokens.size()), out_rows.data(), n, logits_.get(), soft_in);
  // Sequences still thinking make a soft token; the others sample below.
  bool sampling = false;
  for (int j = 0; j < n; j++) {
    Seq& s = seqs_[out_seqs[j]];
    if (s.soft.size() >= soft_.steps) {
      sampling = true;
      continue;
    }
    const T* z = logits_.get() + static_cast<int64_t>(j) * V;
    if (!model_.backend().host_memory()) {
      host_logits_.resize(V);
      model_.backend().download(host_logits_.data(), z, static_cast<size_t>(V) * sizeof(T));
      z = host_logits_.data();
    }
    soft_token(s, z);
  }
  if (!sampling) return;
  // A constrained sequence draws only what its grammar allows and can still finish within its
  // budget. Each sequence draws from its own stream, one number per sampled token (none for a
  // token its grammar forces), so its tokens do not depend on the rest of the batch.
  if (static_cast<int>(masks_.size()) < n) masks_.resize(n);
  allowed_.assign(n, Candidates{});
  uniforms_.assign(n, 0.0);
  for (int j = 0; j < n; j++) {
    Seq& s = seqs_[out_seqs[j]];
    if (s.soft_pending) {
      // This row made a soft token above: its sample is not used (and draws no random number).
      continue;
    }
    if (const TokenConstraint* grammar = s.constraint.automaton.get()) {
      Mask& mask = masks_[j];
      grammar->allowed(s.state, limit(s) - static_cast<int>(s.tokens.size()), stop_tokens_, is_stop_, mask.tokens, mask.next);
      allowed_[j] = {mask.tokens.data(), static_cast<int>(mask.tokens.size())};
    }
    if (params_.temperature > 0 && allowed_[j].n != 1) uniforms_[j] = s.rng.uniform();
  }
  samples_.resize(n);
  model_.backend().sample(logits_.get(), n, V, params_, allowed_.data(), uniforms_.data(), samples_.data());
  for (int j = 0; j < n; j++) {
    Seq& s = seqs_[out_seqs[j]];
    if (s.soft_pending) continue;
    const Sample& smp = samples_[j];
    if (allowed_[j].tokens) s.state = masks_[j].next[smp.index];
    s.tokens.push_back(smp.token);
    s.logprobs.push_back(static_cast<float>(smp.logprob));
    if (is_stop_[smp.token])
      s.finish = Finish::stop_token;
    else if (static_cast<int>(s.tokens.size()) >= limit(s))
      s.finish = Finish::length;
  }
}

template <typename T>
void Generation<T>::prefill() {
  std::vector<int32_t> tokens, seq, pos, out_rows, out_seqs;
  auto flush = [&] {
    if (tokens.empty()) return;
    advance(tokens, seq, pos, out_rows, out_seqs);
    tokens.clear();
    seq.clear();
    pos.clear();
    out_rows.clear();
    out_seqs.clear();
  };
  for (int i = 0; i < size(); i++) {
    Seq& s = seqs_[i];
    while (s.cached < static_cast<int>(s.prompt.size())) {
      const int take = std::min<int>(static_cast<int>(s.prompt.size()) - s.cached, kPrefillRows - static_cast<int>(tokens.size()));
      for (int j = 0; j < take; j++) {
        tokens.push_back(s.prompt[s.cached + j]);
        seq.push_back(i);
        pos.push_back(s.cached + j);
      }
      s.cached += take;
      if (s.cached == static_cast<int>(s.prompt.size())) {
        out_rows.push_back(static_cast<int32_t>(tokens.size()) - 1);
        out_seqs.push_back(i);
      }
      if (static_cast<int>(tokens.size()) >= kPrefillRows) flush();
    }
  }
  flush();
}

template <typename T>
int Generation<T>::step(int steps) {
  if (!started_) {
    started_ = true;
    prefill();
    steps--;
  }
  std::vector<int32_t> tokens, seq, pos, rows, offsets, ids;
  std::vector<float> weights;
  for (int k = 0; k < steps; k++) {
    tokens.clear();
    seq.clear();
    pos.clear();
    rows.clear();
    offsets.assign(1, 0);
    ids.clear();
    weights.clear();
    bool soft = false;
    for (int i = 0; i < size(); i++) {
      Seq& s = seqs_[i];
      if (s.finish != Finish::running) continue;
      rows.push_back(static_cast<int32_t>(tokens.size()));
      seq.push_back(i);
      pos.push_back(s.cached);
      if (s.soft_pending) {
        // The last soft token's mixture is this row's input (its argmax a placeholder token).
        const SoftTrace& t = s.soft;
        const int j = t.size() - 1;
        tokens.push_back(t.argmax[j]);
        ids.insert(ids.end(), t.ids.begin() + t.offsets[j], t.ids.begin() + t.offsets[j + 1]);
        weights.insert(weights.end(), t.weights.begin() + t.offsets[j], t.weights.begin() + t.offsets[j + 1]);
        s.soft_pending = false;
        soft = true;
      } else {
        tokens.push_back(s.tokens.back());
      }
      offsets.push_back(static_cast<int32_t>(ids.size()));
    }
    if (tokens.empty()) break;
    for (int32_t i : seq) seqs_[i].cached++;
    advance(tokens, seq, pos, rows, seq, soft ? SoftInputs{offsets.data(), ids.data(), weights.data()} : SoftInputs{});
  }
  return running();
}

template <typename T>
void Generation<T>::soft_token(Seq& s, const T* z) {
  const int V = model_.config().vocab_size;
  const double inv_t = 1.0 / params_.temperature;
  // The distribution at the sampling temperature, best first.
  double m = -INFINITY;
  for (int i = 0; i < V; i++) m = std::max(m, static_cast<double>(z[i]) * inv_t);
  order_.resize(V);
  double sum = 0;
  for (int i = 0; i < V; i++) {
    const double e = std::exp(z[i] * inv_t - m);
    order_[i] = {e, i};
    sum += e;
  }
  std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  // The top-p support: the fewest most likely tokens whose mass reaches top_p.
  int n = 0;
  double mass = 0;
  while (n < V && (n == 0 || mass < soft_.top_p * sum)) mass += order_[n++].first;
  SoftTrace& t = s.soft;
  const double log_mass = std::log(mass);
  double qmax = -INFINITY;
  const size_t k0 = t.ids.size();
  for (int k = 0; k < n; k++) {
    // Standard Gumbel noise -log(-log U), U in (0, 1).
    double u = s.rng.uniform();
    if (u <= 0) u = 0x1p-60;
    const double g = -std::log(-std::log(u));
    const double q = std::log(order_[k].first) - log_mass + g;
    t.ids.push_back(order_[k].second);
    t.noised.push_back(static_cast<float>(q));
    qmax = std::max(qmax, q);
  }
  // y = softmax(q' / tau) from the recorded (float) q', as the training pass will see them.
  double ysum = 0;
  int best = 0;
  for (int k = 0; k < n; k++) {
    const double y = std::exp((t.noised[k0 + k] - qmax) / soft_.tau);
    t.weights.push_back(static_cast<float>(y));
    ysum += y;
    if (t.noised[k0 + k] > t.noised[k0 + best]) best = k;
  }
  for (int k = 0; k < n; k++) t.weights[k0 + k] = static_cast<float>(t.weights[k0 + k] / ysum);
  t.offsets.push_back(static_cast<int32_t>(t.ids.size()));
  t.argmax.push_back(t.ids[k0 + best]);
  s.soft_pending = true;
}

template <typename T>
void Generation<T>::stop(int i) {
  Seq& s = seqs_.at(i);
  if (s.finish == Finish::running) s.finish = Finish::stopped;
}

template class Generation<float>;
template class Generation<double>;

}  // namespace sw

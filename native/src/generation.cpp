#include "generation.h"

#include <algorithm>
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
                          std::vector<SequenceConstraint> constraints)
    : model_(model), params_(params), max_new_(max_new_tokens), stop_tokens_(std::move(stop_tokens)) {
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
  cache_ = model.new_cache(static_cast<int>(seqs_.size()), static_cast<int>(longest) + max_new_tokens - 1);
}

template <typename T>
int Generation<T>::running() const {
  int n = 0;
  for (const Seq& s : seqs_) n += s.finish == Finish::running;
  return n;
}

template <typename T>
void Generation<T>::advance(const std::vector<int32_t>& tokens, const std::vector<int32_t>& seq, const std::vector<int32_t>& pos,
                            const std::vector<int32_t>& out_rows, const std::vector<int32_t>& out_seqs) {
  const int V = model_.config().vocab_size;
  const int n = static_cast<int>(out_rows.size());
  if (n > logit_rows_) {
    logits_.reset();
    model_.backend().check_fits(static_cast<size_t>(n) * V * sizeof(T), "the logits of " + std::to_string(n) + " sequences");
    logits_ = model_.backend().alloc(static_cast<size_t>(n) * V);
    logit_rows_ = n;
  }
  model_.forward_cached(cache_, tokens.data(), seq.data(), pos.data(), static_cast<int>(tokens.size()), out_rows.data(), n, logits_.get());
  // A constrained sequence draws only what its grammar allows and can still finish within its
  // budget. Each sequence draws from its own stream, one number per sampled token (none for a
  // token its grammar forces), so its tokens do not depend on the rest of the batch.
  if (static_cast<int>(masks_.size()) < n) masks_.resize(n);
  allowed_.assign(n, Candidates{});
  uniforms_.assign(n, 0.0);
  for (int j = 0; j < n; j++) {
    Seq& s = seqs_[out_seqs[j]];
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
  std::vector<int32_t> tokens, seq, pos, rows;
  for (int k = 0; k < steps; k++) {
    tokens.clear();
    seq.clear();
    pos.clear();
    rows.clear();
    for (int i = 0; i < size(); i++) {
      Seq& s = seqs_[i];
      if (s.finish != Finish::running) continue;
      rows.push_back(static_cast<int32_t>(tokens.size()));
      tokens.push_back(s.tokens.back());
      seq.push_back(i);
      pos.push_back(s.cached);
    }
    if (tokens.empty()) break;
    for (int32_t i : seq) seqs_[i].cached++;
    advance(tokens, seq, pos, rows, seq);
  }
  return running();
}

template <typename T>
void Generation<T>::stop(int i) {
  Seq& s = seqs_.at(i);
  if (s.finish == Finish::running) s.finish = Finish::stopped;
}

template class Generation<float>;
template class Generation<double>;

}  // namespace sw
